// collmc record [--out DIR] [--recorder auto|nccl|mpi] [--time-limit S] [--hang-after S]
//               [--watch [--on-hang report|abort|CMD] [--watch-html]] -- PROGRAM ARGS...:
// runs PROGRAM
// with a recorder preloaded (libcollmc_record.so for NCCL, libcollmc_record_mpi.so for MPI programs), so
// every process it starts writes DIR/collmc-trace.<host>.<pid>.jsonl; then lists the files written and
// exits as the program did. Under mpirun the preload is handed to every rank (Open MPI: `-x`).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include "cli_common.h"
#include "collmc/traces/record_launch.h"
#include "collmc/traces/recorder_reader.h"
#include "collmc/watch/job_control.h"
#include "collmc/watch/watcher.h"
#include "commands.h"
#include "watch_actions.h"

namespace collmc::cli {
namespace {

namespace fs = std::filesystem;
using traces::is_mpi_launcher;
using traces::needed_libraries;
using traces::on_path;

enum class RecorderKind { Nccl, Mpi };

// $COLLMC_RECORDER (NCCL) / $COLLMC_RECORDER_MPI, else one next to the binary or installed with it, else
// the one built with it.
std::string find_recorder(RecorderKind kind) {
  const bool mpi = kind == RecorderKind::Mpi;
  const char* env_name = mpi ? "COLLMC_RECORDER_MPI" : "COLLMC_RECORDER";
  const std::string file = mpi ? "libcollmc_record_mpi.so" : "libcollmc_record.so";
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv(env_name); env != nullptr && *env != '\0') {
    if (!fs::is_regular_file(env)) throw std::runtime_error(std::string("$") + env_name + " names no file: " + env);
    return fs::absolute(env).string();
  }
  // Relative to this binary first, so that an installed collmc uses the recorder installed with it.
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path() / file);
    candidates.push_back(exe.parent_path() / COLLMC_RECORDER_FROM_BINARY / file);
  }
#ifdef COLLMC_RECORDER_PATH
  if (!mpi) candidates.emplace_back(COLLMC_RECORDER_PATH);
#endif
#ifdef COLLMC_RECORDER_MPI_PATH
  if (mpi) candidates.emplace_back(COLLMC_RECORDER_MPI_PATH);
#endif
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return c.string();
  throw std::runtime_error("cannot find " + file + " (built with collmc when " +
                           (mpi ? std::string("an MPI library is") : std::string("the CUDA/NCCL headers are")) +
                           " found); set " + env_name + " to its path");
}

// The torch shim's start-up directory (collmc/record/_boot, whose sitecustomize.py installs the shim in a
// Python program): $COLLMC_PYTHON (a directory holding the collmc package), else the package installed beside
// this binary, else the one built with it; "" when there is none (the program is then recorded without it).
std::string find_torch_shim_boot() {
  std::vector<fs::path> roots;
  if (const char* env = std::getenv("COLLMC_PYTHON"); env != nullptr && *env != '\0') roots.emplace_back(env);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    roots.push_back(exe.parent_path() / COLLMC_PYTHON_FROM_BINARY);
    roots.push_back(exe.parent_path() / ".." / "python");
  }
#ifdef COLLMC_PYTHON_BUILD_DIR
  roots.emplace_back(COLLMC_PYTHON_BUILD_DIR);
#endif
  for (const auto& r : roots) {
    const fs::path boot = r / "collmc" / "record" / "_boot";
    if (fs::is_regular_file(boot / "sitecustomize.py", ec)) return fs::weakly_canonical(boot, ec).string();
  }
  return "";
}

// An MPI program: started by an MPI launcher, or linked with libmpi.
bool is_mpi_program(const std::vector<std::string>& program) {
  if (is_mpi_launcher(program[0])) return true;
  const fs::path exe = on_path(program[0]);
  if (exe.empty()) return false;
  for (const auto& lib : needed_libraries(exe))
    if (lib.rfind("libmpi", 0) == 0) return true;
  return false;
}

// Open MPI's launcher does not hand its environment to ranks on other hosts: `-x VAR=VALUE` does.
bool is_open_mpi_launcher(const std::string& program) {
  std::error_code ec;
  const fs::path exe = on_path(program);
  if (exe.empty()) return false;
  const std::string real = fs::canonical(exe, ec).string();
  return real.find("openmpi") != std::string::npos || real.find("orterun") != std::string::npos ||
         real.find("prterun") != std::string::npos;
}

