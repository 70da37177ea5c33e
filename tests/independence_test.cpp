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

void expect_independent(const std::string& text, uint64_t budget, uint64_t& pairs, uint64_t* choice_pairs = nullptr) {
  model::World world = world_from(text);
  checker::Semantics semantics(world);
  IndependenceCheck check = check_independence(semantics, budget);
  pairs += check.pairs;
  if (choice_pairs != nullptr) *choice_pairs += check.choice_pairs;
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

TEST(Independence, OpenOrders) {
  // Any_orders of registrations on nonblocking comms, collectives on several streams, allocations next
  // to their use: the children the reduction runs in one order, replayed in both.
  std::mt19937 rng(15);
  uint64_t pairs = 0;
  uint64_t choice_pairs = 0;
  for (int i = 0; i < 300; ++i) {
    RandomScenarioOptions o;
    o.max_statements = 4;
    o.open_orders = true;
    expect_independent(random_scenario(rng, o), 3000, pairs, &choice_pairs);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_GT(choice_pairs, 1000u) << "the scenarios hardly exercise commuting any_orders";
}

// Rank 0 runs up to its first any_order; then whether the reduction may run that any_order in one order.
bool commuting_at_start(const std::string& text) {
  model::World world = world_from(text);
  checker::Semantics semantics(world);
  checker::State s = semantics.initial();
  std::vector<checker::Step> host;
  std::vector<checker::Step> completions;
  while (semantics.control().nodes[static_cast<size_t>(s.ranks[0].threads[0].node)].any_order < 0) {
    host.clear();
    semantics.enabled_of_rank(s, 0, host, completions);
    if (host.empty() || semantics.apply(s, host.front())) ADD_FAILURE() << "rank 0 does not reach an any_order";
    if (host.empty()) return false;
  }
  return semantics.commuting_choice(s, 0, 0);
}

TEST(Independence, WhichAnyOrdersCommute) {
  const std::string head = "ranks 2\nset comm_mode = nonblocking\ncomm A = [0, 1]\ncomm B = [0, 1]\n";
  EXPECT_TRUE(commuting_at_start(head + "rank * {\n  any_order {\n    alloc x\n    alloc y\n  }\n}\n"));
  EXPECT_TRUE(commuting_at_start(head + "rank * {\n  any_order {\n    register A x\n    register B x\n  }\n}\n"));
  // One comm twice: the second registration waits for the first (NCCL's poll loop).
  EXPECT_FALSE(commuting_at_start(head + "rank * {\n  any_order {\n    register A x\n    register A y\n  }\n}\n"));
  // An allocation next to the registration of the same buffer: the order decides a usage error.
  EXPECT_FALSE(commuting_at_start(head + "rank * {\n  any_order {\n    alloc x\n    register A x\n  }\n}\n"));
  // A child of two calls, and a free (it reads pending device work).
  EXPECT_FALSE(commuting_at_start(head + "rank * {\n  any_order {\n    { alloc x\n  alloc z }\n    alloc y\n  }\n}\n"));
  EXPECT_FALSE(commuting_at_start(head + "rank * {\n  alloc x\n  any_order {\n    free x\n    alloc y\n  }\n}\n"));
  // Blocking comms: a registration blocks; a collective blocks for the runtime connect unless it is off.
  const std::string blocking = "ranks 2\ncomm A = [0, 1]\ncomm B = [0, 1]\n";
  EXPECT_FALSE(commuting_at_start(blocking + "rank * {\n  any_order {\n    register A x\n    register B x\n  }\n}\n"));
  EXPECT_FALSE(commuting_at_start(
      blocking + "rank * {\n  any_order {\n    all_reduce A x on s1\n    all_reduce B x on s2\n  }\n}\n"));
  EXPECT_TRUE(
      commuting_at_start("ranks 2\nset runtime_connect = off\ncomm A = [0, 1]\ncomm B = [0, 1]\nrank * {\n"
                         "  any_order {\n    all_reduce A x on s1\n    all_reduce B x on s2\n  }\n}\n"));
  // One stream: the FIFO order differs.
  EXPECT_FALSE(
      commuting_at_start("ranks 2\nset runtime_connect = off\ncomm A = [0, 1]\ncomm B = [0, 1]\nrank * {\n"
                         "  any_order {\n    all_reduce A x on s1\n    all_reduce B x on s1\n  }\n}\n"));
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
