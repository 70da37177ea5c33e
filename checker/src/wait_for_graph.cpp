#include "collmc/checker/wait_for_graph.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace collmc::checker {

namespace {

std::string call_text(const model::World& w, int call) {
  return call >= 0 ? w.calls[static_cast<size_t>(call)].text : std::string();
}
std::string call_loc(const model::World& w, int call) {
  if (call < 0) return {};
  const auto& l = w.calls[static_cast<size_t>(call)].loc;
  return l.file_name() + ":" + std::to_string(l.line);
}

std::string who(const model::World& w, const WaitNode& n) {
  switch (n.kind) {
    case WaitNode::Kind::HostThread: {
      const auto& name = w.programs[static_cast<size_t>(n.rank)].threads[static_cast<size_t>(n.thread)].name;
      return "rank " + std::to_string(n.rank) + (name == "main" ? "" : " (thread " + name + ")");
    }
    case WaitNode::Kind::StreamHead:
      return "rank " + std::to_string(n.rank) + "'s stream " + w.streams[static_cast<size_t>(n.stream)];
    case WaitNode::Kind::Exited:
      return "rank " + std::to_string(n.rank);
  }
  return {};
}

std::string what(const model::World& w, const WaitNode& n) {
  switch (n.kind) {
    case WaitNode::Kind::HostThread:
      return "waits in " + call_text(w, n.call);
    case WaitNode::Kind::StreamHead:
      return "is stuck at " + call_text(w, n.call);
    case WaitNode::Kind::Exited:
      // Not "exited": for an imported trace the rank was alive (holding the GIL, on a failed GPU); all
      // the scenario says is that its calls end here.
      return "stopped calling (its calls end here)";
  }
  return {};
}

// The communicator family (the `comm` declaration) an edge waits on; empty for a wait on a device.
std::string edge_family(const model::World& w, const WaitEdge& e) {
  return e.comm >= 0 ? w.comms[static_cast<size_t>(e.comm)].decl_name : std::string();
}

// One simple cycle of a strongly connected component, for the report. A knot of many ranks has many
// cycles; the one that tells a design review most is the one through the most communicator families
// (the groups whose orders conflict), and among those the shortest. Cycles are enumerated by
// increasing length (each from its lowest node), within a fixed budget; past the budget the best
// found so far is kept, and if none was found a plain walk closes one.
std::pair<std::vector<int>, std::vector<int>> pick_cycle(const model::World& w, const WaitForGraph& g,
                                                         const std::vector<int>& comp, int comp_id,
                                                         const std::vector<int>& component,
                                                         const std::vector<std::vector<int>>& out_edges) {
  constexpr size_t kMaxLength = 16;
  constexpr long kBudget = 200000;
  std::set<std::string> all_families;
  for (int n : comp)
    for (int e : out_edges[static_cast<size_t>(n)])
      if (component[static_cast<size_t>(g.edges[static_cast<size_t>(e)].to)] == comp_id)
        all_families.insert(edge_family(w, g.edges[static_cast<size_t>(e)]));
  std::vector<int> best_nodes, best_edges;
  size_t best_families = 0;
  long budget = kBudget;
  std::vector<int> path, via;
  std::set<int> on_path;
  auto consider = [&]() {
    std::set<std::string> families;
    for (int e : via) families.insert(edge_family(w, g.edges[static_cast<size_t>(e)]));
    if (families.size() > best_families) {
      best_families = families.size();
      best_nodes = path;
      best_edges = via;
    }
  };
  // Depth-first over simple paths from `start` through nodes above it, closing at `start`.
  std::function<void(int, size_t)> extend = [&](int start, size_t length) {
    const int cur = path.back();
    for (int e : out_edges[static_cast<size_t>(cur)]) {
      if (--budget < 0) return;
      const int next = g.edges[static_cast<size_t>(e)].to;
      if (component[static_cast<size_t>(next)] != comp_id || next < start) continue;
      if (next == start) {
        if (path.size() == length) {
          via.push_back(e);
          consider();
          via.pop_back();
        }
        continue;
      }
      if (path.size() >= length || on_path.count(next)) continue;
      path.push_back(next);
      via.push_back(e);
      on_path.insert(next);
      extend(start, length);
      on_path.erase(next);
      via.pop_back();
      path.pop_back();
    }
  };
  for (size_t length = 1; length <= std::min(kMaxLength, comp.size()) && budget > 0; ++length) {
    for (int start : comp) {
      path = {start};
      via.clear();
      on_path = {start};
      extend(start, length);
      if (budget <= 0) break;
    }
    if (best_families == all_families.size()) break;  // no longer cycle can cover more
  }
  if (!best_nodes.empty()) return {best_nodes, best_edges};
  // Fallback: walk from the lowest node, always within the component, until the walk returns to a
  // node already on it.
  std::vector<int> walk{comp.front()};
  std::vector<int> walk_edges;
  std::map<int, size_t> pos{{comp.front(), 0}};
  while (true) {
    int chosen = -1;
    for (int e : out_edges[static_cast<size_t>(walk.back())])
      if (component[static_cast<size_t>(g.edges[static_cast<size_t>(e)].to)] == comp_id) {
        chosen = e;
        if (pos.count(g.edges[static_cast<size_t>(e)].to)) break;
      }
    const int next = g.edges[static_cast<size_t>(chosen)].to;
    walk_edges.push_back(chosen);
    if (auto it = pos.find(next); it != pos.end())
      return {std::vector<int>(walk.begin() + static_cast<long>(it->second), walk.end()),
              std::vector<int>(walk_edges.begin() + static_cast<long>(it->second), walk_edges.end())};
    pos[next] = walk.size();
    walk.push_back(next);
  }
}

// Tarjan's strongly connected components, iterative (a knot of thousands of ranks must not overflow
// the call stack). Components are numbered in the order they complete, as Boost.Graph's
// strong_components numbers them, so cycles and explanations keep their order. Written out here so
// that the checker depends on model/ alone.
int strong_components(const WaitForGraph& g, const std::vector<std::vector<int>>& out_edges,
                      std::vector<int>& component) {
  const size_t n = g.nodes.size();
  std::vector<int> index(n, -1), low(n, 0);
  std::vector<bool> on_stack(n, false);
  std::vector<size_t> stack;
  std::vector<std::pair<size_t, size_t>> dfs;  // (node, next out-edge to follow)
  int next_index = 0, count = 0;
  component.assign(n, -1);
  auto discover = [&](size_t v) {
    index[v] = low[v] = next_index++;
    stack.push_back(v);
    on_stack[v] = true;
    dfs.emplace_back(v, 0);
  };
  for (size_t root = 0; root < n; ++root) {
    if (index[root] >= 0) continue;
    discover(root);
    while (!dfs.empty()) {
      const size_t v = dfs.back().first;
      const auto& out = out_edges[v];
      if (dfs.back().second < out.size()) {
        const auto w = static_cast<size_t>(g.edges[static_cast<size_t>(out[dfs.back().second++])].to);
        if (index[w] < 0)
          discover(w);
        else if (on_stack[w])
          low[v] = std::min(low[v], index[w]);
        continue;
      }
      dfs.pop_back();
      if (!dfs.empty()) low[dfs.back().first] = std::min(low[dfs.back().first], low[v]);
      if (low[v] != index[v]) continue;
      size_t member;
      do {
        member = stack.back();
        stack.pop_back();
        on_stack[member] = false;
        component[member] = count;
      } while (member != v);
      ++count;
    }
  }
  return count;
}

}  // namespace

