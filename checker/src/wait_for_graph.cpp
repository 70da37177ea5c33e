#include "collmc/checker/wait_for_graph.h"

#include <unistd.h>
#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

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
      return "exited without calling";
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
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph bg(g.nodes.size());
  for (const auto& e : g.edges) boost::add_edge(static_cast<size_t>(e.from), static_cast<size_t>(e.to), bg);
  std::vector<int> component(g.nodes.size());
  const int ncomp = g.nodes.empty() ? 0 : boost::strong_components(bg, component.data());
  std::vector<std::vector<int>> members(static_cast<size_t>(ncomp));
  for (size_t n = 0; n < g.nodes.size(); ++n) members[static_cast<size_t>(component[n])].push_back(static_cast<int>(n));
  std::vector<std::vector<int>> out_edges(g.nodes.size());
  for (size_t e = 0; e < g.edges.size(); ++e)
    out_edges[static_cast<size_t>(g.edges[e].from)].push_back(static_cast<int>(e));
  for (const auto& comp : members) {
    bool self_loop = comp.size() == 1 && std::any_of(g.edges.begin(), g.edges.end(), [&](const WaitEdge& e) {
                       return e.from == comp[0] && e.to == comp[0];
                     });
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
  }
  // Waits on ranks that exited: the cause when there is no cycle.
  for (const auto& e : g.edges) {
    const auto& to = g.nodes[static_cast<size_t>(e.to)];
    if (to.kind != WaitNode::Kind::Exited) continue;
    const auto& from = g.nodes[static_cast<size_t>(e.from)];
    g.explanations.push_back(who(w, from) + " " + what(w, from) + " (" + e.label + ") for " + who(w, to) +
                             ", which exited without calling");
  }
  return g;
}

