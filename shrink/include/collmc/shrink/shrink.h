// Shrinking a counterexample: the smallest scenario found that still ends in the same kind of
// violation (fewest ranks, communicators, statements and choices), written as an ordinary scenario.
// Delta debugging over the resolved World; every candidate is printed, parsed, resolved and checked,
// so the result is exactly a scenario the checker has seen fail. docs/SHRINK.md has the algorithm.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collmc/checker/search.h"
#include "collmc/model/world.h"

namespace collmc::shrink {

struct ShrinkOptions {
  // Limits and search mode of every check. With max_states = 0 a candidate gets kDefaultCandidateStates:
  // a candidate whose check stops at a limit is inconclusive, and rejected.
  checker::SearchOptions search;
  double time_limit_s = 0;         // the whole shrink; 0: none. When it runs out, the best so far is the result
  int max_ranks = 0;               // > 0: also search rank subsets of at most this size if ddmin stops above it
  uint64_t subset_budget = 20000;  // candidates the --max-ranks subset search may spend
  std::string source_name;         // named in the result's header comment
  std::string output_name;         // the file name the resolved result carries
};

constexpr uint64_t kDefaultCandidateStates = 2'000'000;

// The measures the shrink reduces.
struct Size {
  int ranks = 0;
  int comms = 0;       // communicator instances
  int statements = 0;  // calls, after `repeat` and `when`
  int choices = 0;     // any_order, either and maybe points
};
Size size_of(const model::World& world);

struct ShrinkStats {
  uint64_t candidates = 0;         // candidate scenarios formed
  uint64_t checks = 0;             // of those, checked (the rest were repeats of a checked one)
  uint64_t accepted = 0;           // candidates that kept the violation and became the new best
  uint64_t inconclusive = 0;       // candidates whose check hit a limit (rejected)
  uint64_t subset_candidates = 0;  // spent by the --max-ranks subset search
  int rounds = 0;                  // passes over all reductions until nothing changed
  double seconds = 0;
  Size before, after;
};

enum class Outcome {
  Shrunk,        // `text` holds the result (possibly the input itself, if nothing could be removed)
  Safe,          // the input is safe: nothing to shrink
  Inconclusive,  // the input's own check hit a limit
};

struct ShrinkResult {
  Outcome outcome = Outcome::Shrunk;
  model::Verdict verdict = model::Verdict::Safe;  // of the input (and of the result)
  std::string text;                               // the shrunk scenario, with its header comment
  std::unique_ptr<model::World> world;            // `text` resolved (source named after source_name)
  std::vector<int> original_rank;                 // rank i of the result is rank original_rank[i] of the input
  bool reached_max_ranks = true;                  // false: max_ranks was given and not reached
  bool time_limit_hit = false;
  ShrinkStats stats;
};

ShrinkResult shrink(const model::World& world, const ShrinkOptions& options);

// The statistics as a few lines of text (for the CLI and the header comment).
std::string stats_text(const ShrinkStats& stats);

}  // namespace collmc::shrink
