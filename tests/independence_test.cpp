// The reduction's independence claims, replayed in both orders (independence_check.h) on the
// scenario files and on random scenarios that stress them: choices, threads, nonblocking comms,
// serialized streams, hazards that read device work.
#include <gtest/gtest.h>

#include <random>

#include "independence_check.h"
#include "random_scenario.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

void expect_independent(const std::string& text, uint64_t budget, uint64_t& pairs) {
  model::World world = world_from(text);
  checker::Semantics semantics(world);
  IndependenceCheck check = check_independence(semantics, budget);
  pairs += check.pairs;
  ASSERT_TRUE(check.failures.empty()) << check.failures.size() << " failures, the first: " << check.failures.front()
                                      << "\n"
                                      << text;
}

TEST(Independence, RandomScenarios) {
  std::mt19937 rng(13);
  uint64_t pairs = 0;
  for (int i = 0; i < 300; ++i) {
    RandomScenarioOptions o;
    o.max_statements = 3;
    expect_independent(random_scenario(rng, o), 3000, pairs);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(pairs, 1000u) << "the scenarios hardly exercise independent pairs";
}

TEST(Independence, ThreeRanksNoChoices) {
  std::mt19937 rng(14);
  uint64_t pairs = 0;
  for (int i = 0; i < 100; ++i) {
    RandomScenarioOptions o;
    o.min_ranks = 3;
    o.max_statements = 3;
    o.choices = false;
    expect_independent(random_scenario(rng, o), 3000, pairs);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(pairs, 1000u);
}

TEST(Independence, AbortsWaitingForQueuedKernels) {
  // Issue 14's abort rule: an abort waits for its comm's kernels queued behind other work, and a
  // completion now also drops the aborted work that starts behind it. Both stay claims about the rank's
  // own streams (abort reads device work; completions only remove from stream heads).
  const std::string warm = "  all_reduce A warm; all_reduce B warm; sync main\n";
  uint64_t pairs = 0;
  for (const std::string aborts : {"abort B; abort A", "group { abort B; abort A }", "abort A; abort B"}) {
    SCOPED_TRACE(aborts);
    expect_independent("ranks 2\ncomm A = [0, 1]\ncomm B = [0, 1]\nrank 0 {\n" + warm +
                           "  all_reduce A xa; all_reduce B xb\n  " + aborts + "\n}\nrank 1 {\n" + warm +
                           "  maybe { all_reduce A xa }\n  all_reduce B xb\n  abort B; abort A\n}\n",
                       20000, pairs);
  }
  EXPECT_GT(pairs, 0u);
}

TEST(Independence, NoClaimForAFreeAndACompletion) {
  // A free reads the rank's pending device work: it does not commute with the completion of the
  // all_reduce on that buffer, and the layer must not claim it does.
  model::World world = world_from("ranks 2\ncomm A = [0, 1]\nrank * {\n  alloc b\n  all_reduce A b\n  free b\n}\n");
  checker::Semantics semantics(world);
  checker::Step completion;
  completion.kind = checker::StepKind::Complete;
  completion.comm = 0;
  checker::Step free_step;
  free_step.kind = checker::StepKind::Issue;
  free_step.rank = 0;
  auto call_of = [&](model::OpKind kind) {
    for (const auto& c : world.calls)
      if (c.rank == 0 && c.kind == kind) return c.id;
    return -1;
  };
  free_step.call = call_of(model::OpKind::Free);
  EXPECT_FALSE(claimed_independent(semantics, completion, free_step));
  checker::Step other_rank = free_step;
  other_rank.rank = 1;
  checker::Step alloc_step = free_step;
  alloc_step.call = call_of(model::OpKind::Alloc);
  EXPECT_TRUE(claimed_independent(semantics, completion, alloc_step));
  EXPECT_TRUE(claimed_independent(semantics, alloc_step, other_rank));
  uint64_t pairs = 0;
  expect_independent("ranks 2\ncomm A = [0, 1]\nrank * {\n  alloc b\n  all_reduce A b\n  sync main\n  free b\n}\n",
                     10000, pairs);
  EXPECT_GT(pairs, 0u);
}

}  // namespace
}  // namespace collmc::testing
