// The MPI backend's processes: `mpirun --oversubscribe -np N collmc-mpi-rank PLAN BLOCK` in a session
// of its own. The ranks are mpirun's children, not ours: each records its pid in the shared block and
// dies with mpirun (PR_SET_PDEATHSIG); while the job runs this process is a child subreaper, so ranks
// orphaned by a killed mpirun are ours to reap. Stop: SIGTERM to mpirun (it then kills its
// ranks), SIGKILL to every process of mpirun's session (Open MPI gives each rank a
// process group of its own, so killpg would miss them), and everything reaped.
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

namespace collmc::replay {

namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& p) { return !p.empty() && access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }

// COLLMC_MPIRUN, else `mpirun` on PATH.
std::string find_mpirun() {
  if (const char* e = std::getenv("COLLMC_MPIRUN"); e && *e) return executable(e) ? e : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (executable(fs::path(dir) / "mpirun")) return (fs::path(dir) / "mpirun").string();
  return "";
}

// COLLMC_MPI_RANK, else next to this executable (collmc), else where this build put it.
std::string find_rank_program() {
  if (const char* e = std::getenv("COLLMC_MPI_RANK"); e && *e) return executable(e) ? e : "";
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && executable(self.parent_path() / "collmc-mpi-rank"))
    return (self.parent_path() / "collmc-mpi-rank").string();
#ifdef COLLMC_MPI_RANK_PATH
  if (executable(COLLMC_MPI_RANK_PATH)) return COLLMC_MPI_RANK_PATH;
#endif
  return "";
}

