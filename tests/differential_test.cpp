// The search against brute force on many small random scenarios: the same verdicts every time, and
// breadth-first search finds a shortest bad schedule.
#include <gtest/gtest.h>

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
  std::mt19937 rng(seed);
  Tally tally;
  for (int i = 0; i < cases; ++i) {
    std::string text = random_scenario(rng, options);
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

TEST(Differential, OpenOrders) {
  // Any_orders whose children commute (registrations on different nonblocking comms, collectives on
  // different streams, allocations) and whose children do not (one comm twice, an allocation next to
  // its use, a free), nested any_orders, threads: the reduction that runs commuting children in one
  // order (issue 13) against brute force.
  RandomScenarioOptions o;
  o.max_ranks = 2;
  o.max_statements = 3;
  o.open_orders = true;
  run_family(5, 500, o, 250, 50000);
}

// By hand, not in CI: COLLMC_LONG_DIFFERENTIAL=10000 ./build/tests/collmc_tests
// --gtest_filter=Differential.Long (each family gets the number of cases given, each with its own seed).
TEST(Differential, Long) {
  const char* n = std::getenv("COLLMC_LONG_DIFFERENTIAL");
  if (!n) GTEST_SKIP() << "set COLLMC_LONG_DIFFERENTIAL=N to run N random scenarios per family";
  const int cases = std::atoi(n);
  RandomScenarioOptions mixed;
  mixed.max_statements = 3;
  mixed.commuting_choices = true;
  run_family(1000, cases, mixed, cases / 2);
  RandomScenarioOptions wide;
  wide.min_ranks = 3;
  wide.max_statements = 3;
  run_family(1001, cases / 4, wide, cases / 10, 150000);
  RandomScenarioOptions open;
  open.max_ranks = 2;
  open.max_statements = 3;
  open.open_orders = true;
  run_family(1002, cases, open, cases / 3);
}

}  // namespace
}  // namespace collmc::testing