std::set<std::string> trace_files_in(const fs::path& dir) {
  std::set<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("collmc-trace.", 0) == 0 && e.path().extension() == ".jsonl") files.insert(e.path().string());
  }
  return files;
}

size_t count_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// The trace files written since the run started, and their total size (what tells progress).
struct TraceGrowth {
  size_t files = 0;
  uintmax_t bytes = 0;
  bool operator==(const TraceGrowth&) const = default;
};
TraceGrowth trace_growth(const fs::path& dir, const std::set<std::string>& before) {
  TraceGrowth g;
  std::error_code ec;
  for (const auto& f : trace_files_in(dir)) {
    if (before.count(f)) continue;
    ++g.files;
    const uintmax_t size = fs::file_size(f, ec);
    if (!ec) g.bytes += size;
  }
  return g;
}

// --hang-after: the run's traces so far, judged (a file that cannot be read or parsed yet: not hung).
traces::RecordedRunJudgement judge_traces(const fs::path& dir, const std::set<std::string>& before) {
  std::vector<traces::RecorderFile> files;
  try {
    for (const auto& f : trace_files_in(dir)) {
      if (before.count(f)) continue;
      std::ifstream in(f, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      files.push_back(traces::parse_recorder_file(f, text));
    }
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    const std::string here = name;
    // A process of this host runs while its pid does; one of another host is taken to run.
    return traces::judge_recorded_run(files, [&](const std::string& host, int64_t pid) {
      return host != here || pid <= 0 || kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
    });
  } catch (const std::exception& e) {
    return {false, e.what()};
  }
}

// Ctrl-C and SIGTERM while the program runs: passed on to it, and remembered so that the run is
// reported as interrupted. A signal from the terminal already reached a program that shares collmc's
// process group; one sent to collmc alone (si_code SI_USER: `kill PID`, a supervisor) is passed on.
std::atomic<pid_t> recorded_child{0};
std::atomic<bool> child_has_own_group{false};
std::atomic<int> interrupted_by{0};

extern "C" void forward_signal(int sig, siginfo_t* info, void*) {
  interrupted_by.store(sig);
  const pid_t child = recorded_child.load();
  if (child <= 0) return;
  if (child_has_own_group.load())
    kill(-child, sig);
  else if (info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE))
    kill(child, sig);
}

const char* signal_name(int sig) { return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal"; }

}  // namespace