// A private temporary file; returns its path.
std::string temp_file(const std::string& stem, const std::string& text) {
  std::string tmpl = (fs::temp_directory_path() / (stem + "-XXXXXX")).string();
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

// This process's environment for the job, with what mpirun and the ranks need.
std::vector<std::string> job_environment() {
  std::vector<std::pair<std::string, std::string>> set;
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

// The live (not zombie) processes of session `sid`, from /proc/PID/stat.
std::vector<pid_t> session_members(pid_t sid) {
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
    if (rest >> state >> ppid >> pgrp >> session && session == sid && state != 'Z')
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

class MpiBackend : public Backend {
 public:
  ~MpiBackend() override {
    if (mpirun_ > 0) {
      for (pid_t p : session_members(session_)) kill(p, SIGKILL);
      waitpid(mpirun_, nullptr, 0);
    }
    remove_files();
  }

  const char* name() const override { return "MPI"; }

  std::string prepare(const ReplayPlan& plan, std::string& refusal, std::vector<std::string>&) override {
    if (plan.world->knobs.profile != model::Profile::Mpi) {
      refusal =
          "an nccl-profile scenario: the MPI backend runs only `set profile = mpi` (its collectives block the "
          "host; NCCL's are stream-ordered)";
      return "";
    }
    if (plan.world->mixed_profiles()) {
      refusal = "comms of both libraries (mpi and nccl): no backend runs MPI and NCCL in one job yet";
      return "";
    }
    if (!plan.world->source || plan.world->source->path.empty()) {
      refusal = "the MPI backend needs the scenario's file (the rank processes load it)";
      return "";
    }
    refusal = mpi_unavailable();
    mpirun_path_ = find_mpirun();
    rank_path_ = find_rank_program();
    return "Open MPI (mpirun " + mpirun_path_ + "), " + std::to_string(plan.world->ranks) + " processes";
  }

  void start(const ReplayPlan& plan, SharedMemory& shared, const ReplayOptions& options) override {
    ranks_ = plan.world->ranks;
    if (shared.name().empty()) throw std::runtime_error("the MPI backend needs /dev/shm (shm_open failed)");
    plan_file_ = temp_file("collmc-plan", plan_to_json(plan));
    log_fd_ = anonymous_log();
    std::vector<std::string> args = {mpirun_path_,           "--oversubscribe", "--bind-to", "none",       "-np",
                                     std::to_string(ranks_), rank_path_,        plan_file_,  shared.name()};
    if (options.free_running) args.push_back("--free");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::vector<std::string> env = job_environment();
    std::vector<char*> envp;
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {  // only async-signal-safe calls until execve
      setsid();      // mpirun leads a session of its own: the whole job, killed together
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(9);
      int null = open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, 0);
      if (log_fd_ >= 0) {
        dup2(log_fd_, 1);
        dup2(log_fd_, 2);
      }
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    mpirun_ = pid;
    session_ = pid;  // setsid: mpirun leads the job's session
  }

  bool running() override {
    if (mpirun_ > 0 && waitpid(mpirun_, &mpirun_status_, WNOHANG) == mpirun_) mpirun_ = 0;
    return mpirun_ > 0;
  }

  // Every rank has read the plan: the file can go (also if this process is killed later).
  void ranks_attached() override {
    if (!plan_file_.empty()) unlink(plan_file_.c_str());
    plan_file_.clear();
  }

  bool can_abort() const override { return false; }  // a blocked MPI call has no abort: the job is killed

  std::vector<int> stop(const SharedBlock& shared) override {
    std::vector<int> still;
    for (int r = 0; r < ranks_; ++r)
      if (alive(shared.ranks[r].pid.load())) still.push_back(r);
    if (mpirun_ > 0) {
      kill(mpirun_, SIGTERM);  // mpirun forwards it and takes its ranks down
      const auto t0 = std::chrono::steady_clock::now();
      while (waitpid(mpirun_, &mpirun_status_, WNOHANG) != mpirun_ &&
             std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    // Open MPI gives every rank a process group of its own, so the job is its session: kill every
    // member, then reap mpirun and the ranks it orphaned (ours: this process is their subreaper).
    for (int round = 0; round < 50; ++round) {
      const std::vector<pid_t> members = session_members(session_);
      if (members.empty()) break;
      for (pid_t p : members) kill(p, SIGKILL);
      for (pid_t p : members) waitpid(p, nullptr, 0);  // fails (ECHILD) for those mpirun still reaps
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (mpirun_ > 0) {
      kill(mpirun_, SIGKILL);
      waitpid(mpirun_, &mpirun_status_, 0);
      mpirun_ = 0;
    }
    for (int r = 0; r < ranks_; ++r)  // a rank that escaped the session (it never does with Open MPI 4)
      if (pid_t pid = shared.ranks[r].pid.load(); pid > 0 && waitpid(pid, nullptr, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    prctl(PR_SET_CHILD_SUBREAPER, 0);
    diagnostics_ = tail_of_log();
    remove_files();
    return still;
  }

  std::string library(const SharedBlock& shared) const override {
    std::string lib(shared.library, strnlen(shared.library, sizeof shared.library));
    if (lib.empty()) return "";
    return lib + ", " + std::to_string(ranks_) + " processes (mpirun --oversubscribe)";
  }

  std::string diagnostics() const override { return diagnostics_; }

 private:
  // mpirun's output goes to a file that is unlinked at once: nothing to leave behind.
  static int anonymous_log() {
    std::string tmpl = (fs::temp_directory_path() / "collmc-mpirun-XXXXXX").string();
    int fd = mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd >= 0) unlink(tmpl.c_str());
    return fd;
  }

  // mpirun's last lines (why a job did not start or a rank died).
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

  std::string mpirun_path_, rank_path_, plan_file_, diagnostics_;
  int log_fd_ = -1;
  int ranks_ = 0;
  pid_t mpirun_ = 0;
  pid_t session_ = 0;
  int mpirun_status_ = 0;
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend() { return std::make_unique<MpiBackend>(); }

std::string mpi_unavailable() {
  if (find_mpirun().empty()) return "mpirun not found (install openmpi-bin, or set COLLMC_MPIRUN)";
  if (find_rank_program().empty())
    return "collmc-mpi-rank not found (build with MPI: libopenmpi-dev; or set COLLMC_MPI_RANK)";
  return "";
}

}  // namespace collmc::replay
