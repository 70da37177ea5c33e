// The wait-for graph of deadlocks: its cycles for known cases, the cause when a rank exited, DOT
// and SVG for every deadlocking calibration scenario and example, and folding of large worlds.
#include <gtest/gtest.h>

#include <set>

#include "collmc/checker/suite.h"
#include "collmc/checker/wait_for_graph.h"
#include "collmc/gen/generators.h"
#include "collmc/report/html_report.h"
#include "collmc/report/wait_for_dot.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

checker::CheckResult check_file(model::World& world, const std::string& path) {
  world = model::load_world(path);
  return checker::check(world, {});
}

std::set<std::string> cycle_comms(const model::World& w, const checker::WaitForGraph& g) {
  std::set<std::string> comms;
  for (const auto& e : g.edges)
    if (e.on_cycle && e.comm >= 0) comms.insert(w.comm_name(e.comm));
  return comms;
}

TEST(WaitForGraph, RegCrossOrderIsTheTwoRankCycleThroughAAndB) {
  model::World w;
  auto r = check_file(w, gpu_calibration_dir() + "/reg_cross_order.cmc");
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  const auto& g = r.wait_for;
  ASSERT_EQ(g.cycles.size(), 1u);
  ASSERT_EQ(g.cycles[0].size(), 2u);
  std::set<int> ranks;
  for (int n : g.cycles[0]) {
    EXPECT_EQ(g.nodes[static_cast<size_t>(n)].kind, checker::WaitNode::Kind::HostThread);
    ranks.insert(g.nodes[static_cast<size_t>(n)].rank);
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1}));
  EXPECT_EQ(cycle_comms(w, g), (std::set<std::string>{"A", "B"}));
  // rank 0 waits for rank 1 in A; rank 1 for rank 0 in B.
  for (const auto& e : g.edges) {
    if (!e.on_cycle) continue;
    const auto& from = g.nodes[static_cast<size_t>(e.from)];
    EXPECT_EQ(w.comm_name(e.comm), from.rank == 0 ? "A" : "B");
  }
  ASSERT_EQ(g.explanations.size(), 1u);
  EXPECT_NE(g.explanations[0].find("rank 0 waits in register A wa"), std::string::npos) << g.explanations[0];
  EXPECT_NE(g.explanations[0].find("for rank 1, which waits in register B wb"), std::string::npos) << g.explanations[0];
}

TEST(WaitForGraph, ThreeCommunicatorRingHasACycleOfLengthThree) {
  model::World w;
  auto r = check_file(w, source_dir() + "/examples/nccl_three_comm_ring.cmc");
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  ASSERT_EQ(r.wait_for.cycles.size(), 1u);
  EXPECT_EQ(r.wait_for.cycles[0].size(), 3u);
  EXPECT_EQ(cycle_comms(w, r.wait_for).size(), 3u);
  model::World mpi;
  auto m = check_file(mpi, source_dir() + "/examples/mpi_three_comm_ring.cmc");
  ASSERT_EQ(m.wait_for.cycles.size(), 1u);
  EXPECT_EQ(m.wait_for.cycles[0].size(), 3u);
}

TEST(WaitForGraph, WaitOnARankThatExitedIsNamedWithoutACycle) {
  model::World w;
  auto r = check_file(w, gpu_calibration_dir() + "/register_size_zero.cmc");
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  EXPECT_TRUE(r.wait_for.cycles.empty());
  bool exited = false;
  for (const auto& n : r.wait_for.nodes) exited = exited || (n.kind == checker::WaitNode::Kind::Exited && n.rank == 0);
  EXPECT_TRUE(exited);
  ASSERT_EQ(r.wait_for.explanations.size(), 1u);
  EXPECT_NE(r.wait_for.explanations[0].find("rank 1 waits in register A wa"), std::string::npos);
  EXPECT_NE(r.wait_for.explanations[0].find("rank 0, which never reached that call"), std::string::npos);
}

