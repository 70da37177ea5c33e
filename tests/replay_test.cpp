// The replay engine without GPUs: plans built from schedules (and from JSON results), the model's
// predicted positions, clean refusals, and no process left behind.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "collmc/replay/plan.h"
#include "collmc/replay/replay.h"
#include "collmc/report/check_report.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

int turns_of(const replay::ThreadPlan& t) {
  int n = 0;
  for (const auto& s : t.steps) n += s.turn >= 0 ? 1 : 0;
  return n;
}

TEST(ReplayPlan, DeadlockScheduleEndsInThePredictedCalls) {
  model::World w = model::load_world(gpu_calibration_dir() + "/reg_cross_order.cmc");
  replay::ReplayPlan plan = replay::plan_for_scenario(w, {});
  EXPECT_EQ(plan.verdict, model::Verdict::Deadlock);
  ASSERT_EQ(plan.ranks.size(), 2u);
  // Every host call of the schedule is a turn, numbered 0..turns-1 across ranks.
  EXPECT_EQ(turns_of(plan.ranks[0][0]) + turns_of(plan.ranks[1][0]), plan.turns);
  std::vector<int> seen(static_cast<size_t>(plan.turns), 0);
  for (const auto& rank : plan.ranks)
    for (const auto& s : rank[0].steps)
      if (s.turn >= 0) seen[static_cast<size_t>(s.turn)]++;
  for (int c : seen) EXPECT_EQ(c, 1);
  // Rank 0 is predicted inside `register A wa`, rank 1 inside `register B wb`: each rank's last
  // scheduled call. (The rest of the program follows without turns; a blocked rank never gets there.)
  const int r0 = plan.expected_position[0][0], r1 = plan.expected_position[1][0];
  ASSERT_GE(r0, 0);
  ASSERT_GE(r1, 0);
  EXPECT_EQ(w.calls[static_cast<size_t>(r0)].text, "register A wa");
  EXPECT_EQ(w.calls[static_cast<size_t>(r1)].text, "register B wb");
  auto last_turn_call = [](const replay::ThreadPlan& t) {
    int call = -1;
    for (const auto& s : t.steps)
      if (s.turn >= 0) call = s.calls.front();
    return call;
  };
  EXPECT_EQ(last_turn_call(plan.ranks[0][0]), r0);
  EXPECT_EQ(last_turn_call(plan.ranks[1][0]), r1);
}

TEST(ReplayPlan, SafeScenarioRunsEveryCallOfTheFirstCompleteRun) {
  model::World w = model::load_world(gpu_calibration_dir() + "/warm_group_cross.cmc");
  replay::ReplayPlan plan = replay::plan_for_scenario(w, {});
  EXPECT_EQ(plan.verdict, model::Verdict::Safe);
  size_t calls = 0;
  for (const auto& rank : plan.ranks)
    for (const auto& s : rank[0].steps) calls += s.calls.size();
  EXPECT_EQ(calls, w.calls.size());
  for (const auto& rank : plan.expected_position) EXPECT_EQ(rank[0], replay::kFinished);
  bool group = false;
  for (const auto& s : plan.ranks[0][0].steps) group = group || (s.group && s.calls.size() == 2);
  EXPECT_TRUE(group);
}

TEST(ReplayPlan, ViolationKeepsTheCallsAfterTheViolatingStep) {
  // The illegal memory access of use_after_deregister is reported at the sync after the deregister.
  model::World w = model::load_world(gpu_calibration_dir() + "/warm_deregister_pending_coll.cmc");
  replay::ReplayPlan plan = replay::plan_for_scenario(w, {});
  EXPECT_EQ(plan.verdict, model::Verdict::UseAfterDeregister);
  const auto& steps = plan.ranks[0][0].steps;
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(w.calls[static_cast<size_t>(steps.back().calls.front())].text, "sync main");
  EXPECT_LT(steps.back().turn, 0);  // after the schedule: no turn
}

TEST(ReplayPlan, JsonResultGivesTheSamePlan) {
  const std::string path = source_dir() + "/examples/torch_hook_per_rank_order.cmc";
  model::World w = model::load_world(path);
  checker::CheckResult r = checker::check(w, {});
  char tmpl[] = "/tmp/collmc-result-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(tmpl);
    out << report::json_report(r);
  }
  model::World from_json_world;
  replay::ReplayPlan a = replay::plan_from_result(w, r);
  replay::ReplayPlan b = replay::plan_from_json(tmpl, from_json_world);
  std::remove(tmpl);
  ASSERT_EQ(a.turns, b.turns);
  EXPECT_EQ(a.expected_position, b.expected_position);
  for (size_t rank = 0; rank < a.ranks.size(); ++rank) {
    ASSERT_EQ(a.ranks[rank][0].steps.size(), b.ranks[rank][0].steps.size());
    for (size_t i = 0; i < a.ranks[rank][0].steps.size(); ++i) {
      EXPECT_EQ(a.ranks[rank][0].steps[i].calls, b.ranks[rank][0].steps[i].calls);
      EXPECT_EQ(a.ranks[rank][0].steps[i].turn, b.ranks[rank][0].steps[i].turn);
    }
  }
}

TEST(ReplayPlan, JsonOfAnEditedScenarioIsRejected) {
  char tmpl[] = "/tmp/collmc-result-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream out(tmpl);
    out << R"({"format": "collmc-result", "version": 1, "scenario": {"file": ")" << gpu_calibration_dir()
        << R"(/reg_cross_order.cmc"}, "calls": [], "verdict": "deadlock", "schedule": []})";
  }
  model::World w;
  EXPECT_THROW(replay::plan_from_json(tmpl, w), std::runtime_error);
  std::remove(tmpl);
}

int child_processes() {
  int n = 0;
  const std::string me = std::to_string(getpid());
  DIR* d = opendir("/proc");
  while (dirent* e = readdir(d)) {
    std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
    std::string pid, comm, state, ppid;
    if (stat >> pid >> comm >> state >> ppid && ppid == me) ++n;
  }
  closedir(d);
  return n;
}

TEST(ReplayRun, RefusesClearlyWithoutEnoughGpusAndLeavesNothingBehind) {
  int gpus = 0;
  std::string env = replay::nccl_environment(&gpus);
  model::World w = model::load_world(source_dir() + "/examples/nccl_three_comm_ring.cmc");
  replay::ReplayPlan plan = replay::plan_for_scenario(w, {});
  replay::ReplayReport report = replay::replay_nccl(plan, {});
  if (gpus >= 3) GTEST_SKIP() << "this machine has " << gpus << " GPUs: the refusal path is not reached";
  EXPECT_EQ(report.outcome, replay::Outcome::Refused);
  if (gpus == 0)
    EXPECT_FALSE(report.summary.empty()) << env;
  else
    EXPECT_NE(report.summary.find("3 ranks cannot be placed on"), std::string::npos) << report.summary;
  EXPECT_EQ(child_processes(), 0);
}

TEST(ReplayRun, MpiProfileIsNotRunOnNccl) {
  model::World w = model::load_world(mpi_calibration_dir() + "/mpi_win_cross_order.cmc");
  replay::ReplayReport report = replay::replay_nccl(replay::plan_for_scenario(w, {}), {});
  EXPECT_EQ(report.outcome, replay::Outcome::Refused);
  EXPECT_EQ(child_processes(), 0);
}

}  // namespace
}  // namespace collmc::testing
