// The NCCL backend's processes: one forked child per rank (rank i on GPU i, as nccl-tests lays them
// out; with fewer GPUs than ranks, ranks that share no communicator share a GPU: gpu_assignment.h). Every child dies
// with the launcher (PR_SET_PDEATHSIG) and is killed and reaped at the end.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "backend.h"
#include "collmc/replay/gpu_assignment.h"
#include "rank_body.h"
#include "signals.h"

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
  const char* name() const override { return "NCCL"; }

  std::string prepare(const ReplayPlan& plan, std::string& refusal, std::vector<std::string>& notes) override {
    const model::World& w = *plan.world;
    if (w.knobs.stream_progress == model::StreamProgress::Serialized)
      notes.push_back("stream_progress = serialized has no NCCL switch: the run used independent streams");
    if (w.knobs.profile == model::Profile::Mpi) {
      refusal = "an mpi-profile scenario: the NCCL backend does not run it (use --backend mpi)";
      return "";
    }
    int gpus = 0;
    std::string env = nccl_environment(&gpus);
    if (env.rfind("error", 0) == 0) {
      refusal = env.substr(7);
      return env;
    }
    const bool needs_one_sided =
        std::any_of(w.calls.begin(), w.calls.end(), [](const model::Call& c) { return model::is_one_sided(c.kind); });
    if (needs_one_sided && env.find(kOneSidedMark) == std::string::npos) {
      refusal = "the scenario uses one-sided calls (ncclPutSignal, ncclSignal, ncclWaitSignal), which this NCCL (" +
                env + ") does not have: they need 2.29 or later (put a newer libnccl.so.2 on LD_LIBRARY_PATH)";
      return env;
    }
    auto assignment = assign_gpus(w, gpus);
    if (!assignment) {
      refusal = std::to_string(w.ranks) + " ranks cannot share this machine's " + std::to_string(gpus) +
                " GPUs (NCCL rejects two ranks of one communicator on one GPU, and every way of placing them "
                "puts two ranks of a communicator together); shrink the scenario: collmc shrink --max-ranks " +
                std::to_string(gpus);
      return env;
    }
    gpu_of_rank_ = *assignment;
    if (w.ranks > gpus)
      notes.push_back("more ranks than GPUs: ranks that share no communicator share a GPU (" +
                      describe_gpu_assignment(gpu_of_rank_) + ")");
    return env;
  }

  void start(const ReplayPlan& plan, SharedMemory& shared, const ReplayOptions& options, const std::string&) override {
#ifdef COLLMC_HAVE_NCCL
    setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast stays off on the lent machines
    setenv("NCCL_RUNTIME_CONNECT", plan.world->knobs.runtime_connect ? "1" : "0", 1);
    SharedBlock* block = shared.block();  // the children inherit the mapping
    for (int r = 0; r < plan.world->ranks; ++r)
      pids_.push_back(spawn([&, r] {
        return run_nccl_rank(plan, r, gpu_of_rank_[static_cast<size_t>(r)], block, options.free_running);
      }));
#else
    (void)plan, (void)shared, (void)options;
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
  std::vector<pid_t> pids_;
  std::vector<int> gpu_of_rank_;  // from prepare
};

}  // namespace

std::unique_ptr<Backend> make_nccl_backend() { return std::make_unique<NcclBackend>(); }

std::string nccl_environment(int* gpus) {
  *gpus = 0;
  if (!nccl_backend_built()) return "error: this collmc was built without CUDA and NCCL (see docs/REPLAY.md)";
#ifdef COLLMC_HAVE_NCCL
  // CUDA must not be initialized in the launcher (the ranks are forked), so a child asks.
  SharedMemory m;
  char* text = m.block()->ranks[0].error;
  std::vector<pid_t> pids{spawn([&] {
    probe_nccl(text, sizeof m.block()->ranks[0].error);
    return 0;
  })};
  auto start = std::chrono::steady_clock::now();
  int status = 0;
  while (waitpid(pids[0], &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) {
      kill_and_reap(pids);
      return "error: probing the GPUs did not finish within 60 s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string out = text;
  if (out.empty()) return "error: probing the GPUs failed (NCCL or the CUDA driver could not be loaded)";
  if (out.rfind("error", 0) == 0) return out;
  *gpus = std::atoi(out.c_str());
  return out.substr(out.find(' ') + 1) + ", " + std::to_string(*gpus) + " GPU(s)";
#else
  return "";
#endif
}

}  // namespace collmc::replay
