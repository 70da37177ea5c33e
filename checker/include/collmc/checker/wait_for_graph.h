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

struct WaitForGraph {
  std::vector<WaitNode> nodes;
  std::vector<WaitEdge> edges;
  std::vector<std::vector<int>> cycles;  // one simple cycle (node ids, in order) per non-trivial SCC
  // "rank 0 waits in register A for rank 1, which waits in register B for rank 0", one per cycle,
  // or for a wait on a rank that exited without calling.
  std::vector<std::string> explanations;
  bool empty() const { return nodes.empty(); }
};

WaitForGraph build_wait_for_graph(const Semantics& semantics, const State& stuck);

}  // namespace collmc::checker
