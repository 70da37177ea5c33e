// The HTML rendering of a CheckResult: one self-contained page (inline CSS, no scripts, nothing
// fetched). The time line is a CSS grid per rank lane; every lane uses the same fixed column widths,
// so the lanes line up and a device completion is drawn as one connector made of a piece per lane.
#include "collmc/report/html_report.h"

#include "collmc/report/check_report.h"
#include "markup.h"

#include "folding.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <tuple>

namespace collmc::report {

using checker::CheckResult;
using checker::ScheduleStep;
using checker::StepKind;
using checker::WaitNode;

namespace {

std::string esc(std::string_view s) { return escape_markup(s); }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string mib(uint64_t bytes) { return fmt("%.1f", static_cast<double>(bytes) / (1 << 20)) + " MiB"; }

std::string loc_short(const model::SourceLoc& loc) { return loc.file_name() + ":" + std::to_string(loc.line); }

// Rank sets in a cell are cut past this many characters (with the count left out); shapes explained
// one by one (the rest counted).
constexpr size_t kRanksChars = 160;
constexpr size_t kShapesShown = 8;
// Up to this many ranks and steps the time line has every lane and step; above, it follows the ranks
// that matter (their last kTimelineSteps steps).
constexpr int kWholeTimelineRanks = 64;
constexpr size_t kWholeTimelineSteps = 512;
constexpr size_t kTimelineSteps = 200;
// Above this many comm instances the comms table lists each family's first kInstancesPerFamily.
constexpr size_t kWholeCommsTable = 64;
constexpr size_t kInstancesPerFamily = 4;

const char* kStyle = R"CSS(
:root { --red: #c62828; --green: #2e7d32; --amber: #b26a00; --orange: #d84315; --ink: #1f2328; --muted: #656d76;
  --line: #d0d7de; --dev: #6a1b9a; }
* { box-sizing: border-box; }
body { margin: 0; padding: 12px 14px 40px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica,
  Arial, sans-serif; color: var(--ink); background: #fff; }
code, .mono, .call, .marker, .comm-name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas,
  "DejaVu Sans Mono", "Liberation Mono", monospace; }
h1 { font-size: 22px; margin: 0 0 6px; }
h2 { font-size: 16px; margin: 0 0 8px; }
h3 { font-size: 14px; margin: 12px 0 6px; }
section { margin: 0 0 14px; padding: 10px 12px; border: 1px solid var(--line); border-radius: 8px; }
p { margin: 4px 0; }
.muted { color: var(--muted); }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 3px 10px 3px 0; border-bottom: 1px solid #eaeef2; vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }

/* verdict */
#verdict { border-width: 2px 2px 2px 8px; }
#verdict .verdict-name { display: inline-block; padding: 1px 10px; border-radius: 6px; color: #fff;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace; }
#verdict .scenario-name { font-weight: 600; }
.verdict-safe { border-color: var(--green); } .verdict-safe .verdict-name { background: var(--green); }
.verdict-deadlock { border-color: var(--red); } .verdict-deadlock .verdict-name { background: var(--red); }
.verdict-inconclusive { border-color: var(--amber); } .verdict-inconclusive .verdict-name { background: var(--amber); }
.verdict-mismatch, .verdict-divergent_kernel, .verdict-use_after_deregister, .verdict-use_after_free,
.verdict-usage_error { border-color: var(--orange); }
.verdict-mismatch .verdict-name, .verdict-divergent_kernel .verdict-name, .verdict-use_after_deregister .verdict-name,
.verdict-use_after_free .verdict-name, .verdict-usage_error .verdict-name { background: var(--orange); }
.expect.agrees b { color: var(--green); } .expect.disagrees b { color: var(--red); }
.violation { margin: 8px 0; padding: 6px 10px; background: #fff1ee; border-left: 4px solid var(--orange); }
.notes { margin: 6px 0 0; padding-left: 20px; color: var(--muted); }

/* time line */
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; font-size: 12px; color: var(--muted); margin: 4px 0 10px;
  align-items: center; }
.legend span.sw { display: inline-flex; align-items: center; gap: 5px; }
/* right to left: the scroller opens at its end, where the ranks got stuck; the lanes read left to right */
.tl-scroll { overflow-x: auto; border: 1px solid var(--line); border-radius: 6px; direction: rtl; }
.tl { width: max-content; min-width: 100%; direction: ltr; }
.tl-head, .lane { display: grid; grid-template-columns: var(--cols); }
.tl-head { font-size: 11px; color: var(--muted); background: #f6f8fa; border-bottom: 1px solid var(--line); }
.tl-head > div { padding: 3px 2px; text-align: center; white-space: nowrap; overflow: hidden; }
.tl-head .corner, .lane-label { position: sticky; left: 0; z-index: 3; text-align: left; }
.tl-head .corner { background: #f6f8fa; padding-left: 8px; }
.tl-head .endh, .lane .end { position: sticky; right: 0; z-index: 3; }
.tl-head .endh { background: #f6f8fa; text-align: left; padding-left: 8px; }
.lane { min-height: 44px; background: #fff; box-shadow: inset 0 -1px 0 #eaeef2; }
.tl > .lane:nth-child(odd) { background: #f9fafb; }
.lane-label { padding: 4px 8px; font-weight: 600; font-size: 13px; background: inherit; display: flex;
  flex-direction: column; justify-content: center;
  box-shadow: inset -1px 0 0 var(--line), inset 0 -1px 0 #eaeef2; }
.lane-label small { display: block; font-weight: 400; font-size: 10px; color: var(--muted); line-height: 1.25;
  overflow-wrap: anywhere; }
.call { align-self: center; margin: 4px 2px; padding: 3px 5px; font-size: 11px; line-height: 1.25;
  border: 1px solid #8c959f; border-radius: 4px; background: #fff; overflow-wrap: anywhere; z-index: 1; }
.call .thr { display: block; font-size: 10px; color: var(--muted); }
/* thicker borders take from the padding, so that the text still fits its column on one line */
.call.stuck { border: 2px dashed var(--red); padding: 2px 4px; }
.call.violating { border: 2px solid var(--orange); padding: 2px 4px; background: #fff1ee; }
.call.group { border-left: 5px solid #0969da; padding-left: 1px; }
.conn { position: relative; z-index: 1; }
.conn .seg { position: absolute; left: 50%; width: 3px; margin-left: -1.5px; background: var(--dev); }
.conn .seg.full { top: 0; bottom: 0; } .conn .seg.down { top: 50%; bottom: 0; } .conn .seg.up { top: 0; bottom: 50%; }
.conn.pass .seg { background: repeating-linear-gradient(to bottom, var(--dev) 0 4px, transparent 4px 7px); width: 2px;
  margin-left: -1px; }
.conn .dot { position: absolute; top: 50%; left: 50%; width: 12px; height: 12px; margin: -6px 0 0 -6px;
  border-radius: 50%; background: var(--dev); border: 2px solid var(--dev); }
.conn .dot.recv { background: #fff; }
.conn .cap { position: absolute; top: 1px; left: 0; right: 0; text-align: center; font-size: 10px; color: var(--dev);
  white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.small { position: relative; }
.small .choose, .small .spawn { position: absolute; top: 50%; left: 50%; }
.small .choose { width: 9px; height: 9px; margin: -4.5px 0 0 -4.5px; transform: rotate(45deg); background: #8c959f; }
.small .spawn { width: 12px; height: 12px; margin: -6px 0 0 -6px; border-radius: 50%; border: 2px solid #0969da;
  background: #fff; }
.lane .end { padding: 3px 6px; background: inherit; box-shadow: inset 1px 0 0 var(--line), -4px 0 6px -4px #0003,
  inset 0 -1px 0 #eaeef2; display: flex; flex-direction: column; gap: 3px; justify-content: center; }
.marker { max-width: 340px; font-size: 11px; line-height: 1.25; padding: 2px 6px; border-radius: 4px; overflow-wrap: anywhere; }
.marker .mk { font-family: system-ui, sans-serif; font-size: 10px; font-weight: 600; margin-right: 4px; }
.marker.blocked, .marker.lg-blocked { border: 2px dashed var(--amber); background: #fffaf0; }
.marker.blocked .mk, .marker.lg-blocked .mk { color: var(--amber); }
.marker.blocked.cycle, .marker.lg-cycle { border: 2px solid var(--red); background: #ffebee; }
.marker.blocked.cycle .mk, .marker.lg-cycle .mk { color: var(--red); }
.lane[data-cycle] .lane-label { color: var(--red); box-shadow: inset 4px 0 0 var(--red), inset -1px 0 0 var(--line),
  inset 0 -1px 0 #eaeef2; }
.lane-label .tag { font-size: 10px; font-weight: 600; }
.marker.violation { border: 2px solid var(--orange); background: #fff1ee; }
.marker.violation .mk { color: var(--orange); }
.marker.finished { border: 1px solid var(--green); color: var(--green); background: #f0fff4; }
.marker.idle { border: 1px dashed #8c959f; color: var(--muted); }
details { margin-top: 10px; }
details table td { font-size: 12px; }

/* the cycle and where each rank stands */
.cycle-line { font-size: 16px; margin: 8px 0 4px; }
.cycle-line .r { display: inline-block; min-width: 1.6em; padding: 0 6px; border: 2px solid var(--red); border-radius: 12px;
  color: var(--red); font-weight: 700; text-align: center; }
.cycle-line .hop { color: var(--muted); font-size: 13px; margin: 0 4px; white-space: nowrap; }
.cycle-line .hop code { color: var(--ink); }
table.hops td, table.stands td { font-size: 13px; }
table.hops td.mono, table.stands td.mono { white-space: nowrap; }
table.hops td.n { color: var(--red); font-weight: 700; }
table.stands tr.on-cycle td:first-child { color: var(--red); font-weight: 700; }
table.stands .state { font-size: 11px; font-weight: 600; padding: 0 5px; border-radius: 4px; white-space: nowrap; }
table.stands .state.cycle { color: #fff; background: var(--red); }
table.stands .state.blocked { color: var(--amber); border: 1px dashed var(--amber); }
table.stands .state.finished { color: var(--green); border: 1px solid var(--green); }
table.stands .state.idle { color: var(--muted); border: 1px dashed #8c959f; }
summary { cursor: pointer; color: var(--muted); }

/* wait-for graph: drawn at its own size (scroll for a large one), never shrunk to unreadable text */
.svgwrap { overflow: auto; max-height: 85vh; border: 1px solid #eaeef2; border-radius: 6px; padding: 6px; }
.svgwrap svg { max-width: none; height: auto; }
.fit-toggle { margin: 0 4px 6px 0; vertical-align: middle; }
.fit-label { font-size: 12px; color: var(--muted); cursor: pointer; }
.fit-toggle:checked ~ .svgwrap { max-height: none; }
.fit-toggle:checked ~ .svgwrap svg { max-width: 100%; width: 100%; height: auto; }
.like-it { margin: 0 0 6px; color: var(--muted); }
table.stands tr.on-cycle td:first-child .alike { display: block; font-weight: 400; font-size: 11px; color: var(--muted); }
footer { margin-top: 18px; font-size: 12px; color: var(--muted); }
footer code { color: var(--ink); overflow-wrap: anywhere; }

/* print (the design-review handout): the verdict, the cycle, where each rank stands and the graph fitted
   to the page; the scrolling time line stays on screen */
@media print {
  body { padding: 0; font-size: 11pt; }
  section { break-inside: avoid-page; border-color: #999; }
  #timeline .tl-scroll, #timeline .legend { display: none; }
  .svgwrap { overflow: visible; max-height: none; border: 0; padding: 0; }
  .svgwrap svg { max-width: 100%; }
  .fit-toggle, .fit-label { display: none; }
  details > summary { display: none; }
}
.explanations li { margin: 3px 0; }
#stats td:first-child { color: var(--muted); }
)CSS";

struct Column {
  enum class Kind { Call, Device, Small } kind = Kind::Call;
  int width = 0;
};

// Width of a call column from its text: 11px monospace, wrapped past 200px.
int text_width(size_t chars) {
  // 6.7px a character (DejaVu Sans Mono and Menlo are 6.6 at 11px) + 16px of margin, border and padding,
  // and a little slack for rounding.
  return std::clamp(static_cast<int>(std::ceil(static_cast<double>(chars) * 6.7)) + 19, 44, 200);
}

class Html {
 public:
  Html(const CheckResult& r, const std::string& svg, const HtmlProvenance& provenance)
      : r_(r), w_(*r.world), svg_(svg), provenance_(provenance) {
    for (const auto& n : r_.wait_for.nodes)
      if (n.on_cycle) on_cycle_.emplace(n.rank, n.thread, n.stream);
  }

  std::string render() {
    const std::string verdict(model::verdict_name(r_.verdict));
    out_ << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         << "<title>collmc: " << esc(verdict) << " \xE2\x80\x94 " << esc(scenario_title()) << "</title>\n"
         << "<style>" << kStyle << "</style>\n</head>\n<body>\n";
    // What a reviewer needs first: the verdict, the cycle and where each rank stands; then the graph,
    // the time line, the communicators and the statistics.
    verdict_section();
    graph_section();
    timeline_section();
    comms_section();
    stats_section();
    footer();
    out_ << "</body>\n</html>\n";
    return out_.str();
  }

 private:
  std::string scenario_title() const {
    if (!w_.name.empty()) return w_.name;
    return w_.source ? w_.source->path : std::string("scenario");
  }
  std::string thread_name(int rank, int thread) const {
    return w_.programs[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)].name;
  }
  bool multi_threaded(int rank) const { return w_.programs[static_cast<size_t>(rank)].threads.size() > 1; }
  const model::Call& call(int id) const { return w_.calls[static_cast<size_t>(id)]; }
  bool rank_on_cycle(int rank) const {
    for (const auto& [r, thread, stream] : on_cycle_)
      if (r == rank) return true;
    return false;
  }
  bool blocked_on_cycle(const checker::BlockedCall& b) const {
    return on_cycle_.count({b.rank, b.stream >= 0 ? -1 : b.thread, b.stream}) > 0;
  }
  // "3", or "3 (thread t)" / "3 (stream s)" where the rank has more than one.
  std::string who(const WaitNode& n) const {
    std::string text = std::to_string(n.rank);
    if (n.kind == WaitNode::Kind::StreamHead) text += " (stream " + w_.streams[static_cast<size_t>(n.stream)] + ")";
    if (n.kind == WaitNode::Kind::HostThread && multi_threaded(n.rank))
      text += " (" + thread_name(n.rank, n.thread) + ")";
    return text;
  }
  // The search limits, as the command line gives them.
  std::string limits_text() const {
    const auto& o = r_.options;
    std::string limits;
    if (o.max_states) limits += "max states " + std::to_string(o.max_states);
    if (o.time_limit_s > 0) limits += (limits.empty() ? "" : ", ") + ("time " + fmt("%g", o.time_limit_s) + " s");
    if (o.max_memory_mib)
      limits += (limits.empty() ? "" : ", ") + ("memory " + std::to_string(o.max_memory_mib) + " MiB");
    return limits.empty() ? "none" : limits;
  }

  // Each shape's representative cycle as "1 -> 3 -> 2 -> 1" with the comm on each hop, then one row
  // per hop, numbered as the graph numbers its red edges, then how many cycles are like it.
  void cycle_summary() {
    const auto& g = r_.wait_for;
    const size_t shown = std::min(g.cycle_shapes.size(), kShapesShown);
    if (g.cycle_shapes.size() < g.cycles.size())
      out_ << "<p class=\"folded-count\">" << g.cycles.size() << " wait-for cycles, of "
           << count_of(g.cycle_shapes.size(), "shape", "shapes")
           << ": one of each is shown (cycles alike up to a renaming of ranks and comms are folded).</p>\n";
    for (size_t sh = 0; sh < shown; ++sh) {
      const auto& shape = g.cycle_shapes[sh];
      const size_t c = static_cast<size_t>(shape.members.front());
      const auto& cycle = g.cycles[c];
      const auto& cycle_edges = g.cycle_edges[c];
      const std::string prefix = shown > 1 ? std::to_string(sh + 1) + "." : std::string();
      out_ << "<p class=\"cycle-line\">" << (shown > 1 ? "cycle " + std::to_string(sh + 1) : "cycle") << ": ";
      for (size_t i = 0; i < cycle.size(); ++i) {
        out_ << "<span class=\"r\">" << esc(who(g.nodes[static_cast<size_t>(cycle[i])])) << "</span>";
        const auto& hop = g.edges[static_cast<size_t>(cycle_edges[i])];
        out_ << "<span class=\"hop\">&rarr; <code>" << esc(hop.comm >= 0 ? w_.comm_name(hop.comm) : hop.label)
             << "</code> &rarr;</span>";
      }
      out_ << "<span class=\"r\">" << esc(who(g.nodes[static_cast<size_t>(cycle.front())])) << "</span></p>\n";
      if (shape.members.size() > 1)
        out_ << "<p class=\"like-it\">" << esc(like_it_text(shape, kRanksChars)) << "</p>\n";
      out_ << "<table class=\"hops\">\n<thead><tr><th>#</th><th>rank</th><th>in</th><th>at</th><th>waits for</th>"
              "<th>on</th></tr></thead>\n<tbody>\n";
      for (size_t i = 0; i < cycle.size(); ++i) {
        const auto& from = g.nodes[static_cast<size_t>(cycle[i])];
        const auto& to = g.nodes[static_cast<size_t>(cycle[(i + 1) % cycle.size()])];
        out_ << "<tr><td class=\"n\">" << prefix << (i + 1) << "</td><td>rank " << esc(who(from))
             << "</td><td class=\"mono\">" << esc(from.call >= 0 ? call(from.call).text : std::string("(exited)"))
             << "</td><td class=\"mono\">" << esc(from.location) << "</td><td>rank " << esc(who(to))
             << "</td><td class=\"mono\">" << esc(g.edges[static_cast<size_t>(cycle_edges[i])].label) << "</td></tr>\n";
      }
      out_ << "</tbody>\n</table>\n";
    }
    if (g.cycle_shapes.size() > shown)
      out_ << "<p class=\"muted\">and " << count_of(g.cycle_shapes.size() - shown, "more shape", "more shapes")
           << " of cycle: the JSON result (<code>--json</code>) lists every cycle.</p>\n";
  }

  // Without a cycle: each shape of cause (a wait on a rank whose calls ended), its first member in words.
  void cause_summary() {
    const auto& g = r_.wait_for;
    const size_t first = g.cycles.size();
    for (size_t sh = 0; sh < g.cause_shapes.size() && sh < kShapesShown; ++sh) {
      const auto& shape = g.cause_shapes[sh];
      out_ << "<p class=\"cause\">" << esc(g.explanations[first + static_cast<size_t>(shape.members.front())])
           << "</p>\n";
      if (shape.members.size() > 1)
        out_ << "<p class=\"like-it\">" << esc(like_it_text(shape, kRanksChars)) << "</p>\n";
    }
    if (g.cause_shapes.size() > kShapesShown)
      out_ << "<p class=\"muted\">and " << count_of(g.cause_shapes.size() - kShapesShown, "more shape", "more shapes")
           << " of cause: the JSON result (<code>--json</code>) lists every one.</p>\n";
  }

  // The step that issued the call a rank is stuck in (1-based), or 0.
  size_t issuing_step(const checker::BlockedCall& b) const {
    for (size_t i = r_.schedule.size(); i-- > 0;) {
      const auto& s = r_.schedule[i];
      if (s.rank != b.rank || (b.thread >= 0 && s.thread != b.thread)) continue;
      if (std::find(s.calls.begin(), s.calls.end(), b.call) != s.calls.end()) return i + 1;
    }
    return 0;
  }

  // Where each rank stands: the ranks on each shape's representative cycle first, one row each, with
  // the ranks in the same role on the cycles like it; the others folded: ranks in the same place share
  // a row.
  void stands_table() {
    if (r_.blocked.empty()) return;
    struct Row {
      std::vector<int> ranks;
      const checker::BlockedCall* first = nullptr;
      bool cycle = false;
      std::vector<int> alike;  // on a cycle: the ranks in its place on the cycles like it
      std::set<int> comms;     // the comms of the calls folded into the row
    };
    std::vector<Row> rows;
    const auto roles = cycle_roles(r_.wait_for);
    std::map<std::pair<int, int>, size_t> lead_row;                         // (shape, hop) -> row
    std::map<std::pair<int, int>, std::vector<int>> alike;                  // (shape, hop) -> ranks in that role
    std::map<std::tuple<int, int, int, bool, std::string>, size_t> folded;  // what and where -> row
    for (const auto& b : r_.blocked) {
      if (auto it = roles.find({b.rank, b.stream >= 0 ? -1 : b.thread, b.stream}); it != roles.end()) {
        const auto key = std::make_pair(it->second.shape, it->second.hop);
        if (!it->second.lead) {
          alike[key].push_back(b.rank);
        } else if (static_cast<size_t>(it->second.shape) < kShapesShown) {
          lead_row[key] = rows.size();
          rows.push_back(Row{{b.rank}, &b, true, {}, {}});
        }
        continue;
      }
      // Ranks in the same role share a row, also on different comms (role_key).
      const auto key =
          std::make_tuple(b.stream >= 0 ? 1 : 0, b.call >= 0 ? 1 : 0, b.finished ? 1 : 0, false, role_key(w_, b));
      auto [it, fresh] = folded.emplace(key, rows.size());
      if (fresh) {
        rows.push_back(Row{{b.rank}, &b, false, {}, {}});
      } else if (rows[it->second].ranks.back() != b.rank) {
        rows[it->second].ranks.push_back(b.rank);
      }
      rows[it->second].comms.insert(role_comm(w_, b));
    }
    for (auto& [key, ranks] : alike)
      if (auto it = lead_row.find(key); it != lead_row.end()) rows[it->second].alike = std::move(ranks);
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.cycle && !b.cycle; });
    out_ << "<h3>Where each rank stands</h3>\n<table class=\"stands\">\n<thead><tr><th>rank</th><th>state</th>"
            "<th>call</th><th>at</th><th>step</th><th>why</th></tr></thead>\n<tbody>\n";
    for (const auto& row : rows) {
      const auto& b = *row.first;
      const std::vector<int>& ranks = row.ranks;
      const char* state = row.cycle ? "cycle" : b.finished ? "finished" : b.call >= 0 ? "blocked" : "idle";
      const char* state_text = row.cycle     ? "on the cycle"
                               : b.finished  ? "finished"
                               : b.call >= 0 ? "blocked"
                                             : "waiting";
      std::string where;
      if (b.stream >= 0)
        where = "stream " + w_.streams[static_cast<size_t>(b.stream)] + ": ";
      else if (b.thread >= 0 && multi_threaded(b.rank))
        where = thread_name(b.rank, b.thread) + ": ";
      const size_t step = b.call >= 0 && !b.finished ? issuing_step(b) : 0;
      out_ << "<tr" << (row.cycle ? " class=\"on-cycle\"" : "") << "><td>" << (ranks.size() == 1 ? "rank " : "ranks ")
           << esc(ranks_text(ranks, ", ", kRanksChars))
           << (ranks.size() > 1 ? " <span class=\"muted\">(" + count_of(ranks.size(), "rank", "ranks") + ")</span>"
                                : std::string());
      if (!row.alike.empty())
        out_ << " <span class=\"muted alike\">(the same: " << esc(ranks_text(row.alike, ", ", 80))
             << ", in its place on the cycles like it)</span>";
      out_ << "</td><td><span class=\"state " << state << "\">" << state_text << "</span></td><td class=\"mono\">"
           << esc(where) << esc(b.call >= 0 && !b.finished ? call(b.call).text : std::string())
           << "</td><td class=\"mono\">"
           << esc(b.call >= 0 && !b.finished ? loc_short(call(b.call).loc) : std::string()) << "</td><td>"
           << (step ? std::to_string(step) : std::string()) << "</td><td class=\"why\">"
           << esc(b.finished ? std::string() : b.reason)
           << (ranks.size() > 1
                   ? " <span class=\"muted\">(rank " + std::to_string(b.rank) + "; the others alike" +
                         (row.comms.size() > 1 ? ", on " + std::to_string(row.comms.size() - 1) + " other comms"
                                               : std::string()) +
                         ")</span>"
                   : std::string())
           << "</td></tr>\n";
    }
    out_ << "</tbody>\n</table>\n";
  }

  void footer() {
    char date[32] = "";
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    if (gmtime_r(&now, &utc)) std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &utc);
    out_ << "<footer id=\"provenance\">\n<p>Generated by collmc"
         << esc(provenance_.version.empty() ? "" : " " + provenance_.version) << " on " << date
         << "; search limits: " << esc(limits_text()) << ".</p>\n";
    if (!provenance_.command_line.empty())
      out_ << "<p>Reproduce with: <code class=\"command\">" << esc(provenance_.command_line) << "</code></p>\n";
    out_ << "</footer>\n";
  }

  void verdict_section() {
    const std::string verdict(model::verdict_name(r_.verdict));
    out_ << "<section id=\"verdict\" class=\"verdict verdict-" << esc(verdict) << "\">\n"
         << "<h1><span class=\"verdict-name\">" << esc(verdict) << "</span> <span class=\"scenario-name\">"
         << esc(w_.name.empty() ? std::string("(unnamed scenario)") : w_.name) << "</span></h1>\n"
         << "<p class=\"file\">file: <code>" << esc(w_.source ? w_.source->path : std::string("<scenario>"))
         << "</code> &middot; " << w_.ranks << " ranks &middot; profile " << esc(model::profile_name(w_.knobs.profile))
         << ", comm_mode " << esc(model::comm_mode_name(w_.knobs.comm_mode)) << ", runtime_connect "
         << (w_.knobs.runtime_connect ? "on" : "off") << ", stream_progress "
         << (w_.knobs.stream_progress == model::StreamProgress::Serialized ? "serialized" : "independent") << "</p>\n";
    if (const std::string progress = progress_line(r_); !progress.empty())
      out_ << "<p class=\"mpi-progress\">mpi_progress: " << esc(progress) << "</p>\n";
    if (w_.expect) {
      const bool agrees = r_.agrees_with_expect();
      out_ << "<p class=\"expect " << (agrees ? "agrees" : "disagrees") << "\">expected: <code>"
           << esc(model::verdict_name(*w_.expect)) << "</code> <b>" << (agrees ? "(agrees)" : "(DISAGREES)")
           << "</b></p>\n";
    } else {
      out_ << "<p class=\"expect none\">expected: <span class=\"muted\">no expect line</span></p>\n";
    }
    if (r_.verdict == model::Verdict::Inconclusive)
      out_ << "<p class=\"limit\">The search stopped at a limit: " << esc(r_.limit) << "; nothing is proven.</p>\n";
    if (r_.violation) {
      const auto& v = *r_.violation;
      out_ << "<div class=\"violation\"><b>" << esc(model::verdict_name(v.verdict)) << "</b>: " << esc(v.message);
      if (v.call >= 0) out_ << "<br><span class=\"location\">at <code>" << esc(call(v.call).loc.str()) << "</code>";
      if (v.rank >= 0) {
        out_ << (v.call >= 0 ? ", " : "<br><span class=\"location\">") << "rank " << v.rank;
        if (v.thread >= 0) out_ << " thread " << esc(thread_name(v.rank, v.thread));
      }
      if (v.call >= 0 || v.rank >= 0) out_ << "</span>";
      out_ << "</div>\n";
    }
    if (r_.verdict == model::Verdict::Deadlock && !r_.wait_for.cycles.empty())
      cycle_summary();
    else if (r_.verdict == model::Verdict::Deadlock && !r_.wait_for.explanations.empty())
      cause_summary();
    if (!w_.notes.empty()) {
      out_ << "<ul class=\"notes\">\n";
      for (const auto& n : w_.notes) out_ << "<li>note: " << esc(n) << "</li>\n";
      out_ << "</ul>\n";
    }
    if (r_.verdict != model::Verdict::Safe) stands_table();
    out_ << "</section>\n";
  }

  void comms_section() {
    out_ << "<section id=\"comms\">\n<h2>Communicators (" << w_.comms.size() << ")</h2>\n";
    if (w_.comms.empty()) {
      out_ << "<p class=\"muted\">none</p>\n</section>\n";
      return;
    }
    // A long table (a large job has dozens) is folded away: it is reference, not the finding.
    const bool fold = w_.comms.size() > 8;
    if (fold) out_ << "<details class=\"comms-table\"><summary>the " << w_.comms.size() << " communicators</summary>\n";
    out_ << "<table>\n<thead><tr><th>name</th><th>members</th><th>mode</th><th>uninit</th><th>declared</th></tr>"
            "</thead>\n<tbody>\n";
    // A job's thousands of instances: each family's first few, then the count of the rest.
    const bool by_family = w_.comms.size() > kWholeCommsTable;
    std::map<std::string, size_t> family_size, listed;
    for (const auto& c : w_.comms) ++family_size[c.decl_name];
    for (const auto& c : w_.comms) {
      const size_t n = ++listed[c.decl_name];
      if (by_family && n > kInstancesPerFamily) continue;
      row_of_comm(c);
      if (by_family && n == kInstancesPerFamily && family_size[c.decl_name] > n)
        out_ << "<tr class=\"more-instances\"><td colspan=\"5\" class=\"muted\">and "
             << count_of(family_size[c.decl_name] - n, "more instance", "more instances") << " of <code>"
             << esc(c.decl_name) << "</code> (the JSON result lists every one)</td></tr>\n";
    }
    out_ << "</tbody>\n</table>\n" << (fold ? "</details>\n" : "") << "</section>\n";
  }

  void row_of_comm(const model::CommInstance& c) {
    out_ << "<tr data-comm=\"" << c.id << "\"><td class=\"comm-name\">" << esc(c.name) << "</td><td class=\"members\">"
         << esc(ranks_text(c.members, ", ", kRanksChars)) << "</td><td class=\"mode\">"
         << esc(model::comm_mode_name(c.mode)) << "</td><td class=\"uninit\">" << (c.uninit ? "yes" : "no")
         << "</td><td class=\"muted\">" << esc(c.decl_name == c.name ? std::string() : c.decl_name + " at ")
         << (c.loc.line > 0 ? esc(loc_short(c.loc)) : std::string()) << "</td></tr>\n";
  }

  // The ranks a completion joins: the comm's members, or the two ends of a send/recv pair.
  std::vector<int> joined_ranks(const ScheduleStep& s) const {
    if (s.kind == StepKind::CompletePair) return {std::min(s.rank, s.peer), std::max(s.rank, s.peer)};
    if (s.comm >= 0) return w_.comms[static_cast<size_t>(s.comm)].members;
    return {s.rank};
  }

  std::string call_lines(const ScheduleStep& s) const {
    std::string locs;
    for (int c : s.calls) locs += (locs.empty() ? "" : "; ") + loc_short(call(c).loc);
    return locs;
  }

  void timeline_section() {
    if (r_.schedule.empty()) {
      // No time line to draw: say why in one line (a safe result has no bad schedule to show).
      out_ << "<section id=\"timeline\">\n<h2>Schedule</h2>\n<p class=\"muted\">";
      if (r_.verdict == model::Verdict::Safe)
        out_ << "No bad schedule: every ordering and interleaving ends with every rank (" << w_.ranks << ") finished.";
      else if (r_.verdict == model::Verdict::Inconclusive)
        out_ << "No schedule: the search stopped at a limit before finding a bad outcome.";
      else
        out_ << "The violation needs no step: it holds in the initial state.";
      out_ << "</p>\n</section>\n";
      return;
    }
    out_ << "<section id=\"timeline\">\n<h2>Schedule (" << count_of(r_.schedule.size(), "step", "steps") << ")</h2>\n";
    // At job scale the time line follows the ranks that matter (the first cycle's, or the first
    // cause's) and the steps that led them there; the page must open fast at W = 16,384.
    std::vector<size_t> steps;
    std::vector<int> lanes;
    const std::vector<int> focus = focus_ranks(r_.wait_for);
    if ((w_.ranks > kWholeTimelineRanks || r_.schedule.size() > kWholeTimelineSteps) && !focus.empty()) {
      lanes = focus;
      steps = steps_that_matter(r_, lanes, kTimelineSteps);
      size_t of_focus = steps_that_matter(r_, lanes, 0).size();
      out_ << "<p class=\"timeline-scope\">The time line follows " << (lanes.size() == 1 ? "rank " : "ranks ")
           << esc(ranks_text(lanes, ", ", kRanksChars)) << " ("
           << (r_.wait_for.first_cycle() ? "the first cycle" : "the first cause")
           << "): " << (of_focus == steps.size() ? "the " : "the last ") << count_of(steps.size(), "step", "steps")
           << " of the " << of_focus << " that are theirs (their calls and the completions they took part in); "
           << count_of(w_.ranks - static_cast<int>(lanes.size()), "rank", "ranks") << " and "
           << count_of(r_.schedule.size() - steps.size(), "step", "steps")
           << " left out. The JSON result (<code>--json</code>) has every step.</p>\n";
    } else {
      for (size_t i = 0; i < r_.schedule.size(); ++i) steps.push_back(i);
      for (int rank = 0; rank < w_.ranks; ++rank) lanes.push_back(rank);
    }
    // The legend names what this time line shows, and nothing else.
    bool group = false, device = false, choice = false, spawn = false, stuck = false;
    for (const auto& s : r_.schedule) {
      group = group || s.kind == StepKind::IssueGroup;
      device = device || s.kind == StepKind::Complete || s.kind == StepKind::CompletePair;
      choice = choice || s.kind == StepKind::Choose || s.kind == StepKind::MatchAny;
      spawn = spawn || s.kind == StepKind::Spawn;
    }
    for (const auto& b : r_.blocked) stuck = stuck || (b.call >= 0 && !b.finished);
    out_ << "<div class=\"legend\"><span class=\"sw\"><span class=\"call\" style=\"margin:0\">call</span> host "
            "call (tooltip: file:line)</span>";
    if (group)
      out_ << "<span class=\"sw\"><span class=\"call group\" style=\"margin:0\">call<br>call</span> group (tooltip: "
              "file:line each)</span>";
    if (stuck)
      out_ << "<span class=\"sw\"><span class=\"call stuck\" style=\"margin:0\">call</span> the call the rank is stuck "
              "in</span>";
    if (device)
      out_ << "<span class=\"sw\"><svg width=\"14\" height=\"26\" aria-hidden=\"true\"><line x1=\"7\" y1=\"5\" "
              "x2=\"7\" y2=\"21\" stroke=\"#6a1b9a\" stroke-width=\"3\"/><circle cx=\"7\" cy=\"5\" r=\"5\" "
              "fill=\"#6a1b9a\"/><circle cx=\"7\" cy=\"21\" r=\"5\" fill=\"#6a1b9a\"/></svg> device completion "
              "joining its member ranks</span>";
    if (choice)
      out_ << "<span class=\"sw\"><svg width=\"12\" height=\"12\" aria-hidden=\"true\"><rect x=\"2\" y=\"2\" "
              "width=\"8\" height=\"8\" fill=\"#8c959f\" transform=\"rotate(45 6 6)\"/></svg> choice</span>";
    if (spawn)
      out_ << "<span class=\"sw\"><svg width=\"14\" height=\"14\" aria-hidden=\"true\"><circle cx=\"7\" cy=\"7\" "
              "r=\"5\" fill=\"#fff\" stroke=\"#0969da\" stroke-width=\"2\"/></svg> thread start</span>";
    if (!on_cycle_.empty())
      out_ << "<span class=\"sw\"><span class=\"marker lg-cycle\" style=\"margin:0\"><span "
              "class=\"mk\">on the cycle</span></span> a rank on the wait-for cycle</span>";
    if (stuck)
      out_ << "<span class=\"sw\"><span class=\"marker lg-blocked\" style=\"margin:0\"><span "
              "class=\"mk\">blocked</span></span> blocked, not on the cycle (tooltip: why)</span>";
    out_ << "</div>\n";

    // Columns: the rank label, one per step, the end markers.
    std::vector<Column> cols;
    for (size_t i : steps) {
      const auto& s = r_.schedule[i];
      Column c;
      if (s.kind == StepKind::Issue || s.kind == StepKind::IssueGroup) {
        c.kind = Column::Kind::Call;
        size_t chars = 0;
        for (int id : s.calls) chars = std::max(chars, call(id).text.size());
        if (multi_threaded(s.rank)) chars = std::max(chars, thread_name(s.rank, s.thread).size());
        c.width = text_width(chars);
      } else if (s.kind == StepKind::Complete || s.kind == StepKind::CompletePair) {
        c.kind = Column::Kind::Device;
        c.width = 46;
      } else {
        c.kind = Column::Kind::Small;
        c.width = 22;
      }
      cols.push_back(c);
    }
    std::string template_cols = "88px";
    for (const auto& c : cols) template_cols += " " + std::to_string(c.width) + "px";
    template_cols += " minmax(200px, 1fr)";

    // The box of the call each rank is stuck in (the last step that issued it), and the violating step.
    std::vector<int> stuck_step(r_.schedule.size(), 0);
    for (const auto& b : r_.blocked) {
      if (b.call < 0 || b.finished) continue;
      for (size_t i = r_.schedule.size(); i-- > 0;) {
        const auto& s = r_.schedule[i];
        if (s.rank != b.rank || (b.thread >= 0 && s.thread != b.thread)) continue;
        if (std::find(s.calls.begin(), s.calls.end(), b.call) != s.calls.end()) {
          stuck_step[i] = 1;
          break;
        }
      }
    }
    if (r_.violation && r_.violation->call >= 0 && !r_.schedule.empty()) {
      const auto& last = r_.schedule.back();
      if (std::find(last.calls.begin(), last.calls.end(), r_.violation->call) != last.calls.end())
        stuck_step.back() = 2;
    }

    out_ << "<div class=\"tl-scroll\">\n<div class=\"tl\" style=\"--cols: " << template_cols << "\">\n";
    out_ << "<div class=\"tl-head\"><div class=\"corner\">rank \\ step</div>";
    for (size_t i : steps) out_ << "<div title=\"" << esc(r_.schedule[i].text) << "\">" << (i + 1) << "</div>";
    out_ << "<div class=\"endh\">at the end</div></div>\n";

    for (int rank : lanes) {
      const bool cycle = rank_on_cycle(rank);
      out_ << "<div class=\"lane\" id=\"lane-" << rank << "\" data-rank=\"" << rank << "\""
           << (cycle ? " data-cycle=\"1\"" : "") << ">";
      std::string comms;
      for (const auto& c : w_.comms)
        if (c.has_member(rank)) comms += (comms.empty() ? "" : ", ") + c.name;
      out_ << "<div class=\"lane-label\" style=\"grid-column:1\" title=\"rank " << rank << " is in "
           << esc(comms.empty() ? std::string("no communicator") : comms) << "\">rank " << rank;
      if (cycle) out_ << "<small class=\"tag\">on the cycle</small>";
      if (multi_threaded(rank)) {
        std::string names;
        for (const auto& t : w_.programs[static_cast<size_t>(rank)].threads)
          names += (names.empty() ? "" : ", ") + t.name;
        out_ << "<small>threads: " << esc(names) << "</small>";
      }
      out_ << "</div>";
      for (size_t j = 0; j < steps.size(); ++j) lane_cell(rank, steps[j], j + 2, stuck_step[steps[j]]);
      end_markers(rank);
      out_ << "</div>\n";
    }
    out_ << "</div>\n</div>\n";

    if (!r_.schedule.empty()) {
      out_ << "<details class=\"schedule-list\"><summary>the schedule as a list</summary>\n<table>\n"
              "<thead><tr><th>#</th><th>step</th><th>location</th></tr></thead>\n<tbody>\n";
      for (size_t i : steps) {
        const auto& s = r_.schedule[i];
        out_ << "<tr><td>" << (i + 1) << "</td><td class=\"mono\">" << esc(s.text) << "</td><td class=\"mono\">"
             << esc(call_lines(s)) << "</td></tr>\n";
      }
      out_ << "</tbody>\n</table>\n</details>\n";
    }
    out_ << "</section>\n";
  }

  void lane_cell(int rank, size_t i, size_t column, int stuck) {
    const auto& s = r_.schedule[i];
    const std::string col = "grid-column:" + std::to_string(column);
    switch (s.kind) {
      case StepKind::Issue:
      case StepKind::IssueGroup: {
        if (s.rank != rank) return;
        out_ << "<div class=\"call" << (s.kind == StepKind::IssueGroup ? " group" : "")
             << (stuck == 1   ? " stuck"
                 : stuck == 2 ? " violating"
                              : "")
             << "\" style=\"" << col << "\" data-step=\"" << (i + 1) << "\" title=\"" << esc(call_lines(s)) << "\">";
        if (multi_threaded(rank)) out_ << "<span class=\"thr\">" << esc(thread_name(rank, s.thread)) << "</span>";
        if (s.kind == StepKind::IssueGroup) {
          for (int c : s.calls) out_ << "<div>" << esc(call(c).text) << "</div>";
        } else {
          for (int c : s.calls) out_ << esc(call(c).text);
        }
        out_ << "</div>";
        return;
      }
      case StepKind::Choose:
      case StepKind::Spawn:
      case StepKind::MatchAny:  // a choice: which sender a receive from any rank takes
        if (s.rank != rank) return;
        out_ << "<div class=\"small\" style=\"" << col << "\" data-step=\"" << (i + 1) << "\" title=\"" << esc(s.text)
             << "\"><span class=\"" << (s.kind == StepKind::Choose ? "choose" : "spawn") << "\"></span></div>";
        return;
      case StepKind::Complete:
      case StepKind::CompletePair: {
        const std::vector<int> joined = joined_ranks(s);
        if (joined.empty()) return;
        const int lo = *std::min_element(joined.begin(), joined.end());
        const int hi = *std::max_element(joined.begin(), joined.end());
        if (rank < lo || rank > hi) return;
        const bool member = std::find(joined.begin(), joined.end(), rank) != joined.end();
        out_ << "<div class=\"conn" << (member ? "" : " pass") << "\" style=\"" << col << "\" data-step=\"" << (i + 1)
             << "\" title=\"" << esc(s.text) << "\">";
        if (lo != hi)
          out_ << "<span class=\"seg " << (rank == lo ? "down" : rank == hi ? "up" : "full") << "\"></span>";
        if (member) {
          const bool recv = s.kind == StepKind::CompletePair && rank == s.peer;
          out_ << "<span class=\"dot" << (recv ? " recv" : "") << "\"></span>";
        }
        if (rank == lo) {
          const std::string cap = s.kind == StepKind::CompletePair
                                      ? "p2p " + std::to_string(s.slot)
                                      : w_.comm_name(s.comm) + " #" + std::to_string(s.slot);
          out_ << "<span class=\"cap\">" << esc(cap) << "</span>";
        }
        out_ << "</div>";
        return;
      }
    }
  }

  void end_markers(int rank) {
    out_ << "<div class=\"end\" style=\"grid-column:-2/-1\">";
    bool any = false;
    for (const auto& b : r_.blocked) {
      if (b.rank != rank) continue;
      any = true;
      std::string where = b.call >= 0 ? " (" + loc_short(call(b.call).loc) + ")" : std::string();
      if (b.stream >= 0) {
        out_ << "<div class=\"marker blocked stream" << (blocked_on_cycle(b) ? " cycle" : "") << "\" title=\""
             << esc(b.reason) << "\"><span class=\"mk\">stream " << esc(w_.streams[static_cast<size_t>(b.stream)])
             << "</span>" << (b.call >= 0 ? esc(call(b.call).text) : std::string()) << "</div>";
        continue;
      }
      const std::string thread = multi_threaded(rank) ? thread_name(rank, b.thread) + ": " : std::string();
      const bool violating = r_.violation && r_.violation->rank == rank && r_.violation->thread == b.thread;
      if (b.finished) {
        out_ << "<div class=\"marker finished\" title=\"finished\">" << esc(thread) << "finished</div>";
      } else if (b.call >= 0) {
        const bool cycle = !violating && blocked_on_cycle(b);
        out_ << "<div class=\"marker "
             << (violating ? "violation"
                 : cycle   ? "blocked cycle"
                           : "blocked")
             << "\" title=\"" << esc(b.reason + where) << "\"><span class=\"mk\">"
             << (violating ? esc(model::verdict_name(r_.violation->verdict))
                 : cycle   ? std::string("on the cycle")
                           : std::string("blocked"))
             << "</span>" << esc(thread) << esc(call(b.call).text) << "</div>";
      } else {
        out_ << "<div class=\"marker idle\" title=\"" << esc(b.reason) << "\">" << esc(thread) << esc(b.reason)
             << "</div>";
      }
    }
    if (!any && r_.verdict == model::Verdict::Safe)
      out_ << "<div class=\"marker finished\" title=\"every schedule ends with this rank finished\">finished</div>";
    out_ << "</div>";
  }

  void graph_section() {
    out_ << "<section id=\"graph\">\n<h2>Wait-for graph</h2>\n";
    if (r_.verdict != model::Verdict::Deadlock || r_.wait_for.empty()) {
      out_ << "<p class=\"none muted\">There is no wait-for graph: the verdict is <code>"
           << esc(model::verdict_name(r_.verdict)) << "</code>"
           << (r_.verdict == model::Verdict::Deadlock ? ", but no rank waits for another" : ", not a deadlock")
           << ".</p>\n</section>\n";
      return;
    }
    const size_t at = svg_.find("<svg");
    // "fit to the window": a checkbox and CSS (the page has no scripts) shrink a wide graph to the
    // section's width; unticked, the graph keeps its own size and scrolls.
    if (at != std::string::npos)
      out_ << "<input type=\"checkbox\" id=\"graph-fit\" class=\"fit-toggle\"><label for=\"graph-fit\" "
              "class=\"fit-label\">fit the graph to the window</label>\n<div class=\"svgwrap\">\n"
           << svg_.substr(at) << "\n</div>\n";
    else
      out_ << "<p class=\"muted\">The graph was not rendered (Graphviz missing?); the cycle is below.</p>\n";
    const auto& g = r_.wait_for;
    if (!g.explanations.empty()) {
      const bool cycles = !g.cycles.empty();
      const auto& shapes = cycles ? g.cycle_shapes : g.cause_shapes;
      const size_t offset = cycles ? 0 : g.cycles.size();
      out_ << "<h3>"
           << (!cycles                ? "Cause"
               : g.cycles.size() == 1 ? "Cycle"
                                      : "Cycles")
           << "</h3>\n<ol class=\"explanations\">\n";
      for (size_t sh = 0; sh < shapes.size() && sh < kShapesShown; ++sh) {
        out_ << "<li>" << esc(g.explanations[offset + static_cast<size_t>(shapes[sh].members.front())]);
        if (shapes[sh].members.size() > 1)
          out_ << " <span class=\"muted\">(" << esc(like_it_text(shapes[sh], kRanksChars)) << ")</span>";
        out_ << "</li>\n";
      }
      out_ << "</ol>\n";
    }
    out_ << "</section>\n";
  }

  void stats_section() {
    const auto& s = r_.stats;
    const auto& o = r_.options;
    out_ << "<section id=\"stats\">\n<h2>Statistics</h2>\n<table>\n";
    auto row = [&](const char* key, const std::string& value) {
      out_ << "<tr><td>" << key << "</td><td class=\"mono\">" << esc(value) << "</td></tr>\n";
    };
    row("states", std::to_string(s.states));
    row("transitions", std::to_string(s.transitions));
    row("expanded", std::to_string(s.expanded));
    row("max depth", std::to_string(s.max_depth));
    row("time", fmt("%.3f", s.seconds) + " s");
    row("states/s", fmt("%.0f", s.states_per_second()));
    row("memory", mib(s.memory_bytes) + " (peak RSS " + mib(s.peak_rss_bytes) + ")");
    row("search", o.shortest ? "breadth-first (shortest)" : "depth-first");
    row("reduction", o.reduction ? "persistent sets" : "none");
    row("limits", limits_text());
    if (!r_.limit.empty()) row("stopped by", r_.limit);
    out_ << "</table>\n</section>\n";
  }

  const CheckResult& r_;
  const model::World& w_;
  const std::string& svg_;
  const HtmlProvenance& provenance_;
  std::set<std::tuple<int, int, int>> on_cycle_;  // (rank, thread, stream) of the wait-for nodes on a cycle
  std::ostringstream out_;
};

}  // namespace

std::string html_report(const CheckResult& result, const std::string& graph_svg, const HtmlProvenance& provenance) {
  return Html(result, graph_svg, provenance).render();
}

}  // namespace collmc::report
