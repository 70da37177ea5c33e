// Folding by shape (checker/wait_for_graph.h, report/src/folding.h): cycles are folded exactly when
// one, rotated, is the other with ranks and comm instances renamed one to one. Checked against a
// brute force that applies every rotation and builds the renaming, on real wait-for graphs (Megatron
// at W = 1024, a hand-made world of three shapes) and on 10^4 random cycle sets; then the reports at
// job scale: text, HTML and graph each show the first cycle once and count the ones like it.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "collmc/checker/wait_for_graph.h"
#include "collmc/gen/generators.h"
#include "collmc/report/check_report.h"
#include "collmc/report/html_report.h"
#include "collmc/report/wait_for_dot.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using checker::WaitEdge;
using checker::WaitForGraph;
using checker::WaitNode;

// `text` with `from` replaced by `to` everywhere: the renaming applied to a label.
std::string renamed(std::string text, const std::string& from, const std::string& to) {
  if (from.empty() || from == to) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// Whether cycle b, read from node `rotation`, is cycle a with its ranks and comm instances renamed one
// to one (the brute force: the renaming is built hop by hop and every field compared through it).
bool renames_onto(const model::World& w, const WaitForGraph& g, size_t a, size_t b, size_t rotation) {
  const auto& ca = g.cycles[a];
  const auto& cb = g.cycles[b];
  if (ca.size() != cb.size()) return false;
  std::map<int, int> rank_to, rank_from, comm_to, comm_from;
  auto bijective = [](std::map<int, int>& to, std::map<int, int>& from, int x, int y) {
    const auto i = to.emplace(x, y).first;
    const auto j = from.emplace(y, x).first;
    return i->second == y && j->second == x;
  };
  const size_t k = ca.size();
  for (size_t i = 0; i < k; ++i) {
    const WaitNode& na = g.nodes[static_cast<size_t>(ca[i])];
    const WaitNode& nb = g.nodes[static_cast<size_t>(cb[(rotation + i) % k])];
    const WaitEdge& ea = g.edges[static_cast<size_t>(g.cycle_edges[a][i])];
    const WaitEdge& eb = g.edges[static_cast<size_t>(g.cycle_edges[b][(rotation + i) % k])];
    if (na.kind != nb.kind || !bijective(rank_to, rank_from, na.rank, nb.rank)) return false;
    if ((ea.comm < 0) != (eb.comm < 0)) return false;
    if (ea.comm >= 0 && !bijective(comm_to, comm_from, ea.comm, eb.comm)) return false;
    const std::string name_a = ea.comm >= 0 ? w.comms[static_cast<size_t>(ea.comm)].name : "";
    const std::string name_b = eb.comm >= 0 ? w.comms[static_cast<size_t>(eb.comm)].name : "";
    if (ea.comm >= 0 &&
        w.comms[static_cast<size_t>(ea.comm)].decl_name != w.comms[static_cast<size_t>(eb.comm)].decl_name)
      return false;
    if (ea.slot != eb.slot || renamed(ea.label, name_a, name_b) != eb.label) return false;
    if (na.kind == WaitNode::Kind::HostThread &&
        w.programs[static_cast<size_t>(na.rank)].threads[static_cast<size_t>(na.thread)].name !=
            w.programs[static_cast<size_t>(nb.rank)].threads[static_cast<size_t>(nb.thread)].name)
      return false;
    if (na.kind == WaitNode::Kind::StreamHead && na.stream != nb.stream) return false;
    if ((na.call < 0) != (nb.call < 0)) return false;
    if (na.call >= 0) {
      const auto& x = w.calls[static_cast<size_t>(na.call)];
      const auto& y = w.calls[static_cast<size_t>(nb.call)];
      if (x.kind != y.kind || renamed(x.text, name_a, name_b) != y.text) return false;
    }
  }
  return true;
}

bool same_shape_brute(const model::World& w, const WaitForGraph& g, size_t a, size_t b) {
  for (size_t r = 0; r < g.cycles[b].size(); ++r)
    if (renames_onto(w, g, a, b, r)) return true;
  return false;
}

// Every pair of cycles: folded together exactly when the brute force relates them; every member's
// offset is a rotation under which it is the representative renamed; lead ranks are that node's.
void expect_exact_folding(const model::World& w, const WaitForGraph& g) {
  std::vector<int> shape_of(g.cycles.size(), -1);
  for (size_t s = 0; s < g.cycle_shapes.size(); ++s) {
    const auto& shape = g.cycle_shapes[s];
    ASSERT_EQ(shape.members.size(), shape.offsets.size());
    ASSERT_EQ(shape.members.size(), shape.lead_ranks.size());
    for (size_t m = 0; m < shape.members.size(); ++m) {
      const auto c = static_cast<size_t>(shape.members[m]);
      ASSERT_EQ(shape_of[c], -1) << "cycle " << c << " in two shapes";
      shape_of[c] = static_cast<int>(s);
      EXPECT_TRUE(
          renames_onto(w, g, static_cast<size_t>(shape.members.front()), c, static_cast<size_t>(shape.offsets[m])))
          << "member " << m << " of shape " << s << " is not the representative renamed at its offset";
      EXPECT_EQ(shape.lead_ranks[m],
                g.nodes[static_cast<size_t>(g.cycles[c][static_cast<size_t>(shape.offsets[m])])].rank);
    }
  }
  for (size_t c = 0; c < g.cycles.size(); ++c) ASSERT_GE(shape_of[c], 0) << "cycle " << c << " in no shape";
  for (size_t a = 0; a < g.cycles.size(); ++a)
    for (size_t b = a + 1; b < g.cycles.size(); ++b)
      EXPECT_EQ(shape_of[a] == shape_of[b], same_shape_brute(w, g, a, b)) << "cycles " << a << " and " << b;
}

gen::MegatronConfig w1024_per_rank() {
  gen::MegatronConfig c;
  c.world = 1024;
  c.tp = 8;
  c.cp = 2;
  c.pp = 4;
  c.ep = 8;
  c.dist_opt_instances = 4;
  c.order = gen::RegistrationOrder::PerRank;
  return c;
}

TEST(ShapeFolding, Megatron1024HasThirtyTwoCyclesOfOneShape) {
  model::World w = world_from(gen::megatron_scenario(w1024_per_rank()));
  const auto r = checker::check(w, {});
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  const auto& g = r.wait_for;
  ASSERT_EQ(g.cycles.size(), 32u);
  ASSERT_EQ(g.cycle_shapes.size(), 1u);
  EXPECT_EQ(g.cycle_shapes[0].members.size(), 32u);
  EXPECT_EQ(g.cycle_shapes[0].members.front(), 0);  // the first cycle is the representative
  expect_exact_folding(w, g);
}

// Ranks 0-1 and 2-3: two comms of two families registered in opposite orders (one shape, renamed);
// ranks 4-5: the same, but on the second host slot of P (another shape); ranks 6-8: a ring of three.
constexpr const char* kThreeShapes = R"(ranks 9
comm P = {[0, 1], [2, 3], [4, 5]}
comm Q = {[0, 1], [2, 3], [4, 5]}
comm c0 = [6, 7]
comm c1 = [7, 8]
comm c2 = [8, 6]
rank 0 { alloc wa
  register P wa
  register Q wa }
rank 1 { alloc wa
  register Q wa
  register P wa }
rank 2 { alloc wa
  register P wa
  register Q wa }
rank 3 { alloc wa
  register Q wa
  register P wa }
rank 4 { alloc wx
  alloc wa
  register P wx
  register P wa
  register Q wa }
rank 5 { alloc wx
  alloc wa
  register P wx
  register Q wa
  register P wa }
rank 6 { alloc wa
  register c0 wa
  register c2 wa }
rank 7 { alloc wa
  register c1 wa
  register c0 wa }
rank 8 { alloc wa
  register c2 wa
  register c1 wa }
)";

