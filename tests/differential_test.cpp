// The search against brute force on many small random scenarios: the same verdicts every time, and
// breadth-first search finds a shortest bad schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "brute_force.h"
#include "collmc/checker/reduction.h"
#include "collmc/checker/semantics.h"
#include "random_scenario.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

struct Tally {
  int compared = 0;
  int skipped = 0;
  int safe = 0;
  int bad = 0;
};

void compare_one(const std::string& text, uint64_t budget, Tally& tally) {
  model::World world;
  try {
    world = world_from(text);
  } catch (const model::InputError& e) {
    FAIL() << "generated scenario does not load: " << e.what() << "\n" << text;
  }
  checker::Semantics semantics(world);
  BruteForceOutcome reference = brute_force(semantics, budget);
  if (!reference.complete) {
    ++tally.skipped;
    return;
  }
  ++tally.compared;
  (reference.safe() ? tally.safe : tally.bad)++;
  checker::SearchResult dfs = checker::explore(semantics, {});
  checker::PersistentSetReduction reduction(semantics, semantics);
  checker::SearchResult reduced = checker::explore(reduction, {});
  // `stored` (states with a choice): a persistent set of two or more steps means two or more enabled.
  EXPECT_LE(reduced.stats.stored, dfs.stats.stored) << text;
  checker::SearchOptions bfs_options;
  bfs_options.shortest = true;
  checker::SearchResult bfs = checker::explore(semantics, bfs_options);
  if (reference.safe()) {
    EXPECT_EQ(dfs.verdict, model::Verdict::Safe) << text;
    EXPECT_EQ(reduced.verdict, model::Verdict::Safe) << "the reduction lost a bad outcome\n" << text;
    EXPECT_EQ(bfs.verdict, model::Verdict::Safe) << text;
    return;
  }
  EXPECT_TRUE(reference.shortest.count(dfs.verdict))
      << "dfs found " << model::verdict_name(dfs.verdict) << ", which brute force never reaches\n"
      << text;
  EXPECT_TRUE(reference.shortest.count(bfs.verdict)) << text;
  EXPECT_TRUE(reference.shortest.count(reduced.verdict))
      << "the reduced search found " << model::verdict_name(reduced.verdict) << ", which brute force never reaches\n"
      << text;
  uint64_t best = UINT64_MAX;
  for (const auto& [v, depth] : reference.shortest) best = std::min(best, depth);
  EXPECT_EQ(bfs.schedule.size(), best) << "bfs schedule is not the shortest\n" << text;
}

