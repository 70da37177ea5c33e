// The wait-for graph as DOT: the ranks on a cycle and their neighbours (or every rank), ranks in the
// same role folded, the cycle in red, a legend. And DOT rendered to SVG through Graphviz's library.
#include "collmc/report/wait_for_dot.h"

#include <dlfcn.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "folding.h"

namespace collmc::report {

using checker::WaitForGraph;
using checker::WaitNode;

namespace {

std::string call_text(const model::World& w, int call) {
  return call >= 0 ? w.calls[static_cast<size_t>(call)].text : std::string();
}

std::string dot_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// "dir/sub/file.cmc:12" -> "file.cmc:12": the node says where, the report's text gives the path.
std::string short_location(const std::string& location) {
  const size_t slash = location.rfind('/');
  return slash == std::string::npos ? location : location.substr(slash + 1);
}

// A node's DOT name, which Graphviz also writes into the SVG as the node's <title> (its tooltip):
// words a reader understands, not an internal id.
std::string node_name(const model::World& w, const WaitNode& n) {
  std::string name = "rank " + std::to_string(n.rank);
  if (n.kind == WaitNode::Kind::HostThread)
    name += " " + w.programs[static_cast<size_t>(n.rank)].threads[static_cast<size_t>(n.thread)].name;
  else if (n.kind == WaitNode::Kind::StreamHead)
    name += " stream " + w.streams[static_cast<size_t>(n.stream)];
  else
    name += " exited";
  return name;
}

// "ranks 7..1015 step 8 (x127)"; a long list is cut, the count says how many.
std::string folded_title(const std::vector<int>& ranks) {
  if (ranks.size() == 1) return "rank " + std::to_string(ranks.front());
  return "ranks " + ranks_text(ranks, ",", 40) + " (x" + std::to_string(ranks.size()) + ")";
}

// A drawing of one component has at most this many nodes; past it, the ranks off the cycle are folded
// by what they do alone, and what is still past it is counted in the title, not drawn.
constexpr size_t kMaxDrawnNodes = 48;

}  // namespace

// Edges carry no text: what a node waits for is written in the node ("1: waits for host slot 0 of A",
// numbered along the cycle), the edge only points at whom. Two reasons. A labelled edge between two
// nodes of one rank (a flat edge, common once clusters break a cycle) makes Graphviz 2.43's dot layout
// put its label in a virtual node, and make_vn_slot grows the rank's node array with realloc while
// the rank's `av` alias keeps the old block, which gvFreeLayout then frees a second time: heap
// corruption at W = 32, 40, 56, 64 and 256 of a Megatron deadlock (found with valgrind). And edge
// labels, as labels or xlabels, land on cluster titles and on each other once the graph is dense.
std::string wait_for_dot(const model::World& w, const WaitForGraph& g, const DotOptions& options) {
  // Which nodes to draw: everything, or one representative component: the first shape's first cycle
  // (or, without a cycle, the first cause) and the ranks next to it. The other cycles of its shape
  // are the same picture with other ranks; the text and the page say who.
  const bool whole = options.full_graph || (g.cycles.empty() && g.causes.empty());
  std::set<int> red_nodes, red_edges;  // what is drawn as the cycle
  if (whole) {
    for (size_t c = 0; c < g.cycles.size(); ++c) {
      red_nodes.insert(g.cycles[c].begin(), g.cycles[c].end());
      red_edges.insert(g.cycle_edges[c].begin(), g.cycle_edges[c].end());
    }
  } else if (const auto* cycle = g.first_cycle()) {
    red_nodes.insert(cycle->begin(), cycle->end());
    const auto& edges = g.cycle_edges[static_cast<size_t>(g.cycle_shapes.front().members.front())];
    red_edges.insert(edges.begin(), edges.end());
  }
  std::set<int> keep_ranks;
  if (whole) {
    for (const auto& n : g.nodes) keep_ranks.insert(n.rank);
  } else {
    for (int rank : focus_ranks(g)) keep_ranks.insert(rank);
    const std::set<int> core = keep_ranks;
    for (const auto& e : g.edges) {
      int a = g.nodes[static_cast<size_t>(e.from)].rank, b = g.nodes[static_cast<size_t>(e.to)].rank;
      if (core.count(a)) keep_ranks.insert(b);
      if (core.count(b)) keep_ranks.insert(a);
    }
  }
  std::vector<std::set<int>> targets(g.nodes.size());
  for (const auto& e : g.edges) targets[static_cast<size_t>(e.from)].insert(e.to);
  // Folding: ranks off the cycle whose nodes do the same thing (same kind, thread or stream, same
  // call) and wait for the same nodes are drawn once, with their count; past kMaxDrawnNodes, whom they
  // wait for no longer tells them apart.
  std::vector<int> rep(g.nodes.size(), -1);
  std::map<int, std::vector<int>> folded_ranks;  // representative node -> ranks folded into it
  size_t not_drawn = 0;
  for (const bool coarse : {false, true}) {
    std::fill(rep.begin(), rep.end(), -1);
    folded_ranks.clear();
    not_drawn = 0;
    std::map<std::string, int> by_signature;
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      const auto& node = g.nodes[n];
      if (!keep_ranks.count(node.rank)) continue;
      if (options.full_graph || red_nodes.count(static_cast<int>(n))) {
        rep[n] = static_cast<int>(n);
        folded_ranks[static_cast<int>(n)].push_back(node.rank);
        continue;
      }
      std::string sig = std::to_string(static_cast<int>(node.kind)) + "|" + call_text(w, node.call) + "|" +
                        (node.kind == WaitNode::Kind::HostThread
                             ? w.programs[static_cast<size_t>(node.rank)].threads[static_cast<size_t>(node.thread)].name
                             : std::string()) +
                        "|" + std::to_string(node.stream) + "|";
      if (!coarse)
        for (int t : targets[n]) sig += std::to_string(t) + ",";
      auto it = by_signature.find(sig);
      if (it == by_signature.end()) {
        if (coarse && folded_ranks.size() >= kMaxDrawnNodes) {
          ++not_drawn;
          continue;
        }
        it = by_signature.emplace(sig, static_cast<int>(n)).first;
      }
      rep[n] = it->second;
      folded_ranks[it->second].push_back(node.rank);
    }
    if (options.full_graph || folded_ranks.size() <= kMaxDrawnNodes) break;
  }
  // The cycle's edges, numbered in the order the cycle walks them ("1" .. "k"; "2.1" for the second
  // cycle's first edge when several are drawn), so that the picture and the text can be read together.
  std::map<std::pair<int, int>, std::string> cycle_number;
  std::vector<size_t> numbered;
  if (whole)
    for (size_t c = 0; c < g.cycles.size(); ++c) numbered.push_back(c);
  else if (g.first_cycle())
    numbered.push_back(static_cast<size_t>(g.cycle_shapes.front().members.front()));
  for (size_t c : numbered) {
    const auto& cycle = g.cycles[c];
    for (size_t i = 0; i < cycle.size(); ++i) {
      const std::string number =
          (numbered.size() > 1 ? std::to_string(c + 1) + "." : std::string()) + std::to_string(i + 1);
      cycle_number.emplace(std::make_pair(cycle[i], cycle[(i + 1) % cycle.size()]), number);
    }
  }
  std::string title = "wait-for graph: " + dot_escape(w.name.empty() ? std::string("scenario") : w.name);
  if (!whole && g.cycles.size() > 1)
    title += "\\n(the first of " + std::to_string(g.cycles.size()) + " cycles, " +
             count_of(g.cycle_shapes.front().members.size() - 1, "more", "more") +
             " of its shape; --full-graph draws every rank)";
  else if (!whole && g.cycles.empty() && g.causes.size() > 1)
    title += "\\n(the first of " + std::to_string(g.causes.size()) +
             " waits on ranks whose calls ended; --full-graph draws every rank)";
  if (not_drawn > 0)
    title += "\\n(" + count_of(not_drawn, "more rank next to it is", "more ranks next to it are") + " not drawn)";
  std::ostringstream out;
  out << "digraph waitfor {\n  rankdir=LR;\n  compound=true;\n  nodesep=0.3;\n  ranksep=0.9;\n"
      << "  graph [fontname=\"Helvetica\", fontsize=13];\n"
      << "  node [fontname=\"Helvetica\", fontsize=12, margin=\"0.12,0.05\"];\n"
      << "  edge [fontname=\"Helvetica\", fontsize=11];\n  label=\"" << title << "\";\n  labelloc=t;\n";
  // The edges drawn (between representatives), and what each drawn node waits for, in its own words.
  struct Drawn {
    int from, to;
    const checker::WaitEdge* edge;
    bool red;
  };
  std::vector<Drawn> drawn;
  std::map<int, std::vector<std::string>> waits;  // node -> "1: waits for host slot 0 of A", ...
  std::set<std::pair<int, int>> seen;
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const auto& e = g.edges[i];
    const int a = rep[static_cast<size_t>(e.from)], b = rep[static_cast<size_t>(e.to)];
    if (a < 0 || b < 0 || !seen.emplace(a, b).second) continue;
    const bool red = red_edges.count(static_cast<int>(i)) > 0;
    drawn.push_back({a, b, &e, red});
    const auto number = cycle_number.find({e.from, e.to});
    const std::string text =
        (red && number != cycle_number.end() ? number->second + ": " : std::string()) + "waits for " + e.label;
    // One line per comm slot waited on: a numbered (cycle) line replaces the plain one.
    auto& lines = waits[a];
    const std::string plain = "waits for " + e.label;
    const auto same = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.size() >= plain.size() && l.compare(l.size() - plain.size(), plain.size(), plain) == 0;
    });
    if (same == lines.end())
      lines.push_back(text);
    else if (text != plain)
      *same = text;
  }
  std::map<int, std::vector<int>> by_rank;
  for (const auto& [r, ranks] : folded_ranks) by_rank[g.nodes[static_cast<size_t>(r)].rank].push_back(r);
  std::set<WaitNode::Kind> kinds;
  for (const auto& [rank, nodes] : by_rank) {
    bool on_cycle = false;
    for (int n : nodes) on_cycle = on_cycle || red_nodes.count(n) > 0;
    out << "  subgraph \"cluster " << rank << "\" {\n    label=\"" << folded_title(folded_ranks[nodes.front()])
        << "\";\n    labeljust=l;\n    style=rounded;\n    margin=10;\n    color="
        << (on_cycle ? "\"#c62828\"" : "gray60") << ";\n    fontcolor=" << (on_cycle ? "\"#c62828\"" : "gray25")
        << ";\n";
    for (int n : nodes) {
      const auto& node = g.nodes[static_cast<size_t>(n)];
      kinds.insert(node.kind);
      const std::string shape = node.kind == WaitNode::Kind::HostThread   ? "box"
                                : node.kind == WaitNode::Kind::StreamHead ? "cds"
                                                                          : "octagon";
      std::string label;
      if (node.kind == WaitNode::Kind::HostThread) {
        if (w.programs[static_cast<size_t>(node.rank)].threads.size() > 1)
          label = "thread " + w.programs[static_cast<size_t>(node.rank)].threads[static_cast<size_t>(node.thread)].name;
      } else if (node.kind == WaitNode::Kind::StreamHead) {
        label = "stream " + w.streams[static_cast<size_t>(node.stream)];
      } else {
        label = "exited";
      }
      if (node.call >= 0)
        label += (label.empty() ? "" : "\\n") + dot_escape(call_text(w, node.call)) + "\\n" +
                 dot_escape(short_location(node.location));
      // A node that waits for several ranks on one comm slot says it once; a cycle's hop comes first.
      auto& lines = waits[n];
      std::stable_sort(lines.begin(), lines.end(), [](const std::string& x, const std::string& y) {
        return x.rfind("waits", 0) != 0 && y.rfind("waits", 0) == 0;
      });
      for (const auto& line : lines) label += "\\n" + dot_escape(line);
      out << "    \"" << dot_escape(node_name(w, node)) << "\" [shape=" << shape << ", label=\"" << label
          << "\", tooltip=\"" << dot_escape(node.label + (node.location.empty() ? "" : " at " + node.location)) << "\"";
      if (red_nodes.count(n)) out << ", color=\"#c62828\", penwidth=2, fontcolor=\"#c62828\"";
      if (node.kind == WaitNode::Kind::Exited) out << ", style=filled, fillcolor=gray90";
      out << "];\n";
    }
    out << "  }\n";
  }
  for (const auto& d : drawn) {
    const std::string from = node_name(w, g.nodes[static_cast<size_t>(d.from)]);
    const std::string to = node_name(w, g.nodes[static_cast<size_t>(d.to)]);
    out << "  \"" << dot_escape(from) << "\" -> \"" << dot_escape(to) << "\" [tooltip=\""
        << dot_escape(from + " waits for " + to + ": " + d.edge->label) << "\"";
    if (d.red) out << ", color=\"#c62828\", penwidth=2.5";
    out << "];\n";
  }
  // The legend names only what this picture shows.
  out << "  subgraph cluster_legend {\n    label=\"legend\";\n    style=dashed;\n    color=gray70;\n"
      << "    fontsize=11;\n    node [fontsize=11, margin=\"0.08,0.03\", height=0.3];\n";
  if (kinds.count(WaitNode::Kind::HostThread))
    out << "    \"legend: host\" [shape=box, label=\"host thread in a call\"];\n";
  if (kinds.count(WaitNode::Kind::StreamHead)) out << "    \"legend: stream\" [shape=cds, label=\"stream head\"];\n";
  if (kinds.count(WaitNode::Kind::Exited))
    out << "    \"legend: exited\" [shape=octagon, style=filled, fillcolor=gray90, label=\"rank exited\"];\n";
  if (!red_nodes.empty())
    out << "    \"legend: cycle\" [shape=box, color=\"#c62828\", penwidth=2, fontcolor=\"#c62828\", "
           "label=\"on the cycle; 1: its first hop\"];\n";
  out << "    \"legend: waits\" [shape=plaintext, label=\"arrow: waits for\"];\n  }\n";
  out << "}\n";
  return out.str();
}

