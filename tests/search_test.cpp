// The search's own behaviour: the progress line, limits that end in `inconclusive` with the figures
// reached, and states stored only where the search has a choice.
#include <gtest/gtest.h>

#include "collmc/checker/check.h"
#include "collmc/checker/semantics.h"
#include "collmc/gen/generators.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

// Eight ranks registering on a ring of comms in agreed order: safe, thousands of states unreduced.
model::World ring() { return world_from(gen::ring_scenario(8, true)); }

TEST(Search, ProgressLineWhenAsked) {
  model::World world = ring();
  checker::SearchOptions o;
  o.reduction = false;
  o.progress = checker::SearchOptions::Progress::Always;
  o.progress_after_s = 0;
  ::testing::internal::CaptureStderr();
  checker::CheckResult r = checker::check(world, o);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.verdict, model::Verdict::Safe);
  EXPECT_NE(err.find("[search] "), std::string::npos) << err;
  EXPECT_NE(err.find(" states/s, depth "), std::string::npos) << err;
  EXPECT_NE(err.find("MiB"), std::string::npos) << err;
  // Captured stderr is no terminal: plain lines, each ended by a newline, with no carriage return or
  // escape sequence to litter a log (on a terminal one line is rewritten in place, then erased).
  EXPECT_EQ(err.back(), '\n') << err;
  EXPECT_EQ(err.find('\r'), std::string::npos) << err;
  EXPECT_EQ(err.find('\033'), std::string::npos) << err;
}

TEST(Search, NoProgressLineWhenSilenced) {
  model::World world = ring();
  checker::SearchOptions o;
  o.reduction = false;
  o.progress = checker::SearchOptions::Progress::Never;
  o.progress_after_s = 0;
  ::testing::internal::CaptureStderr();
  checker::check(world, o);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(Search, LimitsEndInconclusiveWithTheFiguresReached) {
  model::World world = ring();
  checker::SearchOptions o;
  o.reduction = false;
  o.progress = checker::SearchOptions::Progress::Never;
  o.max_states = 500;
  checker::CheckResult r = checker::check(world, o);
  EXPECT_EQ(r.verdict, model::Verdict::Inconclusive);
  EXPECT_EQ(r.stats.states, 500u);
  EXPECT_GT(r.stats.stored, 0u);
  EXPECT_GT(r.stats.transitions, 0u);
  EXPECT_GT(r.stats.memory_bytes, 0u);
  EXPECT_NE(r.limit.find("max-states"), std::string::npos);
  o.shortest = true;
  checker::CheckResult bfs = checker::check(world, o);
  EXPECT_EQ(bfs.verdict, model::Verdict::Inconclusive);
  EXPECT_EQ(bfs.stats.states, 500u);
}

TEST(Search, FixedOrdersStoreNoStates) {
  // Every order fixed: the reduced space is one path, followed in place.
  model::World world = world_from(gen::ring_scenario(16, true));
  checker::SearchOptions o;
  o.progress = checker::SearchOptions::Progress::Never;
  checker::CheckResult r = checker::check(world, o);
  EXPECT_EQ(r.verdict, model::Verdict::Safe);
  EXPECT_EQ(r.stats.stored, 0u);
  EXPECT_EQ(r.stats.states, r.stats.transitions + 1);
  // Unreduced, the interleavings branch and are stored, each once.
  o.reduction = false;
  o.max_states = 20000;
  checker::CheckResult full = checker::check(world, o);
  EXPECT_GT(full.stats.stored, 100u);
}

TEST(Search, ViolationReportsTheStateBeforeTheStep) {
  // The lone-step chain is applied in place; the state before the violating free is rebuilt.
  model::World world = world_from("ranks 2\ncomm A = [0, 1]\nrank * {\n  alloc b\n  all_reduce A b\n  free b\n}\n");
  checker::SearchOptions o;
  o.progress = checker::SearchOptions::Progress::Never;
  checker::CheckResult r = checker::check(world, o);
  EXPECT_EQ(r.verdict, model::Verdict::UseAfterFree);
  ASSERT_FALSE(r.blocked.empty());
  bool pending_stream = false;
  for (const auto& b : r.blocked) pending_stream = pending_stream || b.stream >= 0;
  EXPECT_TRUE(pending_stream) << "the all_reduce must still be pending in the reported state";
}

TEST(Search, AnyOrderOf64ChildrenIsLinear) {
  // A done-set per any_order, not 2^K control nodes: 64 children compile to about as many nodes as 64
  // calls, and when they commute the reduction runs them in one order.
  std::string body;
  for (int k = 0; k < 64; ++k) body += "    alloc b" + std::to_string(k) + "\n";
  std::string text = "ranks 4\ncomm A = [0..3]\nrank * {\n  any_order {\n" + body + "  }\n";
  for (int k = 0; k < 64; ++k) text += "  register A b" + std::to_string(k) + "\n";
  text += "}\n";
  const model::World world = world_from(text);
  const checker::Semantics semantics(world);
  EXPECT_LT(semantics.control().nodes.size(), 4u * 3 * 64 + 20);
  checker::CheckResult r = check_text(text);
  EXPECT_EQ(r.verdict, model::Verdict::Safe);
  EXPECT_LT(r.stats.states, 4u * 200);
  // Children that do not commute (a registration next to the allocation of its buffer) are still
  // explored in every order: here one order registers before allocating, a usage error.
  EXPECT_EQ(verdict_of("ranks 2\ncomm A = [0, 1]\nrank * {\n  any_order {\n    alloc x\n    register A x\n"
                       "    alloc y\n  }\n}\n"),
            model::Verdict::UsageError);
}

}  // namespace
}  // namespace collmc::testing