void run_family(uint32_t seed, int cases, const RandomScenarioOptions& options, int min_compared,
                uint64_t budget = 20000) {
#ifdef COLLMC_SANITIZED_BUILD
  // The sanitized build looks for memory errors, not for more disagreements: a quarter of the cases
  // (the first quarter of the same sequence) keeps it inside ctest's timeout.
  cases /= 4;
  min_compared /= 4;
#endif
  // COLLMC_DIFFERENTIAL_SHARD=I/N (Differential.Long on many cores): this process compares the cases
  // whose index is I modulo N, of the same sequence, and needs its share of the compared minimum.
  int shard = 0, shards = 1;
  if (const char* s = std::getenv("COLLMC_DIFFERENTIAL_SHARD"))
    if (std::sscanf(s, "%d/%d", &shard, &shards) != 2 || shards < 1 || shard < 0 || shard >= shards) {
      ADD_FAILURE() << "COLLMC_DIFFERENTIAL_SHARD=" << s << ": expected I/N with 0 <= I < N";
      return;
    }
  min_compared /= shards;
  std::mt19937 rng(seed);
  Tally tally;
  for (int i = 0; i < cases; ++i) {
    std::string text = random_scenario(rng, options);
    if (i % shards != shard) continue;
    compare_one(text, budget, tally);
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GE(tally.compared, min_compared) << "too many cases over the brute-force budget";
  EXPECT_GT(tally.safe, 0) << "no safe case: the generator does not exercise both outcomes";
  EXPECT_GT(tally.bad, 0);
  std::printf("[differential] seed %u: %d compared (%d safe, %d bad), %d over budget\n", seed, tally.compared,
              tally.safe, tally.bad, tally.skipped);
}

TEST(Differential, PlainProgramsTwoRanks) {
  RandomScenarioOptions o;
  o.max_ranks = 2;
  o.choices = false;
  o.threads = false;
  run_family(1, 300, o, 250);
}

TEST(Differential, ChoicesAndThreads) {
  RandomScenarioOptions o;
  o.max_statements = 3;
  run_family(2, 300, o, 150);
}

TEST(Differential, ThreeRanksHazards) {
  RandomScenarioOptions o;
  o.min_ranks = 3;
  o.max_statements = 3;
  o.choices = false;
  run_family(3, 200, o, 120, 150000);
}

TEST(Differential, CommutingChoicesNonblockingSerialized) {
  // Open orders whose children commute, threads, and (through the knobs) nonblocking comms and
  // serialized streams: what the reductions of issue 13 lean on.
  RandomScenarioOptions o;
  o.max_statements = 3;
  o.commuting_choices = true;
  run_family(4, 900, o, 100);
}

// Issue 23: releases and their calls (one-sided rendezvous, shrink, grow, revoke, abort before 2.24).
RandomScenarioOptions release_options() {
  RandomScenarioOptions o;
  o.max_statements = 3;
  o.nccl_releases = true;
  return o;
}

TEST(Differential, NcclReleases) { run_family(7, 300, release_options(), 150); }

// Issue 36: NCCL 2.31.0a16 and 2.32.6 only (their destroy and finalize barrier, signals before a window,
// per-collective config, launchOrderImplicit, GIN-only windows) and serialized groups shared by threads.
RandomScenarioOptions release_231_options() {
  RandomScenarioOptions o = release_options();
  o.nccl_231_only = true;
  return o;
}

TEST(Differential, NcclReleases231) { run_family(8, 200, release_231_options(), 100); }

// Two ranks (brute force finishes most of them), any_orders of the open_orders generator.
RandomScenarioOptions open_order_options() {
  RandomScenarioOptions o;
  o.max_ranks = 2;
  o.max_statements = 3;
  o.open_orders = true;
  return o;
}

TEST(Differential, OpenOrders) {
  // Any_orders whose children commute (registrations on different nonblocking comms, collectives on
  // different streams, allocations) and whose children do not (one comm twice, an allocation next to
  // its use, a free), nested any_orders, threads: the reduction that runs commuting children in one
  // order (issue 13) against brute force.
  run_family(5, 500, open_order_options(), 250, 50000);
}

// An any_order as the 2^K automaton meant it, written out: an either over every permutation of the
// children (each child rewritten the same way).
model::ProgramNode as_permutations(const model::ProgramNode& node) {
  model::ProgramNode out = node;
  out.children.clear();
  for (const auto& c : node.children) out.children.push_back(as_permutations(c));
  if (node.kind != model::ProgramNode::Kind::AnyOrder) return out;
  std::vector<size_t> order(out.children.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  model::ProgramNode either;
  either.kind = model::ProgramNode::Kind::Either;
  do {
    model::ProgramNode seq;
    seq.kind = model::ProgramNode::Kind::Seq;
    for (size_t i : order) seq.children.push_back(out.children[i]);
    either.children.push_back(std::move(seq));
  } while (std::next_permutation(order.begin(), order.end()));
  return either;
}

TEST(Differential, SymbolicAnyOrderAgainstPermutations) {
  // The done-set representation of any_order (control.cpp) against the same programs with every
  // any_order written out as an either of its permutations: the same bad verdicts are reachable,
  // brute force on both, no reduction.
  std::mt19937 rng(6);
  const RandomScenarioOptions o = open_order_options();
  int compared = 0;
  int with_bad = 0;
  for (int i = 0; i < 250; ++i) {
    const std::string text = random_scenario(rng, o);
    const model::World world = world_from(text);
    model::World written_out = world;
    for (auto& program : written_out.programs)
      for (auto& thread : program.threads) thread.body = as_permutations(thread.body);
    const checker::Semantics symbolic(world);
    const checker::Semantics permutations(written_out);
    const BruteForceOutcome a = brute_force(symbolic, 30000);
    const BruteForceOutcome b = brute_force(permutations, 30000);
    if (!a.complete || !b.complete) continue;
    ++compared;
    std::vector<model::Verdict> va;
    std::vector<model::Verdict> vb;
    for (const auto& [v, depth] : a.shortest) va.push_back(v);
    for (const auto& [v, depth] : b.shortest) vb.push_back(v);
    if (!va.empty()) ++with_bad;
    ASSERT_EQ(va, vb) << text;
  }
  EXPECT_GE(compared, 100);
  EXPECT_GT(with_bad, 0);
  EXPECT_LT(with_bad, compared);
}

// By hand, not in CI: COLLMC_LONG_DIFFERENTIAL=10000 ./build/tests/collmc_tests
// --gtest_filter=Differential.Long (each family gets the number of cases given, each with its own seed).
// On N cores: N processes with COLLMC_DIFFERENTIAL_SHARD=0/N ... N-1/N share the same cases.
TEST(Differential, Long) {
  const char* n = std::getenv("COLLMC_LONG_DIFFERENTIAL");
  if (!n) GTEST_SKIP() << "set COLLMC_LONG_DIFFERENTIAL=N to run N random scenarios per family";
  const int cases = std::atoi(n);
  RandomScenarioOptions mixed;
  mixed.max_statements = 3;
  mixed.commuting_choices = true;
  // Commuting choices make many cases exceed the brute-force budget (about one in eight is compared).
  run_family(1000, cases, mixed, cases / 10);
  RandomScenarioOptions wide;
  wide.min_ranks = 3;
  wide.max_statements = 3;
  run_family(1001, cases / 4, wide, cases / 10, 150000);
  run_family(1002, cases, open_order_options(), cases / 3);
  run_family(1003, cases / 4, release_options(), cases / 10);
}

// By hand, not in CI: COLLMC_LONG_DIFFERENTIAL_231=N ./build/tests/collmc_tests
// --gtest_filter=Differential.Long231 (issue 36's rules only; shards as for Differential.Long).
TEST(Differential, Long231) {
  const char* n = std::getenv("COLLMC_LONG_DIFFERENTIAL_231");
  if (!n) GTEST_SKIP() << "set COLLMC_LONG_DIFFERENTIAL_231=N to run N random NCCL 2.31/2.32 scenarios";
  const int cases = std::atoi(n);
  run_family(1004, cases, release_231_options(), cases / 4);
}

}  // namespace
}  // namespace collmc::testing