namespace {

// libgvc, opened on first use rather than linked: the binary carried to the GPU machines (which
// have no Graphviz) must start there, and only rendering needs the library. The functions are
// typed by libgraphviz-dev's headers.
struct Graphviz {
  decltype(&gvContext) context = nullptr;
  decltype(&agread) read = nullptr;
  Agmemdisc_t* memory_discipline = nullptr;  // libcgraph's own
  Agiodisc_t* io_discipline = nullptr;
  decltype(&agclose) close = nullptr;
  decltype(&agseterrf) set_error_function = nullptr;
  decltype(&gvLayout) layout = nullptr;
  decltype(&gvFreeLayout) free_layout = nullptr;
  decltype(&gvRenderData) render = nullptr;
  decltype(&gvFreeRenderData) free_render = nullptr;
  std::string missing;  // why it cannot be used; empty when it can
};

template <typename F>
void bind(void* library, const char* name, F& f, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(library, name));  // functions and, for the disciplines, data
  if (f == nullptr && missing.empty()) missing = std::string("libgvc has no ") + name;
}

const Graphviz& graphviz() {
  static const Graphviz loaded = [] {
    Graphviz g;
    void* library = dlopen("libgvc.so.6", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) library = dlopen("libgvc.so", RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      g.missing = std::string("Graphviz's library is not installed (Debian: apt install libgvc6): ") + dlerror();
      return g;
    }
    bind(library, "gvContext", g.context, g.missing);
    bind(library, "agread", g.read, g.missing);
    bind(library, "AgMemDisc", g.memory_discipline, g.missing);
    bind(library, "AgIoDisc", g.io_discipline, g.missing);
    bind(library, "agclose", g.close, g.missing);
    bind(library, "agseterrf", g.set_error_function, g.missing);
    bind(library, "gvLayout", g.layout, g.missing);
    bind(library, "gvFreeLayout", g.free_layout, g.missing);
    bind(library, "gvRenderData", g.render, g.missing);
    bind(library, "gvFreeRenderData", g.free_render, g.missing);
    return g;  // the library stays loaded for the life of the process
  }();
  return loaded;
}