TEST(ShapeFolding, OnlyCyclesOfOneShapeAreFolded) {
  model::World w = world_from(kThreeShapes);
  const auto r = checker::check(w, {});
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  const auto& g = r.wait_for;
  ASSERT_EQ(g.cycles.size(), 4u);
  ASSERT_EQ(g.cycle_shapes.size(), 3u);
  EXPECT_EQ(g.cycle_shapes[0].members.size(), 2u);
  EXPECT_EQ(std::set<int>(g.cycle_shapes[0].lead_ranks.begin(), g.cycle_shapes[0].lead_ranks.end()).size(), 2u);
  EXPECT_EQ(g.cycle_shapes[1].members.size(), 1u);
  EXPECT_EQ(g.cycle_shapes[2].members.size(), 1u);
  expect_exact_folding(w, g);
  const std::string text = report::text_report(r, false);
  EXPECT_NE(text.find("wait-for cycles (4, of 3 shapes; one of each shown):"), std::string::npos) << text;
  EXPECT_NE(text.find("and 1 like it, with rank "), std::string::npos) << text;
}

// 10^4 random sets of cycles over a Megatron world (every rank runs one body, so a renamed rank has
// the same statements): copies of a template under random rank maps and rotations, and near misses
// (one hop's slot, statement, family or rank pattern changed). The fold must agree with the brute
// force on every pair.
TEST(ShapeFolding, RandomCycleSetsFoldExactlyAsTheBruteForce) {
  gen::MegatronConfig c;
  c.world = 64;
  c.tp = 2;
  c.cp = 2;
  c.ep = 4;
  c.dist_opt_instances = 2;
  c.order = gen::RegistrationOrder::PerRank;
  c.late_segments = gen::LateSegments::All;
  const model::World w = world_from(gen::megatron_scenario(c));
  // (family, rank) -> instance; a rank's calls.
  std::map<std::pair<std::string, int>, int> instance;
  std::vector<std::string> families;
  for (const auto& comm : w.comms) {
    if (std::find(families.begin(), families.end(), comm.decl_name) == families.end())
      families.push_back(comm.decl_name);
    for (int m : comm.members) instance[{comm.decl_name, m}] = comm.id;
  }
  std::vector<std::vector<int>> calls_of(static_cast<size_t>(w.ranks));
  for (const auto& call : w.calls) calls_of[static_cast<size_t>(call.rank)].push_back(call.id);
  const size_t statements = calls_of[0].size();
  ASSERT_GT(statements, 2u);
  for (const auto& calls : calls_of) ASSERT_EQ(calls.size(), statements);

  struct Hop {
    int rank_slot;  // which of the template's ranks
    size_t statement;
    size_t family;
    int slot;
  };
  std::mt19937 rng(37);
  size_t folded_pairs = 0, apart_pairs = 0;
  for (int round = 0; round < 10000; ++round) {
    WaitForGraph g;
    const size_t k = 2 + rng() % 4;
    std::vector<Hop> tmpl(k);
    const int distinct = 1 + static_cast<int>(rng() % k);
    for (auto& h : tmpl)
      h = Hop{static_cast<int>(rng() % static_cast<unsigned>(distinct)), rng() % statements, rng() % families.size(),
              static_cast<int>(rng() % 2)};
    const size_t copies = 2 + rng() % 4;
    for (size_t copy = 0; copy < copies; ++copy) {
      std::vector<Hop> hops = tmpl;
      if (rng() % 3 == 0) {  // a near miss
        Hop& h = hops[rng() % k];
        switch (rng() % 4) {
          case 0:
            h.slot ^= 1;
            break;
          case 1:
            h.statement = (h.statement + 1) % statements;
            break;
          case 2:
            h.family = (h.family + 1) % families.size();
            break;
          default:
            h.rank_slot = (h.rank_slot + 1) % distinct;
        }
      }
      // Distinct world ranks for the template's rank slots (a one-to-one renaming), then a rotation.
      std::vector<int> ranks(static_cast<size_t>(w.ranks));
      std::iota(ranks.begin(), ranks.end(), 0);
      std::shuffle(ranks.begin(), ranks.end(), rng);
      const size_t rotation = rng() % k;
      std::vector<int> cycle, cycle_edges;
      for (size_t j = 0; j < k; ++j) {
        const Hop& h = hops[(rotation + j) % k];
        const int rank = ranks[static_cast<size_t>(h.rank_slot)];
        WaitNode n;
        n.rank = rank;
        n.thread = 0;
        n.call = calls_of[static_cast<size_t>(rank)][h.statement];
        g.nodes.push_back(n);
        cycle.push_back(static_cast<int>(g.nodes.size() - 1));
      }
      for (size_t j = 0; j < k; ++j) {
        const Hop& h = hops[(rotation + j) % k];
        const int comm = instance.at({families[h.family], g.nodes[static_cast<size_t>(cycle[j])].rank});
        WaitEdge e;
        e.from = cycle[j];
        e.to = cycle[(j + 1) % k];
        e.comm = comm;
        e.slot = h.slot;
        e.label = "host slot " + std::to_string(h.slot) + " of " + w.comms[static_cast<size_t>(comm)].name;
        g.edges.push_back(e);
        cycle_edges.push_back(static_cast<int>(g.edges.size() - 1));
      }
      g.cycles.push_back(cycle);
      g.cycle_edges.push_back(cycle_edges);
    }
    checker::fold_by_shape(w, g);
    std::vector<int> shape_of(g.cycles.size());
    for (size_t s = 0; s < g.cycle_shapes.size(); ++s)
      for (size_t m = 0; m < g.cycle_shapes[s].members.size(); ++m) {
        const auto member = static_cast<size_t>(g.cycle_shapes[s].members[m]);
        shape_of[member] = static_cast<int>(s);
        ASSERT_TRUE(renames_onto(w, g, static_cast<size_t>(g.cycle_shapes[s].members.front()), member,
                                 static_cast<size_t>(g.cycle_shapes[s].offsets[m])))
            << "round " << round;
      }
    for (size_t a = 0; a < g.cycles.size(); ++a)
      for (size_t b = a + 1; b < g.cycles.size(); ++b) {
        const bool brute = same_shape_brute(w, g, a, b);
        ASSERT_EQ(shape_of[a] == shape_of[b], brute) << "round " << round << ", cycles " << a << " and " << b;
        (brute ? folded_pairs : apart_pairs) += 1;
      }
  }
  // Both outcomes were exercised, many times.
  EXPECT_GT(folded_pairs, 10000u);
  EXPECT_GT(apart_pairs, 10000u);
}

