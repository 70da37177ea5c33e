// The depth-first search's state storage against plain copies: undo (State::checkpoint/undo) gives
// back exactly the state a copy kept, and the tree-compressed visited set decides "seen before"
// exactly as a set of whole encoded states does (same states, stored states and transitions as a
// reference search that copies states and keeps their full encodings).
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "collmc/checker/reduction.h"
#include "collmc/checker/search.h"
#include "collmc/checker/semantics.h"
#include "random_scenario.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using checker::State;
using checker::Step;

// The depth-first search of search.cpp written with copies and a set of encode_state() strings.
checker::SearchStats reference_dfs(const checker::NextState& system, model::Verdict& verdict) {
  checker::SearchStats stats;
  std::set<std::string> seen;
  struct Frame {
    State state;
    std::vector<Step> steps;
    size_t taken = 0;
  };
  std::vector<Frame> frames;
  State cur = system.initial();
  int last_rank = 0;
  std::vector<Step> steps;
  while (true) {
    ++stats.states;
    steps.clear();
    system.enabled(cur, steps, last_rank);
    bool backtrack = false;
    if (steps.empty()) {
      if (!system.is_final(cur)) {
        verdict = model::Verdict::Deadlock;
        return stats;
      }
      backtrack = true;
    } else if (steps.size() == 1) {
      ++stats.transitions;
      if (auto v = system.apply(cur, steps.front())) {
        verdict = v->verdict;
        return stats;
      }
      last_rank = steps.front().rank;
      continue;
    } else if (!seen.insert(checker::encode_state(cur)).second) {
      backtrack = true;
    } else {
      for (const Step& step : steps) {
        ++stats.transitions;
        State next = cur;
        if (auto v = system.apply(next, step)) {
          verdict = v->verdict;
          return stats;
        }
      }
      frames.push_back(Frame{cur, steps, 1});
      last_rank = steps.front().rank;
      system.apply(cur, steps.front());
      continue;
    }
    if (backtrack)
      while (!frames.empty() && frames.back().taken == frames.back().steps.size()) frames.pop_back();
    if (frames.empty()) {
      verdict = model::Verdict::Safe;
      stats.stored = seen.size();
      return stats;
    }
    Frame& f = frames.back();
    cur = f.state;
    last_rank = f.steps[f.taken].rank;
    system.apply(cur, f.steps[f.taken]);
    ++f.taken;
  }
}

TEST(StateStorage, UndoGivesBackTheStateACopyKept) {
  std::mt19937 rng(13);
  int walks = 0;
  for (int i = 0; i < 150; ++i) {
    model::World world = world_from(random_scenario(rng));
    checker::Semantics semantics(world);
    // A random walk with nested checkpoints; at each undo the state equals the copy made at its mark.
    State cur = semantics.initial();
    std::vector<std::pair<State::Mark, State>> marks;
    std::vector<Step> steps;
    for (int depth = 0; depth < 60; ++depth) {
      if (!marks.empty() && rng() % 4 == 0) {
        cur.undo(marks.back().first);
        ASSERT_EQ(cur, marks.back().second) << "undo did not restore the checkpoint";
        marks.pop_back();
        continue;
      }
      steps.clear();
      semantics.enabled(cur, steps);
      if (steps.empty()) break;
      if (rng() % 3 == 0) marks.emplace_back(cur.checkpoint(), State(std::as_const(cur)));
      if (semantics.apply(cur, steps[rng() % steps.size()])) break;
    }
    while (!marks.empty()) {
      cur.undo(marks.back().first);
      ASSERT_EQ(cur, marks.back().second);
      marks.pop_back();
      ++walks;
    }
  }
  EXPECT_GT(walks, 50);
}

TEST(StateStorage, TreeVisitedSetDecidesAsWholeEncodings) {
  std::mt19937 rng(1313);
  int compared = 0;
  for (int i = 0; i < 200; ++i) {
    RandomScenarioOptions o;
    o.max_statements = 3;
    o.commuting_choices = i % 2 == 1;
    const std::string text = random_scenario(rng, o);
    model::World world = world_from(text);
    checker::Semantics semantics(world);
    checker::PersistentSetReduction reduced(semantics, semantics);
    for (const checker::NextState* system :
         {static_cast<const checker::NextState*>(&semantics), static_cast<const checker::NextState*>(&reduced)}) {
      checker::SearchOptions options;
      options.max_states = 200000;
      checker::SearchResult r = checker::explore(*system, options);
      if (r.verdict == model::Verdict::Inconclusive) continue;
      model::Verdict expected = model::Verdict::Inconclusive;
      const checker::SearchStats ref = reference_dfs(*system, expected);
      EXPECT_EQ(r.verdict, expected) << text;
      EXPECT_EQ(r.stats.states, ref.states) << text;
      EXPECT_EQ(r.stats.transitions, ref.transitions) << text;
      if (r.verdict == model::Verdict::Safe) {
        EXPECT_EQ(r.stats.stored, ref.stored) << text;
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 200);
}

}  // namespace
}  // namespace collmc::testing