// Names to IDs in the order the parser meets them. Graphviz's default ID discipline uses the address
// of each interned name as its ID and orders subgraphs (the rank clusters) by ID: in a fresh `dot`
// process addresses grow with parsing order, in a long-lived one they depend on what was freed
// before, and the layout changes with them. Counting gives the `dot` program's output on every call.
struct NameIds {
  std::map<std::string, IDTYPE, std::less<>> ids;
  std::deque<std::string> names;  // name of ID 2(i+1); stable addresses for print
  IDTYPE next_anonymous = 1;      // anonymous objects get odd IDs, as in Graphviz's discipline
};

void* open_ids(Agraph_t*, Agdisc_t*) { return new NameIds; }

long map_id(void* state, int, char* name, IDTYPE* id, int create) {
  auto& s = *static_cast<NameIds*>(state);
  if (name == nullptr) {
    *id = s.next_anonymous;
    s.next_anonymous += 2;
    return 1;
  }
  if (auto it = s.ids.find(std::string_view(name)); it != s.ids.end()) {
    *id = it->second;
    return 1;
  }
  if (create == 0) return 0;
  s.names.emplace_back(name);
  *id = 2 * static_cast<IDTYPE>(s.names.size());
  s.ids.emplace(s.names.back(), *id);
  return 1;
}

