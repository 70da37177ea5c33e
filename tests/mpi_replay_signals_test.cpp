// Interrupting a replay as a user would, with the MPI backend on this machine's CPUs: SIGINT,
// SIGTERM or SIGHUP to collmc ends it within two seconds with INTERRUPTED, every rank process ended
// and nothing of the run left in /dev/shm (its shared block, its run directory with Open MPI's
// session directory and segments); after a SIGKILL of collmc, the next replay removes what the dead
// one left, and only that. Skipped where mpirun or collmc-mpi-rank is missing.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

#include "collmc/replay/replay.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

#define REQUIRE_MPI()                                                                   \
  do {                                                                                  \
    if (std::string why = replay::mpi_unavailable(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

std::string mark_of(pid_t collmc) { return "collmc-replay-" + std::to_string(collmc) + "-"; }

// Processes whose command line names the run of `collmc` (mpirun names its run directory, every
// rank its shared block or its run), and whose program's name contains `program`.
std::vector<std::string> run_processes(pid_t collmc, const char* program = "") {
  std::vector<std::string> out;
  const std::string mark = mark_of(collmc);
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos || name == std::to_string(collmc)) continue;
    std::string cmdline, line;
    try {  // a process that ends while it is read makes libstdc++'s filebuf throw (read: ESRCH)
      std::ifstream in(e.path() / "cmdline");
      cmdline.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      std::ifstream stat(e.path() / "stat");
      std::getline(stat, line);
    } catch (const std::ios_base::failure&) {
      continue;
    }
    const size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') continue;  // reaped soon
    const std::string argv0 = cmdline.substr(0, cmdline.find('\0'));
    if (cmdline.find(mark) != std::string::npos && argv0.find(program) != std::string::npos)
      out.push_back("process " + name);
  }
  return out;
}

std::vector<std::string> shm_entries(const std::string& prefix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator("/dev/shm"))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path().string());
  return out;
}

// Open MPI's shared-memory segments (vader_segment.*) anywhere under `dir`.
int vader_segments(const fs::path& dir) {
  int n = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec))
    n += it->path().filename().string().rfind("vader_segment", 0) == 0;
  return n;
}

template <class Pred>
bool wait_for(Pred pred, double seconds) {
  const auto t0 = Clock::now();
  while (!pred()) {
    if (std::chrono::duration<double>(Clock::now() - t0).count() > seconds) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

struct Collmc {
  pid_t pid = -1;
  std::string output_path;
};

// collmc replay ARGS with its output in a file.
Collmc start_replay(const std::vector<std::string>& args) {
  Collmc c;
  c.output_path =
      fresh_scratch_dir("signals", true) + "/out-" + std::to_string(Clock::now().time_since_epoch().count());
  std::vector<std::string> all = {collmc_binary(), "replay"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  c.pid = fork();
  if (c.pid == 0) {
    const int fd = open(c.output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return c;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A replay of a two-rank hang that would wait a minute for its verdict, once both ranks are blocked
// in their calls (Open MPI's segments exist).
Collmc start_long_hang(const std::string& launcher) {
  Collmc c = start_replay({"--backend", "mpi", "--launcher", launcher, "--confirm-after", "0", "--hang-after", "60",
                           mpi_calibration_dir() + "/mpi_win_cross_order.cmc"});
  if (!wait_for([&] { return run_processes(c.pid, "collmc-mpi-rank").size() == 2; }, 60)) {
    ADD_FAILURE() << "the ranks did not start: " << read_all(c.output_path);
    kill(c.pid, SIGTERM);
  }
  // MPI_Win_create uses shared memory between the two ranks: its segments are in the run directory.
  EXPECT_TRUE(wait_for(
      [&] {
        for (const auto& e : shm_entries(mark_of(c.pid)))
          if (vader_segments(e) > 0) return true;
        return false;
      },
      30))
      << "no vader_segment in the run directory: " << read_all(c.output_path);
  return c;
}

class MpiReplayInterrupt : public ::testing::TestWithParam<std::tuple<int, std::string>> {};

TEST_P(MpiReplayInterrupt, SignalEndsTheRunWithNothingLeft) {
  REQUIRE_MPI();
  const auto& [sig, launcher] = GetParam();
  Collmc c = start_long_hang(launcher);
  const auto t0 = Clock::now();
  ASSERT_EQ(kill(c.pid, sig), 0);
  int status = 0;
  ASSERT_TRUE(wait_for([&] { return waitpid(c.pid, &status, WNOHANG) == c.pid; }, 10)) << "collmc did not exit";
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string out = read_all(c.output_path);
#ifdef COLLMC_SANITIZED_BUILD
  const double bound = 6;  // ASan + UBSan slow collmc's own teardown several times over
#else
  const double bound = 2.5;
#endif
  EXPECT_LT(seconds, bound) << out;
  ASSERT_TRUE(WIFEXITED(status)) << out;
  EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << out;
  EXPECT_NE(out.find("INTERRUPTED"), std::string::npos) << out;
  EXPECT_NE(out.find(std::string("interrupted by ") + (sig == SIGINT    ? "SIGINT"
                                                       : sig == SIGTERM ? "SIGTERM"
                                                                        : "SIGHUP")),
            std::string::npos)
      << out;
  EXPECT_EQ(run_processes(c.pid), std::vector<std::string>{}) << out;
  // The run directory, which held Open MPI's segments (start_long_hang saw them there), is gone.
  EXPECT_EQ(shm_entries(mark_of(c.pid)), std::vector<std::string>{}) << out;
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<int, std::string>>& param) {
  const int sig = std::get<0>(param.param);
  return std::string(sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP") + "_" + std::get<1>(param.param);
}

INSTANTIATE_TEST_SUITE_P(Signals, MpiReplayInterrupt,
                         ::testing::Values(std::make_tuple(SIGINT, std::string("local")),
                                           std::make_tuple(SIGTERM, std::string("local")),
                                           std::make_tuple(SIGHUP, std::string("local")),
                                           std::make_tuple(SIGINT, std::string("mpirun")),
                                           std::make_tuple(SIGTERM, std::string("mpirun"))),
                         case_name);

TEST(MpiReplayInterrupt, AfterSigkillTheNextReplayRemovesWhatTheDeadOneLeft) {
  REQUIRE_MPI();
  Collmc c = start_long_hang("local");
  ASSERT_EQ(kill(c.pid, SIGKILL), 0);
  waitpid(c.pid, nullptr, 0);
  // mpirun dies with collmc and the ranks with mpirun (PR_SET_PDEATHSIG).
  EXPECT_TRUE(wait_for([&] { return run_processes(c.pid).empty(); }, 10))
      << ::testing::PrintToString(run_processes(c.pid));
  const std::vector<std::string> left = shm_entries(mark_of(c.pid));
  EXPECT_FALSE(left.empty()) << "a SIGKILLed collmc cannot clean up: its run directory stays";
  // Something of a live collmc (this test's own pid) must stay.
  const std::string alive = "/dev/shm/" + mark_of(getpid()) + "not-a-leftover";
  std::ofstream(alive) << "x";
  std::string out;
  const int rc = run_command(
      collmc_binary() + " replay --backend mpi " + source_dir() + "/examples/mpi_correct_program.cmc", &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(shm_entries(mark_of(c.pid)), std::vector<std::string>{}) << out;
  for (const auto& l : left) EXPECT_NE(out.find("removed " + l), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(alive));
  fs::remove(alive);
}

}  // namespace
}  // namespace collmc::testing
