// Control automata: every host thread's statement tree compiled into nodes and edges, so that a
// thread's whole control position (inside any_order, either, repeat...) is one node number.
#pragma once

#include <cstdint>
#include <vector>

#include "collmc/model/world.h"

namespace collmc::checker {

struct ControlEdge {
  enum class Kind : uint8_t {
    Call,    // issue one call
    Group,   // issue a group's calls together
    Choice,  // a per-rank choice (any_order, either, maybe): no call, no effect
    Spawn,   // start a thread of this rank
  };
  Kind kind = Kind::Call;
  int32_t target = 0;
  int32_t call = -1;    // Call
  int32_t group = -1;   // Group: index into ControlProgram::groups
  int32_t thread = -1;  // Spawn
};

struct ControlNode {
  std::vector<ControlEdge> edges;  // empty: the thread's end
};

struct ThreadControl {
  int32_t entry = 0;
  int32_t end = 0;
};

struct ControlProgram {
  std::vector<ControlNode> nodes;
  std::vector<std::vector<int32_t>> groups;         // call ids of each group alternative
  std::vector<std::vector<ThreadControl>> threads;  // [rank][thread]
};

// Throws std::length_error when the automaton would exceed `max_nodes` (a huge any_order or group).
ControlProgram compile_control(const model::World& world, size_t max_nodes = 4'000'000);

}  // namespace collmc::checker