WaitForGraph build_wait_for_graph(const Semantics& semantics, const State& stuck) {
  const model::World& w = semantics.world();
  WaitForGraph g;
  std::map<std::tuple<int, int, int, int>, int> index;  // (kind, rank, thread, stream) -> node
  auto node = [&](WaitNode::Kind kind, int rank, int thread, int stream, int call) {
    auto key = std::make_tuple(static_cast<int>(kind), rank, thread, stream);
    auto it = index.find(key);
    if (it != index.end()) {
      if (g.nodes[static_cast<size_t>(it->second)].call < 0) g.nodes[static_cast<size_t>(it->second)].call = call;
      return it->second;
    }
    WaitNode n;
    n.kind = kind;
    n.rank = rank;
    n.thread = thread;
    n.stream = stream;
    n.call = call;
    g.nodes.push_back(n);
    index.emplace(key, static_cast<int>(g.nodes.size() - 1));
    return static_cast<int>(g.nodes.size() - 1);
  };
  const auto deps = semantics.wait_dependencies(stuck);
  // Waiting nodes first, so that targets can point at a rank's blocked threads.
  std::map<int, std::vector<int>> blocked_threads;
  for (const auto& d : deps)
    if (d.thread >= 0) {
      int n = node(WaitNode::Kind::HostThread, d.rank, d.thread, -1, d.call);
      auto& v = blocked_threads[d.rank];
      if (std::find(v.begin(), v.end(), n) == v.end()) v.push_back(n);
    } else {
      node(WaitNode::Kind::StreamHead, d.rank, -1, d.stream, d.call);
    }
  std::set<std::tuple<int, int, std::string>> seen_edges;
  auto edge = [&](int from, int to, const WaitDependency& d) {
    if (!seen_edges.emplace(from, to, d.label).second) return;
    g.edges.push_back(WaitEdge{from, to, d.comm, d.slot, d.label, false});
  };
  for (const auto& d : deps) {
    int from = d.thread >= 0 ? node(WaitNode::Kind::HostThread, d.rank, d.thread, -1, d.call)
                             : node(WaitNode::Kind::StreamHead, d.rank, -1, d.stream, d.call);
    if (d.target_stream >= 0) {
      const auto& head = stuck.ranks[static_cast<size_t>(d.target_rank)].streams[static_cast<size_t>(d.target_stream)];
      int head_call = head.empty() ? -1 : static_cast<int>(head.front().parts.front().call);
      edge(from, node(WaitNode::Kind::StreamHead, d.target_rank, -1, d.target_stream, head_call), d);
    } else if (auto it = blocked_threads.find(d.target_rank); it != blocked_threads.end()) {
      for (int to : it->second) edge(from, to, d);
    } else {
      edge(from, node(WaitNode::Kind::Exited, d.target_rank, -1, -1, -1), d);
    }
  }
  for (auto& n : g.nodes) {
    n.label = who(w, n) + ": " + (n.kind == WaitNode::Kind::Exited ? "exited" : call_text(w, n.call));
    n.location = call_loc(w, n.call);
  }

  // Strongly connected components; one simple cycle through each non-trivial one.
  std::vector<std::vector<int>> out_edges(g.nodes.size());
  for (size_t e = 0; e < g.edges.size(); ++e)
    out_edges[static_cast<size_t>(g.edges[e].from)].push_back(static_cast<int>(e));
  std::vector<int> component;
  const int ncomp = strong_components(g, out_edges, component);
  std::vector<std::vector<int>> members(static_cast<size_t>(ncomp));
  for (size_t n = 0; n < g.nodes.size(); ++n) members[static_cast<size_t>(component[n])].push_back(static_cast<int>(n));
  std::vector<char> has_self_loop(g.nodes.size(), 0);
  for (const auto& e : g.edges)
    if (e.from == e.to) has_self_loop[static_cast<size_t>(e.from)] = 1;
  for (const auto& comp : members) {
    const bool self_loop = comp.size() == 1 && has_self_loop[static_cast<size_t>(comp[0])];
    if (comp.size() < 2 && !self_loop) continue;
    const int comp_id = component[static_cast<size_t>(comp.front())];
    auto [cycle, cycle_edges] = pick_cycle(w, g, comp, comp_id, component, out_edges);
    for (int n : cycle) g.nodes[static_cast<size_t>(n)].on_cycle = true;
    for (int e : cycle_edges) g.edges[static_cast<size_t>(e)].on_cycle = true;
    // "rank 0 waits in X (slot) for rank 1, which waits in Y (slot) for rank 0"
    std::string text = who(w, g.nodes[static_cast<size_t>(cycle.front())]) + " ";
    for (size_t i = 0; i < cycle.size(); ++i) {
      const auto& n = g.nodes[static_cast<size_t>(cycle[i])];
      const auto& after = g.nodes[static_cast<size_t>(cycle[(i + 1) % cycle.size()])];
      const auto& e = g.edges[static_cast<size_t>(cycle_edges[i])];
      text += (i == 0 ? "" : ", which ") + what(w, n) + " (" + e.label + ") for " + who(w, after);
    }
    g.explanations.push_back(text);
    g.cycles.push_back(cycle);
    g.cycle_edges.push_back(cycle_edges);
  }
  // Waits on ranks that exited: the cause when there is no cycle.
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const auto& e = g.edges[i];
    const auto& to = g.nodes[static_cast<size_t>(e.to)];
    if (to.kind != WaitNode::Kind::Exited) continue;
    const auto& from = g.nodes[static_cast<size_t>(e.from)];
    g.causes.push_back(static_cast<int>(i));
    g.explanations.push_back(who(w, from) + " " + what(w, from) + " (" + e.label + ") for " + who(w, to) +
                             ", which never reached that call (its calls end before it)");
  }
  fold_by_shape(w, g);
  return g;
}