long alloc_id(void*, int, IDTYPE) { return 0; }  // no caller-chosen IDs, as in Graphviz's discipline
void free_id(void*, int, IDTYPE) {}

char* print_id(void* state, int, IDTYPE id) {
  auto& s = *static_cast<NameIds*>(state);
  if (id == 0 || id % 2 != 0 || id / 2 > s.names.size()) return nullptr;
  return s.names[static_cast<size_t>(id / 2 - 1)].data();
}

void close_ids(void* state) { delete static_cast<NameIds*>(state); }
void register_id(void*, int, void*) {}

Agiddisc_t counted_ids = {open_ids, map_id, alloc_id, free_id, print_id, close_ids, register_id};

// DOT from memory, a line per read as agmemread does.
struct DotText {
  const std::string& text;
  size_t at = 0;
};

int read_dot(void* channel, char* buffer, int size) {
  auto& in = *static_cast<DotText*>(channel);
  int n = 0;
  while (n < size && in.at < in.text.size()) {
    const char c = in.text[in.at++];
    buffer[n++] = c;
    if (c == '\n') break;
  }
  return n;
}

// Graphviz reports errors through a process-wide callback; the messages of the current rendering
// are collected here (rendering is not called from several threads).
std::string graphviz_messages;

int collect_graphviz_message(char* message) {
  graphviz_messages += message;
  return 0;
}

