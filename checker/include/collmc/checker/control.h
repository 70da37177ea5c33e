// Control automata: every host thread's statement tree compiled into nodes and edges. A thread's
// control position is a node plus, for every `any_order` it is inside, the set of children already
// started (a done-set): an `any_order` of K children is one dispatch node and K compiled children,
// not 2^K nodes (issue 13), so K = 64 compiles to as many nodes as K calls in sequence.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <vector>

#include "collmc/checker/state.h"
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
  std::vector<ControlEdge> edges;  // empty: the thread's end; of a dispatch node: Choice edge i enters child i
  int32_t any_order = -1;          // >= 0: the dispatch node of that any_order
  int32_t scope = -1;              // the innermost any_order whose child holds this node (-1: none)
};

// One `any_order` with two or more children. A thread at its dispatch node carries a frame (a 64-bit
// done-set) at index `depth` of its done-sets; a child's bit is set when the child starts, and the
// child's last edge leads back to the dispatch node.
struct AnyOrderControl {
  int32_t dispatch = 0;
  int32_t cont = 0;               // where the thread goes once every child ran
  uint32_t depth = 0;             // frames of the enclosing any_orders
  std::vector<int32_t> children;  // entry node of each child
  uint64_t all() const { return children.size() >= 64 ? ~0ull : (1ull << children.size()) - 1; }
};

struct ThreadControl {
  int32_t entry = 0;
  int32_t end = 0;
};

// For a property of edges (a call that reads device work, ...): whether a thread at a position can
// still take such an edge. Exact for the done-sets (children already started are not counted again).
class ControlLookahead {
 public:
  bool ahead(const struct ControlProgram& program, const ControlPosition& at) const;
  bool from_entry(int32_t node) const { return local_[static_cast<size_t>(node)] != 0; }

 private:
  friend struct ControlProgram;
  std::vector<char> local_;         // [node]: reachable before the node's innermost child ends
  std::vector<uint64_t> children_;  // [any_order]: the children that have such an edge
  std::vector<char> after_;         // [any_order]: after it, before the enclosing child ends
};

struct ControlProgram {
  std::vector<ControlNode> nodes;
  std::vector<std::vector<int32_t>> groups;         // call ids of each group alternative
  std::vector<std::vector<ThreadControl>> threads;  // [rank][thread]
  std::vector<AnyOrderControl> any_orders;

  // The edges a thread at `at` may take, in order (Step::edge numbers them): a dispatch node offers
  // its children not yet started, in child order.
  template <class F>
  void for_each_edge(const ControlPosition& at, F&& f) const {
    const ControlNode& n = nodes[static_cast<size_t>(at.node)];
    if (n.any_order < 0) {
      for (size_t e = 0; e < n.edges.size(); ++e) f(e, n.edges[e]);
      return;
    }
    const AnyOrderControl& a = any_orders[static_cast<size_t>(n.any_order)];
    uint64_t left = a.all() & ~at.done[a.depth];
    for (size_t e = 0; left != 0; ++e, left &= left - 1) f(e, n.edges[static_cast<size_t>(std::countr_zero(left))]);
  }
  size_t edge_count(const ControlPosition& at) const;
  const ControlEdge& edge_at(const ControlPosition& at, size_t edge) const;

  // Takes edge `edge` of for_each_edge and settles the position.
  void take(ControlPosition& at, size_t edge) const;
  // Puts a thread at `node` (a thread's entry) and settles the position.
  void enter(ControlPosition& at, int32_t node) const;

  ControlLookahead lookahead(const std::function<bool(const ControlEdge&)>& edge_has) const;

 private:
  void settle(ControlPosition& at) const;
  int child_at(const ControlPosition& at, size_t edge) const;  // at a dispatch node
};

// Throws std::length_error when the automaton would exceed `max_nodes` (a huge group).
ControlProgram compile_control(const model::World& world, size_t max_nodes = 4'000'000);

}  // namespace collmc::checker
