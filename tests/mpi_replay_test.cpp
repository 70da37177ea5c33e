// The MPI replay backend: the plan file the rank processes read, refusals, and real runs with Open
// MPI (skipped where mpirun or collmc-mpi-rank is missing): a confirmed hang, a completed program,
// the early broadcast MPI allows, a rank's error, and nothing left behind by any of them.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "collmc/replay/plan.h"
#include "collmc/replay/replay.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

std::string temp_path(const std::string& text, const char* suffix) {
  static int n = 0;
  std::string path = "/tmp/collmc-mpi-test-" + std::to_string(getpid()) + "-" + std::to_string(n++) + suffix;
  std::ofstream(path) << text;
  return path;
}

// Processes whose command line names one of this process's shared blocks (mpirun and the ranks
// do), and blocks left in /dev/shm.
std::vector<std::string> leftovers() {
  const std::string mark = "collmc-replay-" + std::to_string(getpid()) + "-";
  std::vector<std::string> out;
  DIR* d = opendir("/proc");
  while (dirent* e = readdir(d)) {
    std::ifstream in(std::string("/proc/") + e->d_name + "/cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(mark) != std::string::npos) out.push_back(std::string("process ") + e->d_name);
  }
  closedir(d);
  d = opendir("/dev/shm");
  while (dirent* e = d ? readdir(d) : nullptr)
    if (std::string(e->d_name).rfind(mark, 0) == 0) out.push_back(std::string("/dev/shm/") + e->d_name);
  if (d) closedir(d);
  return out;
}

// A short watchdog for the runs that must hang; the default (5 s) for those that must complete, so
// a loaded CI machine does not turn a slow call into a hang.
replay::ReplayOptions fast(double hang_after_s = 5) {
  replay::ReplayOptions o;
  o.hang_after_s = hang_after_s;
  o.backend = replay::BackendKind::Mpi;
  return o;
}

#define REQUIRE_MPI()                                                                   \
  do {                                                                                  \
    if (std::string why = replay::mpi_unavailable(); !why.empty()) GTEST_SKIP() << why; \
  } while (0)

TEST(MpiReplayPlan, PlanFileRoundTrip) {
  model::World w = model::load_world(source_dir() + "/examples/mpi_correct_program.cmc");
  replay::ReplayPlan a = replay::plan_for_scenario(w, {});
  const std::string path = temp_path(replay::plan_to_json(a), ".json");
  model::World w2;
  replay::ReplayPlan b = replay::plan_from_file(path, w2);
  std::remove(path.c_str());
  EXPECT_EQ(b.verdict, a.verdict);
  EXPECT_EQ(b.turns, a.turns);
  EXPECT_EQ(b.expected_position, a.expected_position);
  ASSERT_EQ(b.ranks.size(), a.ranks.size());
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    ASSERT_EQ(b.ranks[r].size(), a.ranks[r].size());
    for (size_t t = 0; t < a.ranks[r].size(); ++t) {
      EXPECT_EQ(b.ranks[r][t].name, a.ranks[r][t].name);
      ASSERT_EQ(b.ranks[r][t].steps.size(), a.ranks[r][t].steps.size());
      for (size_t i = 0; i < a.ranks[r][t].steps.size(); ++i) {
        EXPECT_EQ(b.ranks[r][t].steps[i].calls, a.ranks[r][t].steps[i].calls);
        EXPECT_EQ(b.ranks[r][t].steps[i].spawn_thread, a.ranks[r][t].steps[i].spawn_thread);
        EXPECT_EQ(b.ranks[r][t].steps[i].turn, a.ranks[r][t].steps[i].turn);
      }
    }
  }
  EXPECT_EQ(w2.calls.size(), w.calls.size());
}

TEST(MpiReplayPlan, PlanFileOfAnEditedScenarioIsRejected) {
  model::World w = model::load_world(mpi_calibration_dir() + "/mpi_win_cross_order.cmc");
  auto j = nlohmann::json::parse(replay::plan_to_json(replay::plan_for_scenario(w, {})));
  j["calls"][1] = "register A elsewhere";
  const std::string edited = temp_path(j.dump(), ".json");
  j = nlohmann::json::parse(replay::plan_to_json(replay::plan_for_scenario(w, {})));
  j["ranks"][0][0]["steps"][0]["calls"][0] = 999;
  const std::string bad_call = temp_path(j.dump() + " ", ".json");
  model::World w2;
  EXPECT_THROW(replay::plan_from_file(edited, w2), std::runtime_error);
  EXPECT_THROW(replay::plan_from_file(bad_call, w2), std::runtime_error);
  EXPECT_THROW(replay::plan_from_file("/nonexistent/plan.json", w2), std::runtime_error);
  std::remove(edited.c_str());
  std::remove(bad_call.c_str());
}

