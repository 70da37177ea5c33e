// The NCCL backend's processes: one forked child per rank (rank i on GPU i, as nccl-tests lays them
// out; with fewer GPUs than ranks, placed by nccl_support.h: ranks that share no communicator
// together, and from NCCL 2.30 ranks of one communicator together). Every child dies with the launcher
// (PR_SET_PDEATHSIG) and is killed and reaped at the end. The NCCL library is loaded by the children
// (nccl_library.h), never by the launcher.
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "backend.h"
#include "collmc/replay/nccl_support.h"
#include "rank_body.h"
#include "signals.h"
#ifdef COLLMC_HAVE_NCCL
#include "nccl_library.h"
#endif

namespace collmc::replay {

bool nccl_backend_built() {
#ifdef COLLMC_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

namespace {

// Forks `body` as a child that dies with this process; returns its pid.
template <class Body>
pid_t spawn(Body body) {
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(9);
    reset_interrupt_signals();
    int code = 1;
    try {
      code = body();
    } catch (...) {
      code = 1;
    }
    _exit(code);
  }
  return pid;
}

// Kills and reaps; returns the indices of the processes that were still running.
std::vector<int> kill_and_reap(std::vector<pid_t>& pids) {
  std::vector<int> alive;
  for (size_t i = 0; i < pids.size(); ++i)
    if (pids[i] > 0) {
      alive.push_back(static_cast<int>(i));
      kill(pids[i], SIGKILL);
    }
  for (pid_t& p : pids)
    if (p > 0) {
      waitpid(p, nullptr, 0);
      p = -1;
    }
  return alive;
}

class NcclBackend : public Backend {
 public:
  explicit NcclBackend(const ReplayOptions& options) : ranks_per_gpu_(options.ranks_per_gpu) {
    if (!options.nccl_library.empty()) setenv(kNcclLibraryVariable, options.nccl_library.c_str(), 1);
  }

  const char* name() const override { return "NCCL"; }

  std::string prepare(const ReplayPlan& plan, std::string& refusal, ReplayReport& report) override {
    const model::World& w = *plan.world;
    if (w.knobs.stream_progress == model::StreamProgress::Serialized)
      report.notes.push_back("stream_progress = serialized has no NCCL switch: the run used independent streams");
    if (w.knobs.profile == model::Profile::Mpi) {
      refusal = "an mpi-profile scenario: the NCCL backend does not run it (use --backend mpi)";
      return "";
    }
    if (refusal = grow_numbering_refusal(w); !refusal.empty()) return "";
    if (refusal = issue36_refusal(w); !refusal.empty()) return "";
    NcclProbe probe;
    const std::string why = probe_machine(probe);
    if (probe.version > 0) {  // loaded, whatever the GPUs said: the report names it
      report.nccl_version = nccl_version_text(probe.version);
      report.nccl_library = probe.library;
    }
    if (!why.empty()) {
      refusal = why;
      return probe.version > 0 ? "NCCL " + report.nccl_version + " (" + probe.library + ")" : "";
    }
    if (refusal = missing_function_refusal(w, probe); !refusal.empty()) return probe.describe();
    GpuPlacement placement = place_ranks(w, probe.gpus, probe.version, ranks_per_gpu_);
    if (!placement.refusal.empty()) {
      refusal = placement.refusal;
      return probe.describe();
    }
    gpu_of_rank_ = placement.gpu_of_rank;
    report.gpu_of_rank = placement.gpu_of_rank;
    report.placement = placement.describe();
    report.shared_gpu = placement.sharing();
    shares_comm_gpu_ = placement.comm_shares_gpu;
    std::vector<int> per_gpu(static_cast<size_t>(probe.gpus), 0);
    for (int g : gpu_of_rank_) more_than_two_per_gpu_ = more_than_two_per_gpu_ || ++per_gpu[static_cast<size_t>(g)] > 2;
    if (shares_comm_gpu_ && more_than_two_per_gpu_ && !std::getenv("NCCL_MAX_CTAS"))
      report.notes.push_back("more than two ranks on one GPU: NCCL_MAX_CTAS=8, as NCCL's env.rst advises");
    if (shares_comm_gpu_)
      report.notes.push_back(
          "ranks of one communicator share a GPU (" + report.shared_gpu +
          ", NCCL_MULTI_RANK_GPU_ENABLE=1, experimental in NCCL): a result on a shared GPU, not on separate GPUs");
    else if (w.ranks > probe.gpus)
      report.notes.push_back("more ranks than GPUs: ranks that share no communicator share a GPU (" + report.placement +
                             ")");
    return probe.describe();
  }

  void start(const ReplayPlan& plan, SharedMemory& shared, const ReplayOptions& options, const std::string&) override {
    setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast stays off on the lent machines
    setenv("NCCL_RUNTIME_CONNECT", plan.world->knobs.runtime_connect ? "1" : "0", 1);
    if (plan.world->knobs.rma_eager_init) setenv("NCCL_RMA_EAGER_INIT", "1", 1);
    // Only where the placement needs it: NCCL otherwise refuses two ranks of a comm on one GPU, as
    // it does for a user who did not ask.
    if (shares_comm_gpu_)
      setenv("NCCL_MULTI_RANK_GPU_ENABLE", "1", 1);
    else
      unsetenv("NCCL_MULTI_RANK_GPU_ENABLE");
    // NCCL's env.rst: each rank on a shared GPU takes its own channels, "up to 2 ranks per GPU" fit
    // with the defaults, and fewer CTAs per rank (NCCL_MAX_CTAS) prevent resource exhaustion (a hang
    // of NCCL's own). Beyond two, bound them unless the user chose a value.
    if (more_than_two_per_gpu_ && !std::getenv("NCCL_MAX_CTAS")) setenv("NCCL_MAX_CTAS", "8", 1);
#ifdef COLLMC_HAVE_NCCL
    SharedBlock* block = shared.block();  // the children inherit the mapping
    for (int r = 0; r < plan.world->ranks; ++r)
      pids_.push_back(spawn([&, r] {
        return run_nccl_rank(plan, r, gpu_of_rank_[static_cast<size_t>(r)], block, options.free_running);
      }));
#else
    (void)shared, (void)options;
#endif
  }

  bool running() override {
    bool any = false;
    for (pid_t& p : pids_) {
      if (p > 0 && waitpid(p, nullptr, WNOHANG) == p) p = 0;  // 0: exited and reaped (not killed)
      any = any || p > 0;
    }
    return any;
  }

  bool can_abort() const override { return true; }

  std::vector<int> stop(const SharedBlock&) override { return kill_and_reap(pids_); }

 private:
  int ranks_per_gpu_;
  std::vector<pid_t> pids_;
  std::vector<int> gpu_of_rank_;  // from prepare
  bool shares_comm_gpu_ = false;
  bool more_than_two_per_gpu_ = false;
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend(const ReplayOptions& options) {
  return std::make_unique<NcclBackend>(options);
}

std::string probe_machine(NcclProbe& probe) {
  if (!nccl_backend_built()) return "this collmc was built without CUDA and NCCL headers (see docs/REPLAY.md)";
#ifdef COLLMC_HAVE_NCCL
  // CUDA must not be initialized in the launcher (the ranks are forked), so a child asks and answers
  // through a pipe.
  int fds[2];
  if (pipe(fds) != 0) return "probing the GPUs: pipe failed";
  std::vector<pid_t> pids{spawn([&] {
    close(fds[0]);
    const std::string text = probe_nccl_here().to_text();
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = write(fds[1], text.data() + done, text.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    return 0;
  })};
  close(fds[1]);
  std::string text;
  const auto start = std::chrono::steady_clock::now();
  char buf[4096];
  while (true) {
    pollfd pfd{fds[0], POLLIN, 0};
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) {
      close(fds[0]);
      kill_and_reap(pids);
      return "probing the GPUs did not finish within 60 s";
    }
    if (poll(&pfd, 1, 100) <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  waitpid(pids[0], nullptr, 0);
  if (text.empty()) return "probing the GPUs failed (NCCL or the CUDA driver crashed the probe)";
  try {
    probe = NcclProbe::from_text(text);
  } catch (const std::exception& e) {
    return std::string("probing the GPUs: ") + e.what();
  }
  return probe.error;
#else
  (void)probe;
  return "";
#endif
}

void model_loaded_nccl(model::World& world, int loaded_version) {
  if (loaded_version <= 0 || world.knobs.profile != model::Profile::Nccl) return;
  const auto loaded = static_cast<uint32_t>(loaded_version);
  if (world.knobs.nccl_version == loaded) return;
  if (world.knobs.nccl_version_set) {
    world.notes.push_back("the scenario sets nccl_version = " + model::nccl_version_text(world.knobs.nccl_version) +
                          " and the replay loads NCCL " + model::nccl_version_text(loaded) +
                          ": a difference may be the releases'");
    return;
  }
  world.notes.push_back("checked at NCCL " + model::nccl_version_text(loaded) +
                        ", the release the replay loads (the scenario sets no nccl_version)");
  world.knobs.nccl_version = loaded;
}

std::string nccl_environment(int* gpus) {
  NcclProbe probe;
  *gpus = 0;
  if (std::string why = probe_machine(probe); !why.empty()) return "error: " + why;
  *gpus = probe.gpus;
  return probe.describe();
}

}  // namespace collmc::replay