TEST(ShapeFolding, JobScaleReportsShowTheFirstCycleOnceAndCountTheRest) {
  model::World w = world_from(gen::megatron_scenario(w1024_per_rank()));
  const auto r = checker::check(w, {});
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  const std::string text = report::text_report(r, false);
  const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  EXPECT_LE(lines, 200u) << text;
  EXPECT_NE(text.find("wait-for cycles (32, of 1 shape; one of each shown):\n  rank 0 waits in"), std::string::npos)
      << text;
  EXPECT_NE(text.find("and 31 like it, with rank 0's place taken by ranks "), std::string::npos) << text;
  EXPECT_NE(text.find(" left out (--json and --html have every step)"), std::string::npos) << text;
  // The graph: one component, the first cycle, numbered 1..4 (no "32.1").
  const std::string dot = report::wait_for_dot(w, r.wait_for);
  EXPECT_NE(dot.find("1: waits for host slot 0 of intra_dp_cp{0,"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("32."), std::string::npos);
  EXPECT_NE(dot.find("the first of 32 cycles, 31 more of its shape"), std::string::npos);
  // The page: one hop table, the count of the rest.
  const std::string html = report::html_report(r, "");
  size_t tables = 0;
  for (size_t at = html.find("<table class=\"hops\">"); at != std::string::npos;
       at = html.find("<table class=\"hops\">", at + 1))
    ++tables;
  EXPECT_EQ(tables, 1u);
  EXPECT_NE(html.find("32 wait-for cycles, of 1 shape"), std::string::npos);
  EXPECT_LT(html.size(), 1500000u);
}

TEST(RankSets, RangesAndStridesInOnePlace) {
  EXPECT_EQ(model::rank_ranges_text({0, 1, 2, 3, 5}, ","), "0..3,5");
  EXPECT_EQ(model::rank_ranges_text({7, 15, 23, 31, 39}, ","), "7..39 step 8");
  EXPECT_EQ(model::rank_ranges_text({7, 15, 23}, ", "), "7, 15, 23");
  EXPECT_EQ(model::rank_ranges_text({0, 1, 2, 10, 20, 30, 40, 41}, ","), "0..2,10..40 step 10,41");
}

}  // namespace
}  // namespace collmc::testing