TEST(MpiReplayRun, NcclProfileIsRefusedByTheMpiBackend) {
  model::World w = model::load_world(source_dir() + "/examples/reg_cross_order.cmc");
  replay::ReplayReport report = replay::replay_mpi(replay::plan_for_scenario(w, {}), fast());
  EXPECT_EQ(report.outcome, replay::Outcome::Refused);
  EXPECT_NE(report.summary.find("nccl-profile"), std::string::npos) << report.summary;
  EXPECT_TRUE(leftovers().empty());
}

TEST(MpiReplayRun, CrossOrderedWindowsHangIsConfirmedAndNothingOutlivesIt) {
  REQUIRE_MPI();
  model::World w = model::load_world(mpi_calibration_dir() + "/mpi_win_cross_order.cmc");
  replay::ReplayPlan plan = replay::plan_for_scenario(w, {});
  replay::ReplayOptions options = fast(2);
  options.backend = replay::BackendKind::Auto;  // picks MPI for `set profile = mpi`
  replay::ReplayReport report = replay::replay(plan, options);
  EXPECT_EQ(report.outcome, replay::Outcome::Confirmed) << replay::text_report(report);
  EXPECT_TRUE(report.agrees);
  // Both ranks sat in the registration the model predicts: confirmed after the quiet period, not
  // after --hang-after.
  EXPECT_EQ(report.hang_rule, replay::HangRule::Predicted);
  EXPECT_GE(report.hang_detect_seconds, options.confirm_after_s);
  EXPECT_LT(report.hang_detect_seconds, options.hang_after_s);
  EXPECT_GE(report.hang_exit_seconds, 0.0);
  EXPECT_NE(replay::text_report(report).find("every rank in the call the model predicts"), std::string::npos);
  ASSERT_EQ(report.ranks.size(), 2u);
  for (const auto& r : report.ranks) {
    EXPECT_EQ(r.outcome, replay::RankOutcome::HungKilled);
    EXPECT_EQ(r.threads[0].state, replay::ThreadState::InCall);
    EXPECT_EQ(w.calls[static_cast<size_t>(r.threads[0].call)].kind, model::OpKind::Register);
  }
  EXPECT_NE(report.backend.find("Open MPI"), std::string::npos) << report.backend;
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST(MpiReplayRun, WithoutTheEarlyConfirmationTheHangWaitsForHangAfter) {
  REQUIRE_MPI();
  model::World w = model::load_world(mpi_calibration_dir() + "/mpi_win_cross_order.cmc");
  replay::ReplayOptions options = fast(1.5);
  options.confirm_after_s = 0;
  replay::ReplayReport report = replay::replay_mpi(replay::plan_for_scenario(w, {}), options);
  EXPECT_EQ(report.outcome, replay::Outcome::Confirmed) << replay::text_report(report);
  EXPECT_EQ(report.hang_rule, replay::HangRule::NoProgress);
  EXPECT_GE(report.hang_detect_seconds, 1.5);
  const auto j = nlohmann::json::parse(replay::json_report(report));
  EXPECT_EQ(j.at("hang_rule"), "no_progress");
  EXPECT_GE(j.at("hang_exit_seconds").get<double>(), 0.0);
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

// --launcher mpirun: the ranks share no memory with collmc; plan, sequencer turns, progress and the
// verdict go through the TCP store (the multi-node path, here with CPU-only ranks on one host).
replay::ReplayOptions through_mpirun(double hang_after_s = 5) {
  replay::ReplayOptions o = fast(hang_after_s);
  o.launcher = replay::LauncherKind::Mpirun;
  return o;
}

TEST(MpiReplayStore, HangIsConfirmedThroughTheStore) {
  REQUIRE_MPI();
  model::World w = model::load_world(mpi_calibration_dir() + "/mpi_win_cross_order.cmc");
  replay::ReplayReport report = replay::replay(replay::plan_for_scenario(w, {}), through_mpirun());
  EXPECT_EQ(report.outcome, replay::Outcome::Confirmed) << replay::text_report(report);
  EXPECT_EQ(report.launcher, "mpirun");
  EXPECT_EQ(report.hang_rule, replay::HangRule::Predicted);
  EXPECT_NE(report.backend.find("TCP store"), std::string::npos) << report.backend;
  for (const auto& r : report.ranks) {
    EXPECT_EQ(r.threads[0].state, replay::ThreadState::InCall);
    EXPECT_EQ(w.calls[static_cast<size_t>(r.threads[0].call)].kind, model::OpKind::Register);
  }
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST(MpiReplayStore, ThreadsAndTheScheduleOrderCompleteThroughTheStore) {
  REQUIRE_MPI();
  // Four ranks with a helper thread each: the sequencer's turns pass between processes only through
  // the store; timings come back with every rank's slot.
  model::World w = model::load_world(source_dir() + "/examples/mpi_correct_program.cmc");
  replay::ReplayPlan plan = replay::plan_for_scenario(w, {});
  ASSERT_GT(plan.turns, 4);
  // A program that must complete gets a long watchdog: four ranks of three threads each (main, helper,
  // the store's mirror) on a loaded two-core machine may stall for seconds without hanging.
  replay::ReplayReport report = replay::replay(plan, through_mpirun(30));
  EXPECT_EQ(report.outcome, replay::Outcome::Completed) << replay::text_report(report);
  size_t timed = 0;
  for (const auto& r : report.ranks) {
    EXPECT_EQ(r.outcome, replay::RankOutcome::Finished);
    for (const auto& t : r.threads) EXPECT_EQ(t.state, replay::ThreadState::Finished);
    timed += r.calls.size();
  }
  size_t steps = 0;
  for (const auto& rank : plan.ranks)
    for (const auto& t : rank)
      for (const auto& s : t.steps) steps += s.spawn_thread < 0;
  EXPECT_EQ(timed, steps);
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST(MpiReplayStore, ARanksErrorComesBackThroughTheStore) {
  REQUIRE_MPI();
  const std::string path = temp_path(
      "ranks 2\nset profile = mpi\ncomm A = all\nrank * {\n  alloc x 4KiB\n  free x\n  all_reduce A x count=4\n}\n",
      ".cmc");
  model::World w = model::load_world(path);
  replay::ReplayReport report = replay::replay(replay::plan_for_scenario(w, {}), through_mpirun());
  std::remove(path.c_str());
  EXPECT_EQ(report.outcome, replay::Outcome::Crashed) << replay::text_report(report);
  EXPECT_NE(report.summary.find("the buffer was freed"), std::string::npos) << report.summary;
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST(MpiReplayStore, NcclThroughMpirunNeverStartsRanksWithoutGpus) {
  model::World w = model::load_world(source_dir() + "/examples/reg_cross_order.cmc");
  int gpus = 0;
  replay::nccl_environment(&gpus);
  if (gpus >= w.ranks) GTEST_SKIP() << "this machine has GPUs for the scenario";
  replay::ReplayOptions o = through_mpirun();
  o.backend = replay::BackendKind::Nccl;
  replay::ReplayReport report = replay::replay(replay::plan_for_scenario(w, {}), o);
  EXPECT_EQ(report.outcome, replay::Outcome::Refused) << replay::text_report(report);
  EXPECT_TRUE(report.ranks.empty());
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST(MpiReplayRun, CorrectProgramWithThreadsCompletes) {
  REQUIRE_MPI();
  model::World w = model::load_world(source_dir() + "/examples/mpi_correct_program.cmc");
  replay::ReplayReport report = replay::replay_mpi(replay::plan_for_scenario(w, {}), fast());
  EXPECT_EQ(report.outcome, replay::Outcome::Completed) << replay::text_report(report);
  EXPECT_TRUE(report.agrees);
  for (const auto& r : report.ranks) {
    EXPECT_EQ(r.outcome, replay::RankOutcome::Finished);
    ASSERT_EQ(r.threads.size(), 2u);  // main and helper
    for (const auto& t : r.threads) EXPECT_EQ(t.state, replay::ThreadState::Finished);
    EXPECT_FALSE(r.calls.empty());
  }
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

TEST(MpiReplayRun, EarlyBroadcastIsADifferenceMpiAllows) {
  REQUIRE_MPI();
  model::World w = model::load_world(mpi_calibration_dir() + "/mpi_bcast_cross_order_small.cmc");
  replay::ReplayReport report = replay::replay_mpi(replay::plan_for_scenario(w, {}), fast());
  EXPECT_TRUE(report.agrees) << replay::text_report(report);
  const std::string text = replay::text_report(report);
  EXPECT_NE(text.find("model assumes: the prediction is under mpi_progress = sync"), std::string::npos) << text;
  if (report.outcome == replay::Outcome::NotReproduced) {  // Open MPI 4.1: the one-int broadcasts go eagerly
    EXPECT_TRUE(report.allowed_difference);
    EXPECT_NE(text.find("MPI allows"), std::string::npos) << text;
  } else {
    EXPECT_EQ(report.outcome, replay::Outcome::Confirmed) << text;
  }
}

TEST(MpiReplayRun, ARanksErrorIsACrashAndTheJobIsTornDown) {
  REQUIRE_MPI();
  const std::string path = temp_path(
      "ranks 2\nset profile = mpi\ncomm A = all\nrank * {\n  alloc x 4KiB\n  free x\n  all_reduce A x count=4\n}\n",
      ".cmc");
  model::World w = model::load_world(path);
  replay::ReplayReport report = replay::replay_mpi(replay::plan_for_scenario(w, {}), fast());
  std::remove(path.c_str());
  EXPECT_EQ(report.outcome, replay::Outcome::Crashed) << replay::text_report(report);
  EXPECT_NE(report.summary.find("the buffer was freed"), std::string::npos) << report.summary;
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

// Issue 23, mpi_progress (SEMANTICS_NOTES.md, "MPI progress"): what Open MPI's blocking rooted
// collectives do when their early ranks then wait outside MPI, over shared memory and over TCP. The
// calibration of the setting: neither transport is weak for them (the weak model's deadlock is not
// reproduced), and the strong model's early broadcast is what Open MPI does with one int.
TEST(MpiReplayRun, OpenMpisRootedCollectivesAreNotWeakOnEitherTransport) {
  REQUIRE_MPI();
  for (const char* transport : {"vader,self", "tcp,self"}) {
    ::setenv("OMPI_MCA_btl", transport, 1);
    model::World weak =
        model::load_world(source_dir() + "/tests/hang-classes/mpi_weak_progress_reduce_then_host_wait.cmc");
    replay::ReplayReport report = replay::replay_mpi(replay::plan_for_scenario(weak, {}), fast());
    EXPECT_EQ(report.outcome, replay::Outcome::NotReproduced) << transport << "\n" << replay::text_report(report);
    EXPECT_FALSE(report.agrees) << transport;
    EXPECT_FALSE(report.allowed_difference) << transport;  // the model let rank 1 leave: no excuse left
    model::World strong = model::load_world(source_dir() + "/tests/hang-classes/mpi_strong_progress_cross_bcast.cmc");
    report = replay::replay_mpi(replay::plan_for_scenario(strong, {}), fast());
    EXPECT_EQ(report.outcome, replay::Outcome::Completed) << transport << "\n" << replay::text_report(report);
    EXPECT_TRUE(report.agrees) << transport;
  }
  ::unsetenv("OMPI_MCA_btl");
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

// Issue 32: the same reduce without `set mpi_progress`: the default finds the hang under weak progress
// (sync and strong are safe), the plan follows the weak model, and Open MPI, whose blocking reduce is
// not weak, completes it: a difference MPI allows (one run shows one progress model), said as such.
// With `set mpi_progress = weak` the same run disagrees (the test above).
TEST(MpiReplayRun, AHangOnlyWeakProgressReachesIsAnAllowedDifferenceOnOpenMpi) {
  REQUIRE_MPI();
  const std::string path = temp_path(
      "ranks 2\nset profile = mpi\ncomm A = all\nrank 0 {\n  reduce A x root=0 count=1\n  store_set reduced\n}\n"
      "rank 1 {\n  reduce A x root=0 count=1\n  store_wait reduced\n}\n",
      ".cmc");
  model::World w = model::load_world(path);
  const replay::ReplayPlan plan = replay::plan_for_scenario(w, {});
  EXPECT_EQ(plan.verdict, model::Verdict::Deadlock);
  EXPECT_EQ(plan.mpi_progress, model::MpiProgress::Weak);
  replay::ReplayReport report = replay::replay_mpi(plan, fast());
  std::remove(path.c_str());
  const std::string text = replay::text_report(report);
  EXPECT_EQ(report.outcome, replay::Outcome::NotReproduced) << text;
  EXPECT_TRUE(report.agrees) << text;
  EXPECT_TRUE(report.allowed_difference) << text;
  EXPECT_NE(text.find("needs mpi_progress = weak (sync finds none)"), std::string::npos) << text;
  EXPECT_NE(text.find("model assumes: the prediction is under mpi_progress = weak"), std::string::npos) << text;
  EXPECT_EQ(leftovers(), std::vector<std::string>{});
}

}  // namespace
}  // namespace collmc::testing
