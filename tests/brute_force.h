// The reference the search is compared against: every path of the transition system, enumerated as
// a tree (no visited set, no reduction), with every bad outcome and its shortest depth.
#pragma once

#include <cstdint>
#include <map>

#include "collmc/checker/next_state.h"
#include "collmc/model/operations.h"

namespace collmc::testing {

struct BruteForceOutcome {
  std::map<model::Verdict, uint64_t> shortest;  // each reachable bad outcome -> fewest steps to it
  bool complete = true;                         // false: the node budget ran out
  uint64_t nodes = 0;
  bool safe() const { return complete && shortest.empty(); }
};

BruteForceOutcome brute_force(const checker::NextState& system, uint64_t node_budget);

}  // namespace collmc::testing