namespace {

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string wait_for_dot(const model::World& w, const WaitForGraph& g, const DotOptions& options) {
  // Which nodes to draw: everything, or the ranks on a cycle and their neighbours.
  std::set<int> keep_ranks;
  if (options.full_graph || g.cycles.empty()) {
    for (const auto& n : g.nodes) keep_ranks.insert(n.rank);
  } else {
    for (const auto& n : g.nodes)
      if (n.on_cycle) keep_ranks.insert(n.rank);
    std::set<int> core = keep_ranks;
    for (const auto& e : g.edges) {
      int a = g.nodes[static_cast<size_t>(e.from)].rank, b = g.nodes[static_cast<size_t>(e.to)].rank;
      if (core.count(a)) keep_ranks.insert(b);
      if (core.count(b)) keep_ranks.insert(a);
    }
  }
  // Folding: ranks off the cycle whose nodes do the same thing (same kind, same statement) and wait
  // for the same nodes are drawn once, with their count.
  std::vector<int> rep(g.nodes.size(), -1);
  std::map<int, std::vector<int>> folded_ranks;  // representative node -> ranks folded into it
  std::map<std::string, int> by_signature;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const auto& node = g.nodes[n];
    if (!keep_ranks.count(node.rank)) continue;
    if (options.full_graph || node.on_cycle) {
      rep[n] = static_cast<int>(n);
      folded_ranks[static_cast<int>(n)].push_back(node.rank);
      continue;
    }
    std::string sig = std::to_string(static_cast<int>(node.kind)) + "|" + node.location + "|" +
                      std::to_string(node.thread) + "|" + std::to_string(node.stream) + "|";
    std::set<int> targets;
    for (const auto& e : g.edges)
      if (e.from == static_cast<int>(n)) targets.insert(e.to);
    for (int t : targets) sig += std::to_string(t) + ",";
    auto [it, inserted] = by_signature.emplace(sig, static_cast<int>(n));
    rep[n] = it->second;
    folded_ranks[it->second].push_back(node.rank);
  }
  std::ostringstream out;
  out << "digraph waitfor {\n  rankdir=LR;\n  compound=true;\n  node [fontname=\"Helvetica\", fontsize=10];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=9];\n  label=\"wait-for graph: "
      << dot_escape(w.name.empty() ? std::string("scenario") : w.name) << "\";\n  labelloc=t;\n";
  std::map<int, std::vector<int>> by_rank;
  for (const auto& [r, ranks] : folded_ranks) by_rank[g.nodes[static_cast<size_t>(r)].rank].push_back(r);
  for (const auto& [rank, nodes] : by_rank) {
    const auto& ranks0 = folded_ranks[nodes.front()];
    std::string cluster_label = "rank " + std::to_string(rank);
    if (ranks0.size() > 1) {
      cluster_label = "ranks ";
      for (size_t i = 0; i < ranks0.size(); ++i) cluster_label += (i ? "," : "") + std::to_string(ranks0[i]);
      cluster_label += " (x" + std::to_string(ranks0.size()) + ")";
    }
    out << "  subgraph cluster_r" << rank << " {\n    label=\"" << cluster_label
        << "\";\n    style=rounded;\n    color=gray60;\n";
    for (int n : nodes) {
      const auto& node = g.nodes[static_cast<size_t>(n)];
      std::string shape = node.kind == WaitNode::Kind::HostThread   ? "box"
                          : node.kind == WaitNode::Kind::StreamHead ? "cds"
                                                                    : "octagon";
      std::string kind =
          node.kind == WaitNode::Kind::HostThread
              ? "host: " + w.programs[static_cast<size_t>(node.rank)].threads[static_cast<size_t>(node.thread)].name
          : node.kind == WaitNode::Kind::StreamHead ? "device: stream " + w.streams[static_cast<size_t>(node.stream)]
                                                    : "exited";
      std::string label = kind;
      if (node.call >= 0) label += "\\n" + dot_escape(call_text(w, node.call)) + "\\n" + dot_escape(node.location);
      size_t count = folded_ranks[n].size();
      if (count > 1) label += "\\n(x" + std::to_string(count) + " ranks)";
      out << "    n" << n << " [shape=" << shape << ", label=\"" << label << "\"";
      if (node.on_cycle) out << ", color=red, penwidth=2, fontcolor=red";
      if (node.kind == WaitNode::Kind::Exited) out << ", style=filled, fillcolor=gray90";
      out << "];\n";
    }
    out << "  }\n";
  }
  std::set<std::pair<int, int>> drawn;
  for (const auto& e : g.edges) {
    int a = rep[static_cast<size_t>(e.from)], b = rep[static_cast<size_t>(e.to)];
    if (a < 0 || b < 0 || !drawn.emplace(a, b).second) continue;
    out << "  n" << a << " -> n" << b << " [label=\"" << dot_escape(e.label) << "\"";
    if (e.on_cycle) out << ", color=red, penwidth=2.5, fontcolor=red";
    out << "];\n";
  }
  out << "  subgraph cluster_legend {\n    label=\"legend\";\n    style=dashed;\n    color=gray70;\n    fontsize=9;\n"
      << "    node [fontsize=8, margin=\"0.05,0.02\", height=0.3];\n"
      << "    l_host [shape=box, label=\"host thread in a call\"];\n"
      << "    l_dev [shape=cds, label=\"stream head\"];\n"
      << "    l_exit [shape=octagon, style=filled, fillcolor=gray90, label=\"rank exited\"];\n"
      << "    l_a [shape=point, width=0.05];\n    l_b [shape=point, width=0.05];\n"
      << "    l_host -> l_dev [label=\"waits for\", fontsize=8];\n"
      << "    l_a -> l_b [label=\"on the cycle\", color=red, penwidth=2.5, fontcolor=red, fontsize=8];\n  }\n";
  out << "}\n";
  return out.str();
}

std::string render_svg(const std::string& dot) {
  char in_path[] = "/tmp/collmc-dot-XXXXXX";
  int fd = mkstemp(in_path);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for Graphviz");
  {
    std::ofstream f(in_path);
    f << dot;
  }
  close(fd);
  std::string cmd = std::string("dot -Tsvg '") + in_path + "' 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string svg;
  if (pipe) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) svg.append(buf, n);
  }
  int status = pipe ? pclose(pipe) : -1;
  unlink(in_path);
  if (status != 0 || svg.find("<svg") == std::string::npos)
    throw std::runtime_error("Graphviz 'dot -Tsvg' failed (is graphviz installed?): " + svg.substr(0, 300));
  return svg.substr(svg.find("<svg"));
}

}  // namespace collmc::checker
