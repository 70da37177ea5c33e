// The wait-for graph of a stuck state (SEMANTICS.md §5): who cannot proceed until whom; cycles come
// from its strongly connected components. report/ renders it (DOT, SVG, HTML, JSON).
#pragma once

#include <string>
#include <vector>

#include "collmc/checker/semantics.h"
#include "collmc/checker/state.h"

namespace collmc::checker {

struct WaitNode {
  enum class Kind { HostThread, StreamHead, Exited };
  Kind kind = Kind::HostThread;
  int rank = 0;
  int thread = -1;       // HostThread
  int stream = -1;       // StreamHead
  int call = -1;         // the call it is in (-1 for Exited)
  std::string label;     // "rank 0 main: register A wa"
  std::string location;  // "file:line"
  bool on_cycle = false;
};

struct WaitEdge {
  int from = 0;
  int to = 0;
  int comm = -1;  // the comm (and slot) the wait is on; -1 for a wait on the rank's own device
  int slot = -1;
  std::string label;  // "host slot 0 of A", "device slot 3 of B", "stream main"
  bool on_cycle = false;
};

// Findings equal up to a renaming of ranks and comms, folded: the cycles of a generated layout's 32
// data-parallel replicas are one cycle "and 31 like it". Two cycles share a shape when one, rotated,
// is the other with every rank and every comm instance renamed (one to one): hop by hop the same kind
// of node, the same thread or stream, the same call text, a wait on the same slot of the same comm
// family with the same words, and the same pattern of repeated ranks and comms. Nothing else is
// folded; a cycle unlike every other is a shape of its own. The same holds for the waits on a rank
// whose calls ended (a path of one hop).
struct Shape {
  std::vector<int> members;  // indices into `cycles` (or `causes`), the representative first
  // Per member: the index into that member's cycle of the node that plays the representative's first
  // node; node (offset + i) % k of the member plays node i of the representative (0 for a cause).
  std::vector<int> offsets;
  // Per member: the rank that plays the representative's first node (its lead rank).
  std::vector<int> lead_ranks;
};

struct WaitForGraph {
  std::vector<WaitNode> nodes;
  std::vector<WaitEdge> edges;
  std::vector<std::vector<int>> cycles;       // one simple cycle (node ids, in order) per non-trivial SCC
  std::vector<std::vector<int>> cycle_edges;  // per cycle: the edge ids it walks, cycle_edges[c][i] leaves cycles[c][i]
  std::vector<int> causes;  // edges into a rank whose calls ended (the cause when there is no cycle), in order
  // "rank 0 waits in register A for rank 1, which waits in register B for rank 0", one per cycle,
  // then one per cause.
  std::vector<std::string> explanations;
  std::vector<Shape> cycle_shapes;  // the cycles folded by shape, in the order of their first member
  std::vector<Shape> cause_shapes;  // the causes folded by shape (members index `causes`)
  bool empty() const { return nodes.empty(); }
  // The nodes on the first shape's representative cycle (what a report draws and explains first).
  const std::vector<int>* first_cycle() const {
    return cycle_shapes.empty() ? nullptr : &cycles[static_cast<size_t>(cycle_shapes.front().members.front())];
  }
};

WaitForGraph build_wait_for_graph(const Semantics& semantics, const State& stuck);

// The shapes of `graph`'s cycles and causes (build_wait_for_graph fills them; exposed for the tests).
void fold_by_shape(const model::World& world, WaitForGraph& graph);

}  // namespace collmc::checker
