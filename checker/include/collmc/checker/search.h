// Exhaustive exploration of a NextState: depth-first by default (finds violations early, little
// memory on the frontier), breadth-first with `shortest` (the shortest schedule to a bad outcome).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collmc/checker/next_state.h"
#include "collmc/model/operations.h"

namespace collmc::checker {

struct SearchOptions {
  // Breadth-first. Without `reduction` the schedule is the shortest of all; with it, the shortest the
  // reduced state space holds (every deadlock state is kept, so deadlocks are found at their depth).
  bool shortest = false;
  bool reduction = true;        // partial-order reduction (reduction.h); applied by check()
  uint64_t max_states = 0;      // 0: no limit
  double time_limit_s = 0;      // 0: no limit
  uint64_t max_memory_mib = 0;  // 0: no limit; on the visited set and frontier
};

struct SearchStats {
  uint64_t states = 0;       // distinct states stored
  uint64_t transitions = 0;  // successors generated
  uint64_t expanded = 0;     // states whose successors were computed
  uint64_t max_depth = 0;
  double seconds = 0;
  uint64_t memory_bytes = 0;    // visited set + frontier, estimated
  uint64_t peak_rss_bytes = 0;  // the process's peak resident set
  double states_per_second() const { return seconds > 0 ? static_cast<double>(states) / seconds : 0.0; }
};

struct SearchResult {
  model::Verdict verdict = model::Verdict::Safe;
  std::optional<Violation> violation;  // for verdicts found at a step
  std::vector<Step> schedule;          // from the initial state to the bad outcome
  State end_state;                     // deadlock: the final state; violation: the state before the violating step
  SearchStats stats;
  std::string limit;  // for inconclusive: which limit stopped the search
};

SearchResult explore(const NextState& system, const SearchOptions& options);

}  // namespace collmc::checker
