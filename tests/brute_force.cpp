#include "brute_force.h"

#include <algorithm>
#include <vector>

namespace collmc::testing {

BruteForceOutcome brute_force(const checker::NextState& system, uint64_t node_budget) {
  BruteForceOutcome out;
  struct Frame {
    checker::State state;
    uint64_t depth;
  };
  std::vector<Frame> stack;
  stack.push_back({system.initial(), 0});
  std::vector<checker::Transition> succ;
  auto record = [&](model::Verdict v, uint64_t depth) {
    auto [it, inserted] = out.shortest.emplace(v, depth);
    if (!inserted) it->second = std::min(it->second, depth);
  };
  while (!stack.empty()) {
    if (++out.nodes > node_budget) {
      out.complete = false;
      return out;
    }
    Frame f = std::move(stack.back());
    stack.pop_back();
    succ.clear();
    system.successors(f.state, succ);
    if (succ.empty()) {
      if (!system.is_final(f.state)) record(model::Verdict::Deadlock, f.depth);
      continue;
    }
    for (auto& tr : succ) {
      if (tr.violation) {
        record(tr.violation->verdict, f.depth + 1);
        continue;
      }
      stack.push_back({std::move(tr.next), f.depth + 1});
    }
  }
  return out;
}

}  // namespace collmc::testing
