// The choice points of a World's programs (any_order, either, maybe) and their resolutions: the order
// and alternative the counterexample took, found from the calls each thread executed along it.
#pragma once

#include <cstddef>
#include <vector>

#include "collmc/checker/check.h"
#include "collmc/model/world.h"

namespace collmc::shrink {

struct ChoicePoint {
  int rank = 0;
  int thread = 0;
  std::vector<size_t> path;  // child indices from the thread's body
};

// In preorder: an outer choice comes before the choices inside it.
std::vector<ChoicePoint> choice_points(const std::vector<model::RankProgram>& programs);
model::ProgramNode& node_at(std::vector<model::RankProgram>& programs, const ChoicePoint& point);

// By call id: where the call stands in its thread's run along the counterexample (the call a thread
// is blocked in comes last), or -1 for a call the counterexample never reached.
std::vector<long> executed_positions(const checker::CheckResult& result, size_t calls);

// Plain sequences that can replace the choice, best first: the counterexample's resolution; for an
// `either` the counterexample never reached, each alternative (an unreached `any_order` keeps its order).
std::vector<model::ProgramNode> resolutions(const model::ProgramNode& choice, const std::vector<long>& position);

}  // namespace collmc::shrink