TEST(WaitForGraph, WarmCollectivesCrossOrderedOnOneStreamCycleThroughStreamHeads) {
  model::World w;
  auto r = check_file(w, gpu_calibration_dir() + "/warm_coll_cross_same_stream.cmc");
  ASSERT_EQ(r.wait_for.cycles.size(), 1u);
  for (int n : r.wait_for.cycles[0])
    EXPECT_EQ(r.wait_for.nodes[static_cast<size_t>(n)].kind, checker::WaitNode::Kind::StreamHead);
  // Both host threads wait in `sync main` for their own stuck stream.
  int sync_edges = 0;
  for (const auto& e : r.wait_for.edges)
    if (r.wait_for.nodes[static_cast<size_t>(e.from)].kind == checker::WaitNode::Kind::HostThread &&
        e.label == "stream main")
      ++sync_edges;
  EXPECT_EQ(sync_edges, 2);
}

TEST(WaitForGraph, ColdCollectiveWaitsInTheConnect) {
  model::World w;
  auto r = check_file(w, gpu_calibration_dir() + "/cold_coll_then_register.cmc");
  ASSERT_EQ(r.wait_for.cycles.size(), 1u);
  EXPECT_EQ(cycle_comms(w, r.wait_for), (std::set<std::string>{"A", "B"}));
  bool connect = false;
  for (const auto& e : r.wait_for.edges) connect = connect || (e.on_cycle && e.label == "connect of A");
  EXPECT_TRUE(connect);
}

class DeadlockFile : public ::testing::TestWithParam<std::string> {};

TEST_P(DeadlockFile, ProducesDotSvgAndHtml) {
  model::World w;
  auto r = check_file(w, GetParam());
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  ASSERT_FALSE(r.wait_for.empty());
  EXPECT_FALSE(r.wait_for.explanations.empty()) << "a deadlock without a cycle or an exited rank";
  std::string dot = report::wait_for_dot(w, r.wait_for);
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("cluster_legend"), std::string::npos);
  if (!r.wait_for.cycles.empty()) {
    EXPECT_NE(dot.find("color=\"#c62828\", penwidth=2.5"), std::string::npos);  // the cycle's edges, red
  }
  std::string svg = report::render_svg(dot);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  std::string html = report::html_report(r, svg);
  for (const char* id : {"id=\"verdict\"", "id=\"comms\"", "id=\"timeline\"", "id=\"graph\"", "id=\"stats\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  EXPECT_NE(html.find("<svg"), std::string::npos);
}

// Every scenario whose expect line says deadlock.
std::vector<std::string> deadlock_candidates() {
  std::vector<std::string> out;
  for (const auto& path :
       checker::collect_scenarios({gpu_calibration_dir(), mpi_calibration_dir(), source_dir() + "/examples"}))
    if (model::load_world(path).expect == model::Verdict::Deadlock) out.push_back(path);
  return out;
}

INSTANTIATE_TEST_SUITE_P(All, DeadlockFile, ::testing::ValuesIn(deadlock_candidates()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           const std::string& path = param.param;
                           std::string name = path.substr(path.find_last_of('/') + 1);
                           name = name.substr(0, name.find('.'));
                           std::string parent = path.find("calibration-mpi") != std::string::npos ? "mpi_"
                                                : path.find("examples") != std::string::npos      ? "ex_"
                                                                                                  : "cal_";
                           return parent + name;
                         });

TEST(WaitForGraph, LargeWorldsFoldRanksOffTheCycle) {
  model::World w = world_from(gen::hook_fanout_scenario(16, 2, false));
  auto r = checker::check(w, {});
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  report::DotOptions full;
  full.full_graph = true;
  auto count_nodes = [](const std::string& dot) {
    size_t n = 0;
    for (size_t pos = dot.find("\n    \"rank "); pos != std::string::npos; pos = dot.find("\n    \"rank ", pos + 1))
      ++n;
    return n;
  };
  size_t folded = count_nodes(report::wait_for_dot(w, r.wait_for));
  size_t all = count_nodes(report::wait_for_dot(w, r.wait_for, full));
  EXPECT_GE(all, 16u);  // every rank is blocked somewhere: at least one node per rank
  EXPECT_LT(folded, all);
  EXPECT_NE(report::wait_for_dot(w, r.wait_for).find("ranks"), std::string::npos);
}

}  // namespace
}  // namespace collmc::testing
