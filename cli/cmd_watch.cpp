// collmc watch DIR [--on-hang report|abort|CMD] [--watch-html] [--time-limit S]: the live watch of a job
// started elsewhere (its recorders writing into DIR); collmc watch --flight-recorder DIR: the Flight
// Recorder companion. The logic is watch/'s; this is options and wording.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "cli_common.h"
#include "collmc/model/world.h"
#include "collmc/traces/trace.h"
#include "collmc/watch/flight_recorder_watch.h"
#include "collmc/watch/job_control.h"
#include "collmc/watch/watcher.h"
#include "commands.h"
#include "watch_actions.h"

namespace collmc::cli {
namespace {

namespace fs = std::filesystem;

std::atomic<int> watch_interrupted{0};
extern "C" void on_watch_signal(int sig) { watch_interrupted.store(sig); }

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// The default dump prefix: the base name of $TORCH_FR_DUMP_TEMP_FILE, else torch's own default.
std::string default_dump_prefix() {
  const char* env = std::getenv("TORCH_FR_DUMP_TEMP_FILE");
  return env != nullptr && *env != '\0' ? fs::path(env).filename().string() : "nccl_trace_rank_";
}

int watch_flight_recorder(const po::variables_map& vm, const std::string& dir, double time_limit) {
  const std::string prefix = vm.count("prefix") ? vm["prefix"].as<std::string>() : default_dump_prefix();
  const int world = vm["world"].as<int>();
  const std::string out_dir = vm.count("out") ? vm["out"].as<std::string>() : dir;
  const auto start = std::chrono::steady_clock::now();
  std::string last_said;
  std::cerr << "collmc watch: waiting for the Flight Recorder dumps " << (fs::path(dir) / prefix).string()
            << "<rank> (TORCH_NCCL_DUMP_ON_TIMEOUT=1 writes them when the watchdog times out)\n";
  while (watch_interrupted.load() == 0) {
    const watch::FlightRecorderScan scan = watch::scan_flight_recorder_dumps(dir, prefix, world);
    if (scan.complete()) {
      std::cerr << "collmc watch: " << scan.dumps.size() << " dumps of " << scan.world
                << " ranks landed; importing and checking\n";
      const watch::FlightRecorderReview review =
          watch::review_flight_recorder_dumps(scan.dumps, out_dir, vm["check-time"].as<double>());
      std::cout << review.summary;
      for (const auto& f : review.written) std::cerr << "wrote " << f << "\n";
      return review.verdict_exit;
    }
    const std::string said = !scan.waiting_for.empty()
                                 ? scan.waiting_for
                                 : std::to_string(scan.dumps.size()) + " of " + std::to_string(scan.world) +
                                       " ranks' dumps landed; waiting for " +
                                       model::rank_ranges_text(scan.missing, ",");
    if (said != last_said && vm.count("verbose")) std::cerr << "collmc watch: " << said << "\n";
    last_said = said;
    if (time_limit > 0 && seconds_since(start) > time_limit) {
      std::cerr << "collmc watch: --time-limit " << time_limit << " s reached: " << said << "\n";
      return 124;
    }
    usleep(200 * 1000);
  }
  std::cerr << "collmc watch: interrupted\n";
  return 128 + watch_interrupted.load();
}

}  // namespace

int cmd_watch(const std::vector<std::string>& args) {
  po::options_description d;
  d.add_options()("flight-recorder",
                  "wait for PyTorch's Flight Recorder dumps in DIR (one per rank, TORCH_FR_DUMP_TEMP_FILE + rank), "
                  "then import and check them and write collmc-summary.txt and collmc-review.html beside them")(
      "prefix", po::value<std::string>()->value_name("NAME"),
      "with --flight-recorder: the dumps' file name before the rank (default: the base name of "
      "$TORCH_FR_DUMP_TEMP_FILE, else nccl_trace_rank_)")(
      "world", po::value<int>()->default_value(0)->value_name("N"),
      "with --flight-recorder: the ranks to wait for (default: those the dumps' process groups name)")(
      "out", po::value<std::string>()->value_name("DIR"),
      "where the files go (default: DIR/watch for the live watch, DIR itself for --flight-recorder)")(
      "check-time", po::value<double>()->default_value(60)->value_name("S"),
      "with --flight-recorder: seconds the check may take before it says inconclusive")(
      "on-hang", po::value<std::string>()->default_value("report")->value_name("ACTION"),
      "what to do once a hang is named: report (print it and exit), abort (stop the job's processes on this "
      "host, remove the shared memory they held, keep the traces), or a shell command (run with "
      "COLLMC_HANG_DIR, COLLMC_HANG_SCENARIO, COLLMC_HANG_TRACE_DIR set)")(
      "watch-html", "also write the review page DIR/watch/hang.html")(
      "time-limit", po::value<double>()->value_name("S"), "stop watching after S seconds (exit 124)")(
      "verbose", "say what the watch waits for as it changes")("dir", po::value<std::vector<std::string>>(),
                                                               "the job's trace folder");
  const auto [vm, dirs] = parse_with_positional(args, d, "dir", "watch needs the job's trace folder: collmc watch DIR");
  if (dirs.size() != 1) throw po::error("watch takes one folder");
  const std::string dir = dirs.front();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw po::error(dir + " is not a folder");
  double time_limit = 0;
  if (vm.count("time-limit")) {
    time_limit = vm["time-limit"].as<double>();
    if (!(time_limit > 0) || !std::isfinite(time_limit)) throw po::error("--time-limit must be a positive number");
  }
  struct sigaction sa {};
  sa.sa_handler = on_watch_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  if (vm.count("flight-recorder")) {
    try {
      return watch_flight_recorder(vm, dir, time_limit);
    } catch (const traces::TraceInputError& e) {
      std::cerr << "collmc watch: " << e.what() << "\n";
      return kExitBadInput;
    }
  }
  const OnHang on_hang = parse_on_hang(vm["on-hang"].as<std::string>());
  watch::WatchOptions options;
  options.trace_dir = fs::absolute(dir).string();
  if (vm.count("out")) options.out_dir = vm["out"].as<std::string>();
  options.live.html = vm.count("watch-html") > 0;
  watch::Watcher watcher(options);
  const auto start = std::chrono::steady_clock::now();
  unsigned polls = 0;
  std::cerr << "collmc watch: following " << options.trace_dir << " (Ctrl-C to stop)\n";
  while (watch_interrupted.load() == 0) {
    if (auto named = watcher.poll()) {
      name_hang(watcher, *named);
      if (on_hang.kind == OnHang::Kind::Abort) {
        std::set<std::string> shared_memory;
        abort_job(0, options.trace_dir, shared_memory);
        usleep(2000 * 1000);
        finish_abort(0, options.trace_dir, shared_memory);
      } else if (on_hang.kind == OnHang::Kind::Command) {
        const pid_t pid = watch::start_hang_command(on_hang.command, watcher.out_dir(), options.trace_dir, 0);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        std::cerr << "collmc watch: the --on-hang command exited "
                  << (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)) << "\n";
      }
      return kExitHangNamed;
    }
    if (++polls % 100 == 0 && watch::job_ended(options.trace_dir)) {
      watcher.poll();  // the last lines
      std::cerr << "collmc watch: every process of the job has ended; no hang named (" << watcher.stats().lines
                << " lines, " << watcher.stats().checks << " checks)\n";
      return kExitSafe;
    }
    if (time_limit > 0 && seconds_since(start) > time_limit) {
      std::cerr << "collmc watch: --time-limit " << time_limit << " s reached; no hang named (" << watcher.stats().lines
                << " lines, " << watcher.stats().checks << " checks)\n";
      return 124;
    }
    usleep(10 * 1000);
  }
  std::cerr << "collmc watch: interrupted; no hang named (" << watcher.stats().lines << " lines, "
            << watcher.stats().checks << " checks)\n";
  return 128 + watch_interrupted.load();
}

}  // namespace collmc::cli