// What Graphviz said, on one line, for the exception.
std::string graphviz_said() {
  std::string said = graphviz_messages;
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  for (char& c : said)
    if (c == '\n') c = ' ';
  return said.empty() ? std::string() : ": " + said.substr(0, 300);
}

}  // namespace

std::string render_svg(const std::string& dot) {
  // The same layout engine and SVG renderer as `dot -Tsvg`, through libgvc: no subprocess, no
  // temporary file. libgvc finds its plugins through its own configuration (libgvc6).
  const Graphviz& gv = graphviz();
  if (!gv.missing.empty()) throw std::runtime_error("cannot render SVG: " + gv.missing);
  graphviz_messages.clear();
  const agusererrf previous = gv.set_error_function(collect_graphviz_message);
  // One context for the whole process, never freed: Graphviz's pango text plugin (libgvc6 2.42) keeps, in
  // a static, a pointer to the last font name it measured, and that name belongs to the context's font
  // cache; freeing the context and rendering again makes the plugin read freed memory (ASan,
  // ReportSvg.SameAsTheDotProgram after an earlier rendering in the same process).
  static GVC_t* const shared_context = gv.context();
  GVC_t* const context = shared_context;
  Agiodisc_t from_memory = {read_dot, gv.io_discipline->putstr, gv.io_discipline->flush};
  Agdisc_t discipline = {gv.memory_discipline, &counted_ids, &from_memory};
  DotText text{dot};
  std::string svg, error;
  if (context == nullptr) {
    error = "cannot start Graphviz (gvContext)";
  } else if (std::unique_ptr<Agraph_t, int (*)(Agraph_t*)> graph(gv.read(&text, &discipline), gv.close); !graph) {
    error = "Graphviz cannot read the DOT" + graphviz_said();
  } else if (gv.layout(context, graph.get(), "dot") != 0) {
    error = "Graphviz's dot layout failed (is libgvc6's dot layout plugin installed?)" + graphviz_said();
  } else {
    char* data = nullptr;
    unsigned length = 0;
    if (gv.render(context, graph.get(), "svg", &data, &length) == 0 && data != nullptr)
      svg.assign(data, length);
    else
      error = "Graphviz's SVG rendering failed (is libgvc6's core plugin installed?)" + graphviz_said();
    gv.free_render(data);
    gv.free_layout(context, graph.get());
  }
  gv.set_error_function(previous);
  if (error.empty() && svg.find("<svg") == std::string::npos) error = "Graphviz wrote no SVG" + graphviz_said();
  if (!error.empty()) throw std::runtime_error(error);
  return svg.substr(svg.find("<svg"));
}

}  // namespace collmc::report
