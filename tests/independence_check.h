// A checking layer for the reduction's independence claims (as LTSmin's pins2pins-check): in every
// state of a scenario's full state space, every pair of enabled steps that the partial-order
// reduction treats as independent is applied in both orders. Both orders must be possible and end in
// the same state, and a step must be a violation (of the same verdict) in either order or in neither.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collmc/checker/semantics.h"

namespace collmc::testing {

struct IndependenceCheck {
  uint64_t states = 0;        // states whose enabled pairs were checked
  uint64_t pairs = 0;         // claimed-independent pairs replayed in both orders
  uint64_t choice_pairs = 0;  // pairs of children of a commuting any_order run in both orders
  bool complete = true;       // false: the state budget ran out first
  std::vector<std::string> failures;
};

// Which pairs the reduction (reduction.h) claims commute: host steps of different ranks; a device
// completion and a host step that does not read a member's device work; two different completions.
bool claimed_independent(const checker::Semantics& semantics, const checker::Step& a, const checker::Step& b);

// And the any_orders it resolves in one order (IndependenceInfo::commuting_choice): in every state where
// the claim holds, every child still to run is entered and its call issued without the thread waiting
// afterwards, and every two of them, run in both orders, end in the same state (or the same violation).
IndependenceCheck check_independence(const checker::Semantics& semantics, uint64_t state_budget);

}  // namespace collmc::testing
