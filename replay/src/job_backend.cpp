// The backends whose rank processes another program starts (a job):
// - the MPI backend on one host (--launcher local): `mpirun --oversubscribe -np N collmc-mpi-rank
//   PLAN BLOCK`, the ranks coordinated through the shared block;
// - either backend through mpirun or srun on any number of nodes (--launcher mpirun|srun): the rank
//   program (collmc-mpi-rank --store, collmc-nccl-rank) coordinated through this process's TCP
//   store (store.h).
// The launcher runs in a session of its own. The ranks are its children (or its daemons'), not ours:
// each dies with its parent (PR_SET_PDEATHSIG); while the job runs this process is a child
// subreaper, so ranks orphaned by a killed mpirun are ours to reap. Stop: SIGTERM to the launcher
// (it then ends its ranks, on every node), SIGKILL to every process of its session (Open MPI gives
// each rank a process group of its own, so killpg would miss them), and everything reaped. Open MPI
// keeps its session directory and shared-memory segments in the run's private directory
// (orte_tmpdir_base, btl_vader_backing_directory), removed with it.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "backend.h"
#include "signals.h"
#include "store.h"

namespace collmc::replay {

namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& p) { return !p.empty() && access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }

// `variable` when set, else `program` on PATH.
std::string find_on_path(const char* variable, const char* program) {
  if (const char* e = std::getenv(variable); e && *e) return executable(e) ? e : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (executable(fs::path(dir) / program)) return (fs::path(dir) / program).string();
  return "";
}

std::string find_mpirun() { return find_on_path("COLLMC_MPIRUN", "mpirun"); }
std::string find_srun() { return find_on_path("COLLMC_SRUN", "srun"); }

// `variable` when set, else `program` next to this executable (collmc), else where this build put it.
std::string find_rank_program(const char* variable, const char* program, const char* built) {
  if (const char* e = std::getenv(variable); e && *e) return executable(e) ? e : "";
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && executable(self.parent_path() / program)) return (self.parent_path() / program).string();
  if (built && executable(built)) return built;
  return "";
}

#ifndef COLLMC_MPI_RANK_PATH
#define COLLMC_MPI_RANK_PATH nullptr
#endif
#ifndef COLLMC_NCCL_RANK_PATH
#define COLLMC_NCCL_RANK_PATH nullptr
#endif

std::string find_mpi_rank() { return find_rank_program("COLLMC_MPI_RANK", "collmc-mpi-rank", COLLMC_MPI_RANK_PATH); }
std::string find_nccl_rank() {
  return find_rank_program("COLLMC_NCCL_RANK", "collmc-nccl-rank", COLLMC_NCCL_RANK_PATH);
}

