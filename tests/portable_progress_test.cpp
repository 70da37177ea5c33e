// Issue 32, item 5: portable MPI progress by default. A scenario that does not set `mpi_progress` and has
// a rooted MPI collective is checked under every progress model MPI allows (sync, strong, weak: MPI 4.1
// sec. 2.9, 6.14); the first violation any finds is the verdict and the result names the model; an
// explicit `set mpi_progress = X` checks X alone. docs/SEMANTICS_NOTES.md, "MPI progress".
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/print.h"
#include "collmc/model/world.h"
#include "collmc/replay/plan.h"
#include "collmc/report/check_report.h"
#include "collmc/report/html_report.h"
#include "collmc/shrink/shrink.h"

namespace collmc::testing {
namespace {

using model::MpiProgress;
using model::Verdict;

model::World world_of(const std::string& text) { return model::resolve(model::parse_string(text, "t.cmc")); }

// The usual MPI bootstrap of an NCCL comm: the root broadcasts the unique id and blocks in
// ncclCommInitRank, outside MPI. Safe under sync and strong; under weak rank 1's broadcast waits for
// the root to enter MPI again, which it does only after the init rank 1 never reaches.
const std::string kBootstrap =
    "ranks 2\ncomm world = all mpi\ncomm G = [0, 1] uninit\n"
    "rank * {\n broadcast world uid root=0 count=16 dtype=int8\n init G\n all_reduce G x\n sync main\n}\n";

std::string with_knob(const std::string& scenario, const std::string& value) {
  return "ranks 2\nset mpi_progress = " + value + "\n" + scenario.substr(scenario.find('\n') + 1);
}

TEST(PortableProgress, AHangOnlyWeakProgressReachesIsADeadlockByDefaultNamingWeak) {
  const model::World w = world_of(kBootstrap);
  EXPECT_EQ(w.knobs.mpi_progress, MpiProgress::Portable);
  const auto r = checker::check(w, {});
  EXPECT_EQ(r.verdict, Verdict::Deadlock);
  EXPECT_EQ(r.mpi_progress, MpiProgress::Weak);
  EXPECT_TRUE(r.progress_matters);
  ASSERT_EQ(r.progress_runs.size(), 3u);
  EXPECT_EQ(r.progress_runs[0].progress, MpiProgress::Sync);
  EXPECT_EQ(r.progress_runs[0].verdict, Verdict::Safe);
  EXPECT_EQ(r.progress_runs[1].progress, MpiProgress::Strong);
  EXPECT_EQ(r.progress_runs[1].verdict, Verdict::Safe);
  EXPECT_EQ(r.progress_runs[2].progress, MpiProgress::Weak);
  EXPECT_EQ(r.progress_runs[2].verdict, Verdict::Deadlock);
  const std::string text = report::text_report(r);
  EXPECT_NE(text.find("mpi_progress: portable (the default): sync safe, strong safe, weak deadlock; the deadlock "
                      "needs mpi_progress = weak"),
            std::string::npos)
      << text;
  // The schedule and the graph are the weak model's: the wait that needs the root back in MPI.
  EXPECT_NE(text.find("for the ranks that left it early to enter MPI again"), std::string::npos) << text;
  const std::string html = report::html_report(r, "");
  EXPECT_NE(html.find("the deadlock needs mpi_progress = weak"), std::string::npos);
}

TEST(PortableProgress, AnExplicitModelChecksThatModelAlone) {
  const model::World sync_world = world_of(with_knob(kBootstrap, "sync"));
  const auto sync = checker::check(sync_world, {});  // the result points at its world
  EXPECT_EQ(sync.verdict, Verdict::Safe);
  ASSERT_EQ(sync.progress_runs.size(), 1u);
  EXPECT_EQ(sync.progress_runs[0].progress, MpiProgress::Sync);
  EXPECT_NE(report::text_report(sync).find("mpi_progress: sync (set by the scenario; the only model checked)"),
            std::string::npos);
  EXPECT_EQ(checker::check(world_of(with_knob(kBootstrap, "strong")), {}).verdict, Verdict::Safe);
  const auto weak = checker::check(world_of(with_knob(kBootstrap, "weak")), {});
  EXPECT_EQ(weak.verdict, Verdict::Deadlock);
  EXPECT_EQ(weak.progress_runs.size(), 1u);
  // `portable` is the default's name: setting it is the same as not setting it.
  EXPECT_EQ(checker::check(world_of(with_knob(kBootstrap, "portable")), {}).progress_runs.size(), 3u);
}

TEST(PortableProgress, SafeUnderEveryModelStaysSafe) {
  // Every rank re-enters MPI after its broadcast (the barrier), and nothing waits outside MPI.
  const model::World w = world_of(
      "ranks 3\nset profile = mpi\ncomm A = all\nrank * {\n broadcast A x root=0 count=1\n barrier A\n"
      " reduce A y root=2 count=1\n}\n");
  const auto r = checker::check(w, {});
  EXPECT_EQ(r.verdict, Verdict::Safe);
  ASSERT_EQ(r.progress_runs.size(), 3u);
  for (const auto& run : r.progress_runs) EXPECT_EQ(run.verdict, Verdict::Safe);
  EXPECT_NE(report::text_report(r).find("safe under every model MPI allows"), std::string::npos);
  // The statistics add up the three searches.
  uint64_t states = 0;
  for (const auto m : {"sync", "strong", "weak"})
    states += checker::check(world_of("ranks 3\nset profile = mpi\nset mpi_progress = " + std::string(m) +
                                      "\ncomm A = all\nrank * {\n broadcast A x root=0 count=1\n barrier A\n"
                                      " reduce A y root=2 count=1\n}\n"),
                             {})
                  .stats.states;
  EXPECT_EQ(r.stats.states, states);
}

TEST(PortableProgress, AHangOnlySyncReachesIsNamedSync) {
  // tests/calibration-mpi/mpi_bcast_cross_order_small.cmc: cross-ordered broadcasts rooted at rank 0
  // hang when broadcasts synchronize; under strong or weak progress rank 0 leaves both at once.
  const std::string cross =
      "ranks 2\nset profile = mpi\ncomm A = all\ncomm B = all\nrank 0 {\n broadcast A x root=0\n broadcast B x "
      "root=0\n}\nrank 1 {\n broadcast B x root=0\n broadcast A x root=0\n}\n";
  const model::World w = world_of(cross);
  const auto r = checker::check(w, {});
  EXPECT_EQ(r.verdict, Verdict::Deadlock);
  EXPECT_EQ(r.mpi_progress, MpiProgress::Sync);
  ASSERT_EQ(r.progress_runs.size(), 1u);  // the first violation ends the check
  EXPECT_NE(report::text_report(r).find("the deadlock needs mpi_progress = sync"), std::string::npos);
  EXPECT_EQ(checker::check(world_of(with_knob(cross, "strong")), {}).verdict, Verdict::Safe);
  EXPECT_EQ(checker::check(world_of(with_knob(cross, "weak")), {}).verdict, Verdict::Safe);
}

TEST(PortableProgress, NothingRootedChecksOnceAndNamesNoModel) {
  const model::World w = world_of(
      "ranks 2\nset profile = mpi\ncomm A = all\ncomm B = all\nrank 0 {\n barrier A\n barrier B\n}\n"
      "rank 1 {\n barrier B\n barrier A\n}\n");
  const auto r = checker::check(w, {});
  EXPECT_EQ(r.verdict, Verdict::Deadlock);
  EXPECT_FALSE(r.progress_matters);
  EXPECT_EQ(r.progress_runs.size(), 1u);
  EXPECT_EQ(report::text_report(r).find("mpi_progress:"), std::string::npos);
  const auto j = nlohmann::json::parse(report::json_report(r));
  EXPECT_TRUE(j.at("mpi_progress").is_null());
  EXPECT_EQ(j.at("scenario").at("knobs").at("mpi_progress"), "portable");
}

TEST(PortableProgress, TheJsonResultNamesTheModels) {
  const model::World portable = world_of(kBootstrap);
  auto j = nlohmann::json::parse(report::json_report(checker::check(portable, {})));
  EXPECT_EQ(j.at("scenario").at("knobs").at("mpi_progress"), "portable");
  const auto& p = j.at("mpi_progress");
  EXPECT_EQ(p.at("setting"), "portable");
  EXPECT_EQ(p.at("checked").at("sync"), "safe");
  EXPECT_EQ(p.at("checked").at("strong"), "safe");
  EXPECT_EQ(p.at("checked").at("weak"), "deadlock");
  EXPECT_EQ(p.at("verdict_under"), "weak");
  const model::World sync = world_of(with_knob(kBootstrap, "sync"));
  j = nlohmann::json::parse(report::json_report(checker::check(sync, {})));
  EXPECT_EQ(j.at("mpi_progress").at("setting"), "sync");
  EXPECT_EQ(j.at("mpi_progress").at("checked").size(), 1u);
  EXPECT_TRUE(j.at("mpi_progress").at("verdict_under").is_null());  // safe: no verdict to place
}

TEST(PortableProgress, AnInconclusiveSearchLeavesTheWholeInconclusiveUnlessAnotherFoundAHang) {
  checker::SearchOptions tiny;
  tiny.max_states = 2;
  const model::World w = world_of(kBootstrap);
  const auto r = checker::check(w, tiny);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_FALSE(r.limit.empty());
  EXPECT_EQ(r.progress_runs.size(), 3u);         // a later model could still have found a hang
  EXPECT_EQ(r.mpi_progress, MpiProgress::Sync);  // the first inconclusive search's
  // Sync and strong are safe only after 122 states each; weak finds its deadlock in 4. With 10 states a
  // search, the first two stop at the limit and the third's hang is the verdict: a found hang is a hang.
  std::string bigger = kBootstrap.substr(0, kBootstrap.rfind('}'));
  bigger += " all_reduce world a count=1\n all_reduce world b count=1\n";
  for (int i = 0; i < 4; ++i) bigger += " either { all_reduce world c count=1 } or { all_reduce world c count=1 }\n";
  bigger += "}\n";
  checker::SearchOptions ten;
  ten.max_states = 10;
  const model::World big = world_of(bigger);
  const auto found = checker::check(big, ten);
  EXPECT_EQ(found.verdict, Verdict::Deadlock);
  EXPECT_EQ(found.mpi_progress, MpiProgress::Weak);
  ASSERT_EQ(found.progress_runs.size(), 3u);
  EXPECT_EQ(found.progress_runs[0].verdict, Verdict::Inconclusive);
  EXPECT_EQ(found.progress_runs[1].verdict, Verdict::Inconclusive);
  EXPECT_TRUE(found.limit.empty());
  EXPECT_EQ(checker::check(big, {}).verdict, Verdict::Deadlock);
}

TEST(PortableProgress, TheDefaultPrintsAsNothingAndEveryModelRoundTrips) {
  EXPECT_EQ(model::print_world(world_of(kBootstrap), "").find("mpi_progress"), std::string::npos);
  for (const char* m : {"sync", "strong", "weak"}) {
    const std::string printed = model::print_world(world_of(with_knob(kBootstrap, m)), "");
    EXPECT_NE(printed.find("set mpi_progress = " + std::string(m)), std::string::npos) << printed;
    EXPECT_EQ(world_of(printed).knobs.mpi_progress, world_of(with_knob(kBootstrap, m)).knobs.mpi_progress);
  }
  EXPECT_EQ(model::mpi_progress_name(MpiProgress::Portable), "portable");
}

TEST(PortableProgress, AHangFoundUnderWeakShrinksUnderWeak) {
  // Two bystander ranks with their own barrier: shrink drops them, and keeps the weak model.
  const model::World w = world_of(
      "ranks 4\ncomm world = [0, 1] mpi\ncomm side = [2, 3] mpi\ncomm G = [0, 1] uninit\n"
      "rank * {\n when rank in [0, 1] {\n  broadcast world uid root=0 count=16 dtype=int8\n  init G\n"
      "  all_reduce G x\n  sync main\n }\n when rank in [2, 3] {\n  barrier side\n }\n}\n");
  const shrink::ShrinkResult s = shrink::shrink(w, {});
  ASSERT_EQ(s.verdict, Verdict::Deadlock) << s.text;
  EXPECT_NE(s.text.find("set mpi_progress = weak"), std::string::npos) << s.text;
  ASSERT_TRUE(s.world);
  EXPECT_EQ(s.world->ranks, 2) << s.text;
  const auto again = checker::check(*s.world, {});
  EXPECT_EQ(again.verdict, Verdict::Deadlock);
  EXPECT_EQ(again.mpi_progress, MpiProgress::Weak);
}

TEST(PortableProgress, AReplayOfTheJsonResultFollowsTheModelItNames) {
  const std::string scenario = ::testing::TempDir() + "portable_bootstrap.cmc";
  const std::string result = ::testing::TempDir() + "portable_bootstrap.json";
  std::ofstream(scenario) << kBootstrap;
  const model::World w = model::load_world(scenario);
  const auto r = checker::check(w, {});
  std::ofstream(result) << report::json_report(r);
  model::World loaded;
  const replay::ReplayPlan plan = replay::plan_from_json(result, loaded);
  EXPECT_EQ(plan.verdict, Verdict::Deadlock);
  EXPECT_EQ(plan.mpi_progress, MpiProgress::Weak);
  EXPECT_TRUE(plan.progress_matters);
  // Under weak the root's next call (the init) is issued before rank 1 leaves the broadcast.
  const replay::ReplayPlan direct = replay::plan_from_result(w, r);
  EXPECT_EQ(direct.expected_position, plan.expected_position);
  std::remove(scenario.c_str());
  std::remove(result.c_str());
}

}  // namespace
}  // namespace collmc::testing