int cmd_record(const std::vector<std::string>& args) {
  po::options_description d;
  d.add_options()("out,o", po::value<std::string>()->default_value("collmc-traces")->value_name("DIR"),
                  "directory for the trace files (collmc-trace.<host>.<pid>.jsonl, one per process); it must be "
                  "empty or new, so that two runs are never mixed (see --force)")(
      "force", "record into a DIR that is not empty, removing the trace files of an earlier run from it first")(
      "append",
      "record into a DIR that is not empty, keeping its trace files: for the ranks of one run started one by one")(
      "recorder", po::value<std::string>()->default_value("auto")->value_name("KIND"),
      "auto (mpi for a program started by mpirun/mpiexec or linked with libmpi, else nccl), nccl or mpi")(
      "openmp-runtime", po::value<std::string>()->value_name("LIB|none"),
      "preload the OpenMP runtime LIB (LLVM's libomp.so, which also implements gcc's GOMP_* calls) into the "
      "program: the MPI recorder records its threads' OpenMP synchronization through OMPT, which gcc's libgomp "
      "lacks. Without it an MPI program linked to libgomp (gcc -fopenmp) gets the installed LLVM libomp.so.5 "
      "(/usr/lib/llvm-*/lib, /usr/lib/<multiarch>); none: never preload one (docs/TRACES.md, \"OpenMP "
      "threads\")")(
      "time-limit", po::value<double>()->value_name("S"),
      "stop the program (SIGTERM to its process group, SIGKILL 2 s later) after S seconds and exit 124: the "
      "traces then show where each process was")(
      "hang-after", po::value<double>()->value_name("S"),
      "stop the program as --time-limit does, and exit 124, once no process has written a trace line for S "
      "seconds while every process that still runs is inside a call it entered (and every rank of the "
      "world has started): a hung run, stopped in seconds instead of at --time-limit")(
      "watch",
      "follow the traces while the program runs and name a hang as soon as it is certain: ranks in calls that "
      "wait for each other and can never return, whatever the other ranks do (docs/TRACES.md, \"Watching a "
      "job\"); prints the check's diagnosis and writes the scenario of the calls so far to DIR/watch/hang.cmc")(
      "on-hang", po::value<std::string>()->value_name("ACTION"),
      "what --watch does once it names a hang (implies --watch): report (the default: print it, the program "
      "runs on), abort (stop every process of the job, remove the shared memory they held, keep the traces), "
      "or a shell command, run with COLLMC_HANG_DIR, COLLMC_HANG_SCENARIO, COLLMC_HANG_TRACE_DIR and "
      "COLLMC_JOB_PGID set (the program runs on)")("watch-html",
                                                   "with --watch: also write the review page DIR/watch/hang.html");
  const auto [vm, program_args] =
      parse_before_program(args, d, "record needs a program: collmc record -- PROGRAM ARGS...");
  std::vector<std::string> program = program_args;
  const std::string out_dir = vm["out"].as<std::string>();
  const std::string which = vm["recorder"].as<std::string>();
  if (which != "auto" && which != "nccl" && which != "mpi")
    throw po::error("--recorder must be auto, nccl or mpi, not '" + which + "'");
  const RecorderKind kind = which == "mpi"            ? RecorderKind::Mpi
                            : which == "nccl"         ? RecorderKind::Nccl
                            : is_mpi_program(program) ? RecorderKind::Mpi
                                                      : RecorderKind::Nccl;
  double time_limit = 0;
  if (vm.count("time-limit")) {
    time_limit = vm["time-limit"].as<double>();
    if (!(time_limit > 0) || !std::isfinite(time_limit))
      throw po::error("--time-limit must be a positive number of seconds");
  }
  double hang_after = 0;
  if (vm.count("hang-after")) {
    hang_after = vm["hang-after"].as<double>();
    if (!(hang_after > 0) || !std::isfinite(hang_after))
      throw po::error("--hang-after must be a positive number of seconds");
  }
  const bool watching = vm.count("watch") || vm.count("on-hang") || vm.count("watch-html");
  // The OMPT tool is the MPI recorder's: a program recorded by the NCCL recorder gets no runtime unless told.
  traces::OpenMpRuntime omp;
  try {
    const std::string given = vm.count("openmp-runtime") ? vm["openmp-runtime"].as<std::string>() : "";
    if (kind == RecorderKind::Mpi || !given.empty()) omp = traces::choose_openmp_runtime(given, program);
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }
  const std::string& openmp_runtime = omp.library;
  const OnHang on_hang = vm.count("on-hang") ? parse_on_hang(vm["on-hang"].as<std::string>()) : OnHang{};
  const bool watched = time_limit > 0 || hang_after > 0 || watching;

  {
    // Two runs in one directory would be imported as one (and fail, or worse, mix): refuse, as git
    // refuses to clobber, unless --force.
    std::error_code ec;
    if (fs::exists(out_dir, ec) && !fs::is_directory(out_dir, ec))
      throw std::runtime_error("--out " + out_dir + " is not a directory");
    const bool non_empty = fs::is_directory(out_dir, ec) && !fs::is_empty(out_dir, ec);
    if (vm.count("force") && vm.count("append")) throw po::error("--force and --append exclude each other");
    if (non_empty && !vm.count("force") && !vm.count("append"))
      throw po::error("--out " + out_dir +
                      " is not empty: recording into it would mix two runs; choose a new directory, or --force to "
                      "remove its trace files first (--append to add this process's traces to them)");
    if (non_empty && vm.count("force")) {
      for (const auto& f : trace_files_in(out_dir)) fs::remove(f, ec);
      fs::remove_all(fs::path(out_dir) / "watch", ec);  // an earlier --watch's named hang
    }
  }
  const std::string recorder = find_recorder(kind);
  fs::create_directories(out_dir);
  const fs::path dir = fs::absolute(out_dir);  // absolute: the program may change directory
  const std::set<std::string> before = trace_files_in(dir);

  std::string preload = recorder;
  if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != '\0')
    preload = std::string(old) + ":" + recorder;
  // First: its GOMP_* and omp_* definitions then win over the libgomp the program was linked with.
  if (!openmp_runtime.empty()) preload = openmp_runtime + ":" + preload;
  // Open MPI's mpirun: the preload goes to the ranks only (-x), not into mpirun itself, which needs no MPI.
  const bool forward_with_x =
      kind == RecorderKind::Mpi && is_mpi_launcher(program[0]) && is_open_mpi_launcher(program[0]);
  if (forward_with_x) {
    program.insert(program.begin() + 1, {"-x", "LD_PRELOAD=" + preload, "-x", "COLLMC_TRACE_DIR=" + dir.string()});
  }
  // A Python program also gets the torch shim: PYTHONPATH starts with its start-up directory.
  const std::string shim = find_torch_shim_boot();
  std::string pythonpath = shim;
  if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && *old != '\0')
    pythonpath = shim.empty() ? std::string(old) : shim + ":" + old;
  if (forward_with_x && !shim.empty()) program.insert(program.begin() + 1, {"-x", "PYTHONPATH=" + pythonpath});
  std::cerr << "collmc record: " << (kind == RecorderKind::Mpi ? "MPI" : "NCCL") << " recorder " << recorder
            << (forward_with_x ? " (handed to every rank with mpirun -x)" : "")
            << (shim.empty() ? "" : "; torch shim " + shim)
            << (!openmp_runtime.empty() ? "; OpenMP runtime " + openmp_runtime + " (" + omp.reason + ")"
                : !omp.reason.empty()   ? "; no OpenMP runtime preloaded (" + omp.reason + ")"
                                        : "")
            << "\n";

  // Like system(3): the program gets the terminal's signals and collmc waits for it; SIGINT and
  // SIGTERM that reach collmc are passed on (forward_signal) and the run is reported as interrupted.
  struct sigaction ignore {
  }, forward{}, old_int{}, old_quit{}, old_term{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_sigaction = forward_signal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  child_has_own_group.store(watched);
  sigaction(SIGINT, &forward, &old_int);
  sigaction(SIGTERM, &forward, &old_term);
  sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    if (watched) setpgid(0, 0);  // its own process group, so the time limit stops all of it
    if (!forward_with_x) setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv("COLLMC_TRACE_DIR", dir.c_str(), 1);
    if (!pythonpath.empty()) setenv("PYTHONPATH", pythonpath.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : program) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::cerr << "collmc record: cannot run '" << program[0] << "': " << std::strerror(errno) << "\n";
    _exit(127);
  }
  if (watched) setpgid(child, child);  // also here: whichever runs first
  recorded_child.store(child);
  int status = 0;
  bool timed_out = false;
  std::string hung;  // --hang-after: where each process sat when the run was judged hung
  bool hang_named = false, aborted = false;
  std::set<std::string> shared_memory;  // --on-hang abort: what the job held in /dev/shm
  pid_t hang_command = 0;
  std::optional<watch::Watcher> watcher;
  if (watching) {
    watch::WatchOptions options;
    options.trace_dir = dir.string();
    options.skip = before;
    options.live.html = vm.count("watch-html") > 0;
    watcher.emplace(options);
  }
  if (watched) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    auto since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    TraceGrowth growth;
    auto last_growth = start, last_judged = start;
    bool terminated = false, killed = false;
    double terminated_at = 0;
    for (unsigned tick = 0;; ++tick) {
      const pid_t r = waitpid(child, &status, WNOHANG);
      if (r == child || (r < 0 && errno != EINTR)) break;
      if (watcher && !terminated && !hang_named)
        if (auto named = watcher->poll()) {
          hang_named = true;
          name_hang(*watcher, *named);
          if (on_hang.kind == OnHang::Kind::Abort) {
            abort_job(child, dir.string(), shared_memory);
            terminated = aborted = true;
            terminated_at = since(start);
          } else if (on_hang.kind == OnHang::Kind::Command) {
            hang_command = watch::start_hang_command(on_hang.command, watcher->out_dir(), dir.string(), child);
            std::cerr << "collmc watch: --on-hang: started `" << on_hang.command << "` (pid " << hang_command << ")\n";
          }
        }
      if (!terminated && hang_after > 0 && tick % 5 == 0) {  // every 100 ms
        if (TraceGrowth now = trace_growth(dir, before); !(now == growth)) {
          growth = now;
          last_growth = Clock::now();
        } else if (growth.files > 0 && since(last_growth) > hang_after && since(last_judged) > 0.5) {
          last_judged = Clock::now();
          if (auto judged = judge_traces(dir, before); judged.hung) hung = judged.why;
        }
      }
      const bool past_limit = time_limit > 0 && since(start) > time_limit;
      if (!terminated && (past_limit || !hung.empty())) {
        kill(-child, SIGTERM);
        terminated = timed_out = true;
        terminated_at = since(start);
      } else if (terminated && !killed && since(start) > terminated_at + 2) {
        kill(-child, SIGKILL);
        killed = true;
      } else if (!terminated && interrupted_by.load() != 0) {
        terminated = true;  // passed on already; SIGKILL 2 s later if the program does not end
        terminated_at = since(start);
      }
      usleep(20 * 1000);
    }
    if (killed || terminated) kill(-child, SIGKILL);  // what is left of the group (an orphaned rank)
    if (aborted) finish_abort(child, dir.string(), shared_memory);
  } else {
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
  }
  recorded_child.store(0);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);

  std::vector<std::string> written;
  for (const auto& f : trace_files_in(dir))
    if (!before.count(f)) written.push_back(f);
  // Why there is no trace: a program that did not start, or that failed before its first call, is
  // not "a program that made no NCCL call".
  const bool not_started = WIFEXITED(status) && WEXITSTATUS(status) == 127;
  const bool failed = (WIFEXITED(status) && WEXITSTATUS(status) != 0) || WIFSIGNALED(status);
  std::string why_none;
  if (not_started)
    why_none = " (the program did not start: see the error above)";
  else if (interrupted_by.load() != 0)
    why_none = " (interrupted before any process made a call the recorder sees)";
  else if (failed && !timed_out)
    why_none = " (the program failed before any process made a call the recorder sees: see its output above)";
  else
    why_none = kind == RecorderKind::Mpi ? " (the program made no MPI call the recorder sees)"
                                         : " (the program made no NCCL or CUDA runtime call the recorder sees, and no "
                                           "torch.distributed call the torch shim sees)";
  std::cerr << "collmc record: " << written.size() << " trace file" << (written.size() == 1 ? "" : "s") << " in "
            << dir.string() << (written.empty() ? why_none : "") << "\n";
  if (written.empty() && failed && !not_started && is_mpi_launcher(program[0]) && geteuid() == 0)
    std::cerr << "help: Open MPI's mpirun refuses to run as root unless given --allow-run-as-root (and, on a "
                 "machine with fewer cores than ranks, --oversubscribe)\n";
  for (const auto& f : written) std::cerr << "  " << f << " (" << count_lines(f) << " lines)\n";
  if (hang_command > 0) {
    int command_status = 0;
    while (waitpid(hang_command, &command_status, 0) < 0 && errno == EINTR) {
    }
    std::cerr << "collmc watch: the --on-hang command exited "
              << (WIFEXITED(command_status) ? WEXITSTATUS(command_status) : 128 + WTERMSIG(command_status)) << "\n";
  }
  if (watcher && !hang_named)
    std::cerr << "collmc watch: no hang named (" << watcher->stats().lines << " lines read, " << watcher->stats().checks
              << " checks of the calls so far)\n";
  if (hang_named && interrupted_by.load() == 0) {
    std::cerr << "collmc record: the watch named a hang while the program ran" << (aborted ? " and stopped it" : "")
              << "; the diagnosis and the scenario are in " << watcher->out_dir() << "\n";
    return kExitHangNamed;
  }
  if (timed_out) {
    if (!hung.empty())
      std::cerr << "collmc record: no trace line for " << hang_after << " s and every running process inside a call ("
                << hung
                << "): the run hung and was stopped; a call entered and never returned is where its process stopped\n";
    else
      std::cerr << "collmc record: the program ran past --time-limit " << time_limit
                << " s and was stopped; a call entered and never returned is where its process stopped\n";
    return 124;
  }
  if (const int sig = interrupted_by.load(); sig != 0) {
    std::cerr << "collmc record: interrupted (" << signal_name(sig) << "): the program was stopped; the traces "
              << "written so far are kept and can be imported (a call entered and never returned is where its "
              << "process stopped)\n";
    return 128 + sig;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    std::cerr << "collmc record: the program was killed by signal " << WTERMSIG(status) << "\n";
    return 128 + WTERMSIG(status);
  }
  return 1;
}

}  // namespace collmc::cli
