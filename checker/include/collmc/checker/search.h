// Exhaustive exploration of a NextState: depth-first by default (finds violations early, little
// memory on the frontier), breadth-first with `shortest` (the shortest schedule to a bad outcome).
//
// The depth-first search stores only the states where it has a choice (more than one step kept):
// a state with one step is followed in place, without a copy or a visited-set entry. The steps of
// SEMANTICS.md never lead back to a state already on the path (every host step moves a thread down
// its acyclic control automaton, every completion removes device work), so this terminates, and a
// state reached again through a chain is at worst explored again, never missed.
#pragma once

#include <atomic>

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
  // A live line on stderr (states, states/s, depth, memory, elapsed) once a search runs past 1 s.
  enum class Progress : uint8_t { Auto, Always, Never };
  Progress progress = Progress::Auto;  // Auto: when stderr is a terminal
  double progress_after_s = 1.0;       // the first line comes after this long
  // Set (by a SIGINT handler) to stop the search: it ends `inconclusive`, limit "interrupted", with
  // its statistics, as a limit would. Polled every 1024 expanded states.
  const std::atomic<bool>* stop = nullptr;
};

struct SearchStats {
  uint64_t states = 0;       // states visited (depth-first: a state reached again by a chain counts again)
  uint64_t stored = 0;       // states kept in the visited set
  uint64_t transitions = 0;  // steps applied
  uint64_t expanded = 0;     // states whose enabled steps were computed
  uint64_t max_depth = 0;
  double seconds = 0;
  uint64_t memory_bytes = 0;    // visited set + frontier, estimated
  uint64_t peak_rss_bytes = 0;  // the process's peak resident set
  double states_per_second() const { return seconds > 0 ? static_cast<double>(states) / seconds : 0.0; }
  double bytes_per_stored_state() const {
    return stored ? static_cast<double>(memory_bytes) / static_cast<double>(stored) : 0.0;
  }
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