namespace {

// `text` with every occurrence of `name` replaced by a mark: a comm instance's name in a label or a
// call ("host slot 0 of dp{0,8}") says which instance, and instances are what a renaming changes.
std::string without_name(std::string text, const std::string& name) {
  if (name.empty()) return text;
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
    text.replace(at, name.size(), "\x01");
  return text;
}

// What a node and the edge leaving it say, without their rank and comm instance: the part of a hop a
// renaming keeps. Fields are joined by \x02, hops by \x03.
std::string hop_token(const model::World& w, const WaitNode& n, const WaitEdge& e) {
  const std::string comm_name = e.comm >= 0 ? w.comms[static_cast<size_t>(e.comm)].name : std::string();
  std::string t = std::to_string(static_cast<int>(n.kind)) + "\x02";
  if (n.kind == WaitNode::Kind::HostThread)
    t += w.programs[static_cast<size_t>(n.rank)].threads[static_cast<size_t>(n.thread)].name;
  if (n.kind == WaitNode::Kind::StreamHead) t += w.streams[static_cast<size_t>(n.stream)];
  t += "\x02";
  if (n.call >= 0) {
    const auto& c = w.calls[static_cast<size_t>(n.call)];
    t += std::to_string(static_cast<int>(c.kind)) + "\x02" + without_name(c.text, comm_name);
  }
  t += "\x02" + (e.comm >= 0 ? w.comms[static_cast<size_t>(e.comm)].decl_name : std::string()) + "\x02" +
       std::to_string(e.slot) + "\x02" + without_name(e.label, comm_name);
  return t;
}

// The key of a cycle read from its node `start`: every hop's token with its rank and comm replaced by
// the index of their first appearance, so that two keys are equal exactly when a renaming of ranks and
// comms (one to one) maps one cycle, so rotated, onto the other.
std::string cycle_key(const WaitForGraph& g, const std::vector<std::string>& tokens, const std::vector<int>& cycle,
                      const std::vector<int>& edges, size_t start) {
  std::map<int, int> rank_index, comm_index;
  std::string key;
  const size_t k = cycle.size();
  for (size_t j = 0; j < k; ++j) {
    const size_t i = (start + j) % k;
    const auto& n = g.nodes[static_cast<size_t>(cycle[i])];
    const auto& e = g.edges[static_cast<size_t>(edges[i])];
    const int r = rank_index.emplace(n.rank, static_cast<int>(rank_index.size())).first->second;
    const int c = e.comm < 0 ? -1 : comm_index.emplace(e.comm, static_cast<int>(comm_index.size())).first->second;
    key += tokens[i] + "\x02" + std::to_string(r) + "\x02" + std::to_string(c) + "\x03";
  }
  return key;
}

// Groups items by key, in the order of their first member.
void group_by_key(const std::vector<std::string>& keys, const std::vector<int>& offsets,
                  const std::vector<int>& lead_ranks, std::vector<Shape>& shapes) {
  std::map<std::string, size_t> shape_of;
  for (size_t i = 0; i < keys.size(); ++i) {
    auto [it, fresh] = shape_of.emplace(keys[i], shapes.size());
    if (fresh) shapes.emplace_back();
    auto& shape = shapes[it->second];
    shape.members.push_back(static_cast<int>(i));
    shape.offsets.push_back(offsets[i]);
    shape.lead_ranks.push_back(lead_ranks[i]);
  }
}

}  // namespace

