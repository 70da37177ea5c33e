#include "collmc/checker/next_state.h"

namespace collmc::checker {

void NextState::successors(const State& s, std::vector<Transition>& out) const {
  std::vector<Step> steps;
  enabled(s, steps);
  for (const Step& step : steps) {
    Transition tr{step, s, std::nullopt};
    tr.violation = apply(tr.next, step);
    out.push_back(std::move(tr));
  }
}

}  // namespace collmc::checker