// A private file in `directory`; returns its path.
std::string private_file(const std::string& directory, const std::string& stem, const std::string& text) {
  std::string tmpl = (fs::path(directory) / (stem + "-XXXXXX")).string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file: " + std::string(std::strerror(errno)));
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = write(fd, p, left);
    if (n <= 0) {
      close(fd);
      unlink(tmpl.c_str());
      throw std::runtime_error("cannot write " + tmpl);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  close(fd);
  return tmpl;
}

bool alive(pid_t pid) { return pid > 0 && kill(pid, 0) == 0; }

// This process's environment for the job, with what mpirun and the ranks need and `extra`.
std::vector<std::string> job_environment(const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::pair<std::string, std::string>> set = extra;
  // Open MPI keeps allocations until exit: leak reports of sanitized ranks would be its own.
  const char* asan = std::getenv("ASAN_OPTIONS");
  set.emplace_back("ASAN_OPTIONS", std::string(asan ? asan : "") + (asan && *asan ? ":" : "") + "detect_leaks=0");
  if (geteuid() == 0) {  // CI runs as root; Open MPI refuses without both
    set.emplace_back("OMPI_ALLOW_RUN_AS_ROOT", "1");
    set.emplace_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (std::none_of(set.begin(), set.end(), [&](const auto& kv) { return kv.first == key; })) env.push_back(entry);
  }
  for (const auto& [k, v] : set) env.push_back(k + "=" + v);
  return env;
}

// The live (not zombie) processes of session `sid`, from /proc/PID/stat; with `zombies_of` > 0,
// the zombies of the session whose parent is `zombies_of` instead.
std::vector<pid_t> session_members(pid_t sid, pid_t zombies_of = 0) {
  std::vector<pid_t> out;
  if (sid <= 0) return out;
  for (const auto& entry : fs::directory_iterator("/proc", fs::directory_options::skip_permission_denied)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 1));
    char state = 0;
    long ppid = 0, pgrp = 0, session = 0;
    if (!(rest >> state >> ppid >> pgrp >> session) || session != sid) continue;
    if (zombies_of > 0 ? state == 'Z' && ppid == zombies_of : state != 'Z')
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

class JobBackend : public Backend {
 public:
  JobBackend(BackendKind kind, const ReplayOptions& options)
      : kind_(kind),
        launcher_(options.launcher),
        hosts_(options.hosts),
        launcher_args_(options.launcher_args),
        store_host_(options.store_host) {}

  ~JobBackend() override {
    if (server_) server_->stop();
    if (launcher_pid_ > 0) {
      for (pid_t p : session_members(session_)) kill(p, SIGKILL);
      waitpid(launcher_pid_, nullptr, 0);
    }
    remove_files();
  }

  const char* name() const override { return kind_ == BackendKind::Mpi ? "MPI" : "NCCL"; }

  std::string prepare(const ReplayPlan& plan, std::string& refusal, ReplayReport& report) override {
    const model::World& w = *plan.world;
    if (kind_ == BackendKind::Mpi) {
      if (w.knobs.profile != model::Profile::Mpi) {
        refusal =
            "an nccl-profile scenario: the MPI backend runs only `set profile = mpi` (its collectives block the "
            "host; NCCL's are stream-ordered)";
        return "";
      }
      if (!w.source || w.source->path.empty()) {
        refusal = "the MPI backend needs the scenario's file (the rank processes load it)";
        return "";
      }
      rank_path_ = find_mpi_rank();
      if (rank_path_.empty())
        refusal = "collmc-mpi-rank not found (build with MPI: libopenmpi-dev; or set COLLMC_MPI_RANK)";
    } else {
      if (w.knobs.profile == model::Profile::Mpi) {
        refusal = "an mpi-profile scenario: the NCCL backend does not run it (use --backend mpi)";
        return "";
      }
      if (w.knobs.stream_progress == model::StreamProgress::Serialized)
        report.notes.push_back("stream_progress = serialized has no NCCL switch: the run used independent streams");
      rank_path_ = find_nccl_rank();
      if (!nccl_backend_built())
        refusal = "this collmc was built without CUDA and NCCL (see docs/REPLAY.md)";
      else if (rank_path_.empty())
        refusal = "collmc-nccl-rank not found next to collmc (or set COLLMC_NCCL_RANK)";
    }
    launcher_path_ = launcher_ == LauncherKind::Srun ? find_srun() : find_mpirun();
    if (refusal.empty() && launcher_path_.empty())
      refusal = launcher_ == LauncherKind::Srun
                    ? "srun not found (run inside a Slurm allocation: salloc, sbatch; or set COLLMC_SRUN)"
                    : "mpirun not found (install openmpi-bin, or set COLLMC_MPIRUN)";
    if (refusal.empty() && kind_ == BackendKind::Nccl && on_this_host_only()) {
      // Ranks on this host's GPUs: one per GPU, or from NCCL 2.30 ranks of a comm sharing one.
      NcclProbe probe;
      if (std::string why = probe_machine(probe); !why.empty()) {
        refusal = why;
        return "";
      }
      report.nccl_version = nccl_version_text(probe.version);
      report.nccl_library = probe.library;
      if (refusal = missing_function_refusal(w, probe); !refusal.empty()) return probe.describe();
      // mpirun hands local ranks to GPUs in order (gpu_for_local_rank): what place_ranks would do
      // with the ranks of one comm per GPU is not guaranteed, so only "one per GPU" or "all share".
      if (probe.gpus < w.ranks) {
        if (probe.version < kNcclMultiRankGpuSince)
          refusal = "mpirun starts one rank per GPU and this host has " + std::to_string(probe.gpus) + " GPU(s) for " +
                    std::to_string(w.ranks) + " ranks, and NCCL " + report.nccl_version +
                    " rejects two ranks of one communicator on one GPU (name more nodes with --hosts, use --launcher "
                    "local, or load NCCL 2.30+ with --nccl LIB)";
        else
          share_gpus_ = true;
      }
      if (share_gpus_) {
        std::vector<int> gpu_of_rank(static_cast<size_t>(w.ranks));
        for (int r = 0; r < w.ranks; ++r) gpu_of_rank[static_cast<size_t>(r)] = r % probe.gpus;
        GpuPlacement placement{gpu_of_rank, true, ""};
        report.gpu_of_rank = gpu_of_rank;
        report.placement = placement.describe();
        report.shared_gpu = placement.sharing();
        report.notes.push_back("ranks share GPUs (" + report.shared_gpu +
                               ", NCCL_MULTI_RANK_GPU_ENABLE=1): a result on a shared GPU, not on separate GPUs");
      }
    }
    return std::string(name()) + " ranks started by " + how();
  }

  void start(const ReplayPlan& plan, SharedMemory& shared, const ReplayOptions& options,
             const std::string& run_directory) override {
    ranks_ = plan.world->ranks;
    std::vector<std::pair<std::string, std::string>> extra;
    std::vector<std::string> args = {launcher_path_};
    const std::string np = std::to_string(ranks_);
    if (launcher_ == LauncherKind::Srun) {
      args.insert(args.end(), {"--ntasks=" + np, "--kill-on-bad-exit=1"});
      if (!hosts_.empty()) args.push_back("--nodelist=" + hosts_);
    } else {
      args.insert(args.end(), {"--bind-to", "none", "-np", np});
      // CPU ranks may outnumber cores; GPU ranks never outnumber GPUs (prepare).
      if (hosts_.empty() && kind_ == BackendKind::Mpi) args.push_back("--oversubscribe");
      if (!hosts_.empty()) args.insert(args.end(), {"--host", hosts_});
      // Open MPI's session directory (on every node) and, on this host, its shared-memory segments in
      // the run's directory: removed with it, whatever happens to the ranks.
      args.insert(args.end(), {"--mca", "orte_tmpdir_base", run_directory});
      if (hosts_.empty()) args.insert(args.end(), {"--mca", "btl_vader_backing_directory", run_directory});
    }
    if (launcher_ == LauncherKind::Local) {
      if (shared.name().empty()) throw std::runtime_error("the MPI backend needs /dev/shm (shm_open failed)");
      plan_file_ = private_file(run_directory, "plan", plan_to_json(plan));
      args.insert(args.end(), {rank_path_, plan_file_, shared.name()});
    } else {
      server_ = std::make_unique<StoreServer>(shared.block(), plan_to_json(plan), ranks_, on_this_host_only());
      extra = {{kStoreAddressVariable, store_address()}, {kStoreTokenVariable, server_->token()}};
      if (kind_ == BackendKind::Nccl) {
        extra.emplace_back("NCCL_NVLS_ENABLE", "0");
        if (share_gpus_) extra.emplace_back("NCCL_MULTI_RANK_GPU_ENABLE", "1");
        if (const char* lib = std::getenv(kNcclLibraryVariable); lib && *lib)
          extra.emplace_back(kNcclLibraryVariable, lib);
      }
      if (launcher_ == LauncherKind::Mpirun)
        for (const auto& [k, v] : extra) args.insert(args.end(), {"-x", k});
      args.insert(args.end(), launcher_args_.begin(), launcher_args_.end());
      args.push_back(rank_path_);
      if (kind_ == BackendKind::Mpi) args.push_back("--store");
      // Names the run on every rank's command line (ps, and the tests' look for leftovers).
      args.insert(args.end(), {"--run", fs::path(run_directory).filename().string()});
    }
    if (options.free_running) args.push_back("--free");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::vector<std::string> env = job_environment(extra);
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    log_fd_ = anonymous_log();
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {  // only async-signal-safe calls until execve
      setsid();      // the launcher leads a session of its own: the whole job, killed together
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(9);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &dfl, nullptr);
      int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, 0);
      if (log_fd_ >= 0) {
        dup2(log_fd_, 1);
        dup2(log_fd_, 2);
      }
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    launcher_pid_ = pid;
    session_ = pid;  // setsid: the launcher leads the job's session
  }

  bool running() override {
    if (launcher_pid_ > 0 && waitpid(launcher_pid_, &launcher_status_, WNOHANG) == launcher_pid_) launcher_pid_ = 0;
    return launcher_pid_ > 0;
  }

  // Every rank has read the plan: the file can go.
  void ranks_attached() override {
    if (!plan_file_.empty()) unlink(plan_file_.c_str());
    plan_file_.clear();
  }

  // NCCL ranks abort their communicators; a blocked MPI call has no abort: the job is killed.
  bool can_abort() const override { return kind_ == BackendKind::Nccl; }

  std::vector<int> stop(const SharedBlock& shared) override {
    std::vector<int> still;
    for (int r = 0; r < ranks_; ++r)
      if (server_ ? server_->connected(r) : alive(shared.ranks[r].pid.load())) still.push_back(r);
    // Closing the store ends every rank on every node at once (its client _exits when the store goes).
    if (server_) server_->stop();
    // The ranks on this host first (mpirun takes over a second to end them on SIGTERM), then the
    // launcher, which forwards the SIGTERM to other nodes; it gets a quarter of a second before it is
    // killed too (its session directory is in the run's directory, which goes anyway; ranks
    // elsewhere already _exited when the store closed).
    for (pid_t p : session_members(session_))
      if (p != launcher_pid_) kill(p, SIGKILL);
    if (launcher_pid_ > 0) {
      kill(launcher_pid_, SIGTERM);  // mpirun and srun forward it and take their ranks down
      const auto t0 = std::chrono::steady_clock::now();
      while (waitpid(launcher_pid_, &launcher_status_, WNOHANG) != launcher_pid_ &&
             std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(250))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Open MPI gives every rank a process group of its own, so the job is its session: kill every
    // member, then reap the launcher and the ranks it orphaned (ours: this process is their subreaper).
    for (int round = 0; round < 50; ++round) {
      const std::vector<pid_t> members = session_members(session_);
      if (members.empty()) break;
      for (pid_t p : members) kill(p, SIGKILL);
      for (pid_t p : members) waitpid(p, nullptr, 0);  // fails (ECHILD) for those the launcher still reaps
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (launcher_pid_ > 0) {
      kill(launcher_pid_, SIGKILL);
      waitpid(launcher_pid_, &launcher_status_, 0);
      launcher_pid_ = 0;
    }
    if (!server_)
      for (int r = 0; r < ranks_; ++r)  // a rank that escaped the session (it never does with Open MPI 4)
        if (pid_t pid = shared.ranks[r].pid.load(); pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) {
          kill(pid, SIGKILL);
          waitpid(pid, nullptr, 0);
        }
    // Ranks that died after mpirun and came to this process (the subreaper) as zombies.
    for (pid_t p : session_members(session_, getpid())) waitpid(p, nullptr, 0);
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    diagnostics_ = tail_of_log();
    remove_files();
    return still;
  }

  std::string library(const SharedBlock& shared) const override {
    std::string lib(shared.library, strnlen(shared.library, sizeof shared.library));
    if (lib.empty()) return "";
    return lib + ", " + std::to_string(ranks_) + " processes (" + how() + ")";
  }

  std::string diagnostics() const override { return diagnostics_; }

 private:
  // Every rank on this host: mpirun without --hosts or a store address of its own.
  bool on_this_host_only() const { return launcher_ != LauncherKind::Srun && hosts_.empty() && store_host_.empty(); }

  std::string how() const {
    std::string out = launcher_ == LauncherKind::Srun     ? "srun"
                      : launcher_ == LauncherKind::Mpirun ? "mpirun"
                                                          : "mpirun --oversubscribe on this host";
    if (!hosts_.empty()) out += " on " + hosts_;
    if (launcher_ != LauncherKind::Local) out += ", coordinated through a TCP store";
    return out;
  }

  // Where the ranks reach the store: --store-host, else 127.0.0.1 for ranks on this host, else this
  // host's name.
  std::string store_address() const {
    std::string host = store_host_;
    if (host.empty() && on_this_host_only()) host = "127.0.0.1";
    if (host.empty()) {
      char name[256] = {};
      gethostname(name, sizeof name - 1);
      host = name;
    }
    return host + ":" + std::to_string(server_->port());
  }

  // The launcher's output goes to a file that is unlinked at once: nothing to leave behind.
  static int anonymous_log() {
    std::string tmpl = (fs::temp_directory_path() / "collmc-mpirun-XXXXXX").string();
    int fd = mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd >= 0) unlink(tmpl.c_str());
    return fd;
  }

  // The launcher's last lines (why a job did not start or a rank died).
  std::string tail_of_log() const {
    std::string all;
    char buf[4096];
    off_t at = 0;
    for (ssize_t n; log_fd_ >= 0 && (n = pread(log_fd_, buf, sizeof buf, at)) > 0; at += n)
      all.append(buf, static_cast<size_t>(n));
    std::string out;
    for (char c : all.size() > 600 ? all.substr(all.size() - 600) : all) out += c == '\n' ? ' ' : c;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }

  void remove_files() {
    if (!plan_file_.empty()) unlink(plan_file_.c_str());
    plan_file_.clear();
    if (log_fd_ >= 0) close(log_fd_);
    log_fd_ = -1;
  }

  BackendKind kind_;
  LauncherKind launcher_;
  std::string hosts_;
  std::vector<std::string> launcher_args_;
  std::string store_host_;
  std::string launcher_path_, rank_path_, plan_file_, diagnostics_;
  std::unique_ptr<StoreServer> server_;
  int log_fd_ = -1;
  int ranks_ = 0;
  pid_t launcher_pid_ = 0;
  pid_t session_ = 0;
  int launcher_status_ = 0;
  bool share_gpus_ = false;  // NCCL 2.30+: ranks of this host share its GPUs (prepare)
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend() {
  ReplayOptions local;
  return std::make_unique<JobBackend>(BackendKind::Mpi, local);
}

std::unique_ptr<Backend> make_job_backend(BackendKind kind, const ReplayOptions& options) {
  return std::make_unique<JobBackend>(kind, options);
}

std::string mpi_unavailable() {
  if (find_mpirun().empty()) return "mpirun not found (install openmpi-bin, or set COLLMC_MPIRUN)";
  if (find_mpi_rank().empty())
    return "collmc-mpi-rank not found (build with MPI: libopenmpi-dev; or set COLLMC_MPI_RANK)";
  return "";
}

}  // namespace collmc::replay