void fold_by_shape(const model::World& w, WaitForGraph& g) {
  g.cycle_shapes.clear();
  g.cause_shapes.clear();
  // A cycle's key is its least rotation's, so that where a cycle was entered does not matter; a cycle
  // too long to rotate cheaply is keyed as read (it may then fail to fold with its like: never the
  // other way round).
  constexpr size_t kMaxRotated = 256;
  std::vector<std::string> keys;
  std::vector<int> starts, leads;
  for (size_t c = 0; c < g.cycles.size(); ++c) {
    const auto& cycle = g.cycles[c];
    const auto& edges = g.cycle_edges[c];
    std::vector<std::string> tokens;
    for (size_t i = 0; i < cycle.size(); ++i)
      tokens.push_back(hop_token(w, g.nodes[static_cast<size_t>(cycle[i])], g.edges[static_cast<size_t>(edges[i])]));
    std::string best = cycle_key(g, tokens, cycle, edges, 0);
    size_t best_start = 0;
    for (size_t start = 1; start < cycle.size() && cycle.size() <= kMaxRotated; ++start)
      if (std::string key = cycle_key(g, tokens, cycle, edges, start); key < best) {
        best = std::move(key);
        best_start = start;
      }
    keys.push_back(std::move(best));
    starts.push_back(static_cast<int>(best_start));
    leads.push_back(0);
  }
  group_by_key(keys, starts, leads, g.cycle_shapes);
  // Offsets relative to the representative: its first node sits at (k - start_rep) of the least
  // rotation, which in a member is node (start_member + k - start_rep) % k.
  for (auto& shape : g.cycle_shapes) {
    const auto& rep = g.cycles[static_cast<size_t>(shape.members.front())];
    const int k = static_cast<int>(rep.size());
    const int rep_start = shape.offsets.front();
    for (size_t m = 0; m < shape.members.size(); ++m) {
      const auto& cycle = g.cycles[static_cast<size_t>(shape.members[m])];
      shape.offsets[m] = (shape.offsets[m] + k - rep_start) % k;
      shape.lead_ranks[m] = g.nodes[static_cast<size_t>(cycle[static_cast<size_t>(shape.offsets[m])])].rank;
    }
  }
  keys.clear();
  starts.clear();
  leads.clear();
  for (int e : g.causes) {
    const auto& edge = g.edges[static_cast<size_t>(e)];
    const auto& from = g.nodes[static_cast<size_t>(edge.from)];
    const auto& to = g.nodes[static_cast<size_t>(edge.to)];
    // The rank waited for is renamed too, and differs from the waiting one.
    keys.push_back(hop_token(w, from, edge) + "\x03" + std::to_string(static_cast<int>(to.kind)) +
                   (to.rank == from.rank ? "\x02same" : "\x02other"));
    starts.push_back(0);
    leads.push_back(from.rank);
  }
  group_by_key(keys, starts, leads, g.cause_shapes);
}

}  // namespace collmc::checker
