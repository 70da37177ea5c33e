// Text and JSON renderings of a CheckResult.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "collmc/report/check_report.h"
#include "folding.h"

namespace collmc::report {

using checker::CheckResult;
using checker::SearchStats;
using checker::StepKind;
using checker::WaitForGraph;
using checker::WaitNode;

namespace {

std::string loc_short(const model::SourceLoc& loc) { return loc.file_name() + ":" + std::to_string(loc.line); }

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string thread_name(const model::World& w, int rank, int thread) {
  return w.programs[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)].name;
}

const char* step_kind_name(StepKind k) {
  switch (k) {
    case StepKind::Choose:
      return "choose";
    case StepKind::Spawn:
      return "spawn";
    case StepKind::Issue:
      return "issue";
    case StepKind::IssueGroup:
      return "group";
    case StepKind::Complete:
      return "complete";
    case StepKind::CompletePair:
      return "complete_pair";
    case StepKind::MatchAny:
      return "match_any";
  }
  return "?";
}

std::string stats_line(const SearchStats& s) {
  return std::to_string(s.states) + " states, " + std::to_string(s.transitions) + " transitions, depth " +
         std::to_string(s.max_depth) + ", " + fmt("%.3f", s.seconds) + " s, " + fmt("%.0f", s.states_per_second()) +
         " states/s, memory " + fmt("%.1f", static_cast<double>(s.memory_bytes) / (1 << 20)) + " MiB (peak RSS " +
         fmt("%.1f", static_cast<double>(s.peak_rss_bytes) / (1 << 20)) + " MiB)" +
         (s.stored ? ", " + std::to_string(s.stored) + " stored, " + fmt("%.0f", s.bytes_per_stored_state()) +
                         " bytes per stored state"
                   : std::string());
}

nlohmann::ordered_json wait_for_json(const WaitForGraph& g) {
  using json = nlohmann::ordered_json;
  json nodes = json::array();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& n = g.nodes[i];
    const char* kind = n.kind == WaitNode::Kind::HostThread   ? "host"
                       : n.kind == WaitNode::Kind::StreamHead ? "stream"
                                                              : "exited";
    json jn = {{"id", i}, {"kind", kind}, {"rank", n.rank}, {"label", n.label}, {"on_cycle", n.on_cycle}};
    if (n.thread >= 0) jn["thread"] = n.thread;
    if (n.stream >= 0) jn["stream"] = n.stream;
    jn["call"] = n.call >= 0 ? json(n.call) : json(nullptr);
    if (!n.location.empty()) jn["location"] = n.location;
    nodes.push_back(jn);
  }
  json edges = json::array();
  for (const auto& e : g.edges) {
    json je = {{"from", e.from}, {"to", e.to}, {"label", e.label}, {"on_cycle", e.on_cycle}};
    if (e.comm >= 0) je["comm"] = e.comm;
    if (e.slot >= 0) je["slot"] = e.slot;
    edges.push_back(je);
  }
  auto shapes = [](const std::vector<checker::Shape>& list) {
    json out = json::array();
    for (const auto& s : list)
      out.push_back({{"members", s.members}, {"offsets", s.offsets}, {"lead_ranks", s.lead_ranks}});
    return out;
  };
  return json{{"nodes", nodes},
              {"edges", edges},
              {"cycles", g.cycles},
              {"explanations", g.explanations},
              {"causes", g.causes},
              {"cycle_shapes", shapes(g.cycle_shapes)},
              {"cause_shapes", shapes(g.cause_shapes)}};
}

// Where a rank stands, without its rank: "main: in `register A wa` (f.cmc:3): waits for ...".
std::string stands_text(const model::World& w, const checker::BlockedCall& b) {
  if (b.stream >= 0) return "stream " + w.streams[static_cast<size_t>(b.stream)] + ": " + b.reason;
  std::string text = thread_name(w, b.rank, b.thread) + ": ";
  if (b.call >= 0 && !b.finished) {
    const auto& c = w.calls[static_cast<size_t>(b.call)];
    text += "in `" + c.text + "` (" + loc_short(c.loc) + "): ";
  }
  return text + b.reason;
}

// Up to this many ranks, one line each; above, ranks in the same role share a line: the ranks on a
// shape's representative cycle come one by one, each with the ranks in its place on the cycles like
// it, and the other ranks share a line by where they stand (same thread or stream, same call).
constexpr size_t kFoldAbove = 16;
// A rank set on a line of the text report is cut past this many characters (with the count left out).
constexpr size_t kRanksChars = 100;
// Shapes (of cycles, of causes) explained one by one; the rest are counted.
constexpr size_t kShapesShown = 8;

// The `where` of a rank's line: what it is in, for folding.
std::string place_of(const model::World& w, const checker::BlockedCall& b) {
  std::string place =
      b.stream >= 0 ? "stream " + w.streams[static_cast<size_t>(b.stream)] : thread_name(w, b.rank, b.thread);
  if (b.finished) return place + ": finished";
  if (b.call >= 0) return place + ": in `" + w.calls[static_cast<size_t>(b.call)].text + "`";
  return place + ": " + b.reason;
}

void stands_section(std::ostringstream& out, const CheckResult& r) {
  const model::World& w = *r.world;
  if (r.blocked.size() <= kFoldAbove) {
    out << "where each rank stands:\n";
    for (const auto& b : r.blocked) out << "  rank " << b.rank << " " << stands_text(w, b) << "\n";
    return;
  }
  const auto roles = cycle_roles(r.wait_for);
  // Representatives' lines, keyed by (shape, hop); the ranks in the same role on the other cycles.
  std::map<std::pair<int, int>, const checker::BlockedCall*> leads;
  std::map<std::pair<int, int>, std::vector<int>> same_role;
  std::map<std::string, std::vector<const checker::BlockedCall*>> others;  // place -> its ranks, in order
  std::vector<std::string> order;
  for (const auto& b : r.blocked) {
    if (auto it = roles.find({b.rank, b.stream >= 0 ? -1 : b.thread, b.stream}); it != roles.end()) {
      const auto key = std::make_pair(it->second.shape, it->second.hop);
      if (it->second.lead)
        leads[key] = &b;
      else
        same_role[key].push_back(b.rank);
      continue;
    }
    const std::string key = role_key(w, b);
    auto [it, fresh] = others.try_emplace(key);
    if (fresh) order.push_back(key);
    it->second.push_back(&b);
  }
  out << "where each rank stands (the ranks on the cycle first; ranks in the same role share a line):\n";
  size_t shapes_left = 0;
  for (const auto& [key, b] : leads) {
    if (static_cast<size_t>(key.first) >= kShapesShown) {
      ++shapes_left;
      continue;
    }
    out << "  rank " << b->rank << " (on the cycle) " << stands_text(w, *b) << "\n";
    if (auto it = same_role.find(key); it != same_role.end())
      out << "      the same for " << count_of(it->second.size(), "rank", "ranks") << " "
          << ranks_text(it->second, ",", kRanksChars) << ", in its place on the cycles like it\n";
  }
  if (shapes_left > 0)
    out << "  (the ranks of "
        << count_of(r.wait_for.cycle_shapes.size() - kShapesShown, "more cycle shape", "more cycle shapes")
        << " left out: --json lists every rank)\n";
  for (const auto& key : order) {
    const auto& group = others[key];
    if (group.size() == 1) {
      out << "  rank " << group.front()->rank << " " << stands_text(w, *group.front()) << "\n";
      continue;
    }
    std::vector<int> ranks;
    std::set<int> comms;
    for (const auto* b : group) {
      ranks.push_back(b->rank);
      comms.insert(role_comm(w, *b));
    }
    const auto* first = group.front();
    out << "  " << count_of(group.size(), "rank", "ranks") << " " << ranks_text(ranks, ",", kRanksChars) << " "
        << place_of(w, *first);
    if (first->call >= 0 && !first->finished)
      out << " (" << loc_short(w.calls[static_cast<size_t>(first->call)].loc) << ")";
    if (comms.size() > 1) out << ", and the same on " << (comms.size() - 1) << " other comms";
    out << "\n";
    if (!first->finished) out << "      e.g. rank " << first->rank << ": " << first->reason << "\n";
  }
}

// The cycles (or, without one, the causes) folded by shape: each shape's representative explained,
// then how many are like it and who stands in for its first rank.
void findings_section(std::ostringstream& out, const CheckResult& r) {
  const auto& g = r.wait_for;
  if (g.explanations.empty()) return;
  const bool cycles = !g.cycles.empty();
  const auto& shapes = cycles ? g.cycle_shapes : g.cause_shapes;
  const size_t total = cycles ? g.cycles.size() : g.causes.size();
  const size_t offset = cycles ? 0 : g.cycles.size();  // the causes' explanations follow the cycles'
  if (!cycles)
    out << "cause:\n";
  else if (total == 1)
    out << "wait-for cycle:\n";
  else if (shapes.size() == total)
    out << "wait-for cycles:\n";
  else
    out << "wait-for cycles (" << total << ", of " << count_of(shapes.size(), "shape", "shapes")
        << "; one of each shown):\n";
  for (size_t s = 0; s < shapes.size() && s < kShapesShown; ++s) {
    const auto& shape = shapes[s];
    out << "  " << g.explanations[offset + static_cast<size_t>(shape.members.front())] << "\n";
    if (shape.members.size() > 1) out << "    " << like_it_text(shape, kRanksChars) << "\n";
  }
  if (shapes.size() > kShapesShown) {
    size_t left = 0;
    for (size_t s = kShapesShown; s < shapes.size(); ++s) left += shapes[s].members.size();
    out << "  and " << count_of(shapes.size() - kShapesShown, "more shape", "more shapes") << " ("
        << count_of(left, cycles ? "cycle" : "cause", cycles ? "cycles" : "causes") << "): --json lists every one\n";
  }
  // Causes besides cycles (a knot that also waits on a rank that ended) are counted, not listed.
  if (cycles && !g.causes.empty())
    out << "  (and " << count_of(g.causes.size(), "wait", "waits")
        << " on ranks whose calls ended: --json lists them)\n";
}

// A schedule of up to this many steps is printed whole; a longer one shows the steps that matter (the
// ranks of the first cycle, or of the first cause: their own steps and the completions they took part
// in), the last kMatteringSteps of them, and says how many it left out.
constexpr size_t kWholeSchedule = 60;
constexpr size_t kMatteringSteps = 40;

void schedule_section(std::ostringstream& out, const CheckResult& r, bool verbose) {
  const model::World& w = *r.world;
  std::vector<size_t> shown;
  for (size_t i = 0; i < r.schedule.size(); ++i)
    if (verbose || r.schedule[i].kind != StepKind::Choose) shown.push_back(i);
  const size_t visible = shown.size();
  std::string which;
  if (shown.size() > kWholeSchedule) {
    const std::vector<int> ranks = focus_ranks(r.wait_for);
    std::vector<size_t> mattering;
    if (!ranks.empty()) {
      for (size_t i : steps_that_matter(r, ranks, 0))
        if (verbose || r.schedule[i].kind != StepKind::Choose) mattering.push_back(i);
    } else {
      mattering = shown;  // no cycle or cause to follow: the end of the schedule
    }
    const size_t of_focus = mattering.size();
    if (mattering.size() > kMatteringSteps)
      mattering.erase(mattering.begin(), mattering.end() - static_cast<std::ptrdiff_t>(kMatteringSteps));
    which = "; shown: " +
            (of_focus == mattering.size()
                 ? "the " + count_of(of_focus, "step", "steps")
                 : "the last " + std::to_string(mattering.size()) + " of the " + count_of(of_focus, "step", "steps")) +
            (ranks.empty() ? std::string(" at the end")
                           : std::string(" of ") + (ranks.size() == 1 ? "rank " : "ranks ") +
                                 ranks_text(ranks, ",", kRanksChars) +
                                 (r.wait_for.first_cycle() ? " (the first cycle)" : " (the first cause)")) +
            "; " + std::to_string(visible - mattering.size()) + " left out (--json and --html have every step)";
    shown = std::move(mattering);
  }
  out << "schedule (" << count_of(r.schedule.size(), "step", "steps")
      << (visible != r.schedule.size() ? ", choices hidden" : "") << which << "):\n";
  for (size_t i : shown) {
    const auto& s = r.schedule[i];
    char num[16];
    std::snprintf(num, sizeof num, "%4zu  ", i + 1);
    out << num;
    if (s.kind == StepKind::Issue) {
      const auto& c = w.calls[static_cast<size_t>(s.calls.front())];
      std::string who = "rank " + std::to_string(s.rank) + " " + thread_name(w, s.rank, s.thread);
      out << who << std::string(who.size() < 16 ? 16 - who.size() : 1, ' ') << c.text;
      out << std::string(c.text.size() < 36 ? 36 - c.text.size() : 1, ' ') << loc_short(c.loc) << "\n";
    } else {
      out << s.text << "\n";
    }
  }
}

}  // namespace

std::string progress_line(const CheckResult& r) {
  if (!r.progress_matters) return "";
  const model::World& w = *r.world;
  if (w.knobs.mpi_progress != model::MpiProgress::Portable)
    return std::string(model::mpi_progress_name(w.knobs.mpi_progress)) +
           " (set by the scenario; the only model checked)";
  std::string out = "portable (the default):";
  for (size_t i = 0; i < r.progress_runs.size(); ++i)
    out += std::string(i ? ", " : " ") + std::string(model::mpi_progress_name(r.progress_runs[i].progress)) + " " +
           std::string(model::verdict_name(r.progress_runs[i].verdict));
  const std::string verdict(model::verdict_name(r.verdict));
  const std::string name(model::mpi_progress_name(r.mpi_progress));
  if (r.verdict == model::Verdict::Safe)
    out += "; safe under every model MPI allows";
  else if (r.verdict == model::Verdict::Inconclusive)
    out += "; not proven under " + name;
  else
    out += "; the " + verdict + " needs mpi_progress = " + name + " (`set mpi_progress = " + name +
           "` checks that model alone)";
  return out;
}

// The order is the reader's: the verdict, what went wrong (the violation, or the wait-for cycle: the
// one thing a deadlock report must say), where each rank stands, then the schedule that got there,
// which can run to hundreds of steps at scale, and the statistics.
std::string text_report(const CheckResult& r, bool verbose) {
  const model::World& w = *r.world;
  std::ostringstream out;
  out << (w.source ? w.source->path : std::string("<scenario>")) << ": " << model::verdict_name(r.verdict);
  // An imported run that hung is never answered with a plain `safe`: the model's answer is only the model's.
  const bool unexplained_hang =
      r.verdict == model::Verdict::Safe && w.observed && w.observed->outcome == model::ObservedOutcome::Hung;
  if (unexplained_hang) out << " (model only)";
  if (!w.name.empty()) out << "  (\"" << w.name << "\")";
  out << "\n";
  if (unexplained_hang)
    out << "warning: the recorded run hung; the model finds no hang: the hang is outside what " << w.observed->source
        << " record\n"
        << "note: the scenario says `observed hung` (" << w.observed->loc.str() << ")\n"
        << "help: record the run with `collmc record` to see registrations, comm creation and host syncs\n";
  if (w.expect) {
    // An inconclusive search disproves nothing: it is not a disagreement.
    const char* judgement = r.agrees_with_expect()                      ? " (agrees)"
                            : r.verdict == model::Verdict::Inconclusive ? " (not proven)"
                                                                        : " (DISAGREES)";
    out << "expected: " << model::verdict_name(*w.expect) << judgement << "\n";
  }
  for (const auto& note : w.notes) out << "note: " << note << "\n";
  if (const std::string progress = progress_line(r); !progress.empty()) out << "mpi_progress: " << progress << "\n";
  if (r.verdict == model::Verdict::Inconclusive) {
    out << "the search stopped at a limit: " << r.limit << "; nothing is proven\n";
    // Breadth-first keeps every state it has seen: past a few dozen ranks with open orders it runs out
    // of memory long before it ends. The depth-first search finds a schedule, shrink makes it small.
    if (r.options.shortest)
      out << "help: breadth-first search (--shortest) keeps every state it meets, and at " << w.ranks
          << " ranks their number is hopeless: shrink first (collmc shrink "
          << (w.source ? w.source->path : std::string("FILE"))
          << " -o small.cmc), then check --shortest small.cmc; or drop --shortest (depth-first finds a schedule)\n";
  }
  if (r.violation) {
    const auto& v = *r.violation;
    if (v.call >= 0) {
      const auto& c = w.calls[static_cast<size_t>(v.call)];
      out << c.loc.str() << ": " << model::verdict_name(v.verdict) << ": " << v.message << "\n";
    } else {
      out << model::verdict_name(v.verdict) << ": " << v.message << "\n";
    }
  }
  findings_section(out, r);
  if (!r.blocked.empty()) stands_section(out, r);
  if (!r.schedule.empty()) schedule_section(out, r, verbose);
  out << "statistics: " << stats_line(r.stats) << "\n";
  return out.str();
}

std::string json_report(const CheckResult& r) {
  using json = nlohmann::ordered_json;
  const model::World& w = *r.world;
  json j;
  j["format"] = "collmc-result";
  j["version"] = 1;
  auto loc = [](const model::SourceLoc& l) {
    return json{{"file", l.file_name()}, {"line", l.line}, {"column", l.column}};
  };
  j["scenario"] = {
      {"file", w.source ? w.source->path : ""},
      {"name", w.name},
      {"ranks", w.ranks},
      {"knobs",
       {{"profile", model::profile_name(w.knobs.profile)},
        {"comm_mode", model::comm_mode_name(w.knobs.comm_mode)},
        {"runtime_connect", w.knobs.runtime_connect ? "on" : "off"},
        {"stream_progress",
         w.knobs.stream_progress == model::StreamProgress::Serialized ? "serialized" : "independent"},
        {"mpi_progress", model::mpi_progress_name(w.knobs.mpi_progress)}}},
  };
  j["expect"] = w.expect ? json(model::verdict_name(*w.expect)) : json(nullptr);
  j["verdict"] = model::verdict_name(r.verdict);
  j["agrees"] = w.expect ? json(r.agrees_with_expect()) : json(nullptr);
  j["observed"] =
      w.observed
          ? json({{"outcome", model::observed_outcome_name(w.observed->outcome)}, {"source", w.observed->source}})
          : json(nullptr);
  j["limit"] = r.limit.empty() ? json(nullptr) : json(r.limit);
  if (r.progress_matters) {
    json runs = json::object();
    for (const auto& run : r.progress_runs)
      runs[model::mpi_progress_name(run.progress)] = model::verdict_name(run.verdict);
    j["mpi_progress"] = {
        {"setting", model::mpi_progress_name(w.knobs.mpi_progress)},
        {"checked", runs},
        {"verdict_under",
         r.verdict == model::Verdict::Safe ? json(nullptr) : json(model::mpi_progress_name(r.mpi_progress))}};
  } else {
    j["mpi_progress"] = nullptr;
  }
  j["notes"] = w.notes;
  j["violation"] = nullptr;
  if (r.violation) {
    const auto& v = *r.violation;
    json jv = {{"verdict", model::verdict_name(v.verdict)},
               {"message", v.message},
               {"rank", v.rank},
               {"thread", v.thread},
               {"call", v.call}};
    if (v.call >= 0) jv["location"] = loc(w.calls[static_cast<size_t>(v.call)].loc);
    // The MPI usage rule (model/mpi_rules.def) a usage_error breaks, by name; absent for other violations.
    // The semantics names a rule it found in the state (an epoch rule); a static one is on the call.
    std::optional<model::MpiRule> rule = v.mpi_rule;
    if (!rule && v.call >= 0) rule = w.calls[static_cast<size_t>(v.call)].mpi_rule;
    if (rule) jv["mpi_rule"] = std::string(model::mpi_rule_info(*rule).name);
    j["violation"] = jv;
  }
  const auto& s = r.stats;
  j["statistics"] = {{"states", s.states},
                     {"transitions", s.transitions},
                     {"expanded", s.expanded},
                     {"max_depth", s.max_depth},
                     {"seconds", s.seconds},
                     {"states_per_second", s.states_per_second()},
                     {"memory_bytes", s.memory_bytes},
                     {"peak_rss_bytes", s.peak_rss_bytes},
                     {"stored", s.stored},
                     {"bytes_per_stored_state", s.bytes_per_stored_state()},
                     {"search", r.options.shortest ? "bfs" : "dfs"},
                     {"reduction", r.options.reduction ? "persistent-sets" : "none"}};
  json comms = json::array();
  for (const auto& c : w.comms)
    comms.push_back({{"id", c.id},
                     {"name", c.name},
                     {"declared_as", c.decl_name},
                     {"instance", c.instance},
                     {"members", c.members},
                     {"mode", model::comm_mode_name(c.mode)},
                     {"uninit", c.uninit}});
  j["comms"] = comms;
  j["buffers"] = w.buffers;
  j["streams"] = w.streams;
  json calls = json::array();
  for (const auto& c : w.calls) {
    json jc = {{"id", c.id},     {"rank", c.rank},        {"thread", c.thread}, {"op", model::op_name(c.kind)},
               {"text", c.text}, {"location", loc(c.loc)}};
    if (c.kind == model::OpKind::SyncDevice) jc["device"] = true;
    if (c.comm >= 0) jc["comm"] = c.comm;
    if (c.kind == model::OpKind::Split) jc["child"] = c.child >= 0 ? json(c.child) : json(nullptr);
    if (c.buffer >= 0) jc["buffer"] = c.buffer;
    if (c.buffer2 >= 0) jc["buffer2"] = c.buffer2;
    if (c.kind == model::OpKind::Alloc || c.kind == model::OpKind::CudaMalloc) jc["size"] = c.size;
    if (c.kind == model::OpKind::Register) jc["flag"] = c.flag == model::RegFlag::Symmetric ? "symmetric" : "default";
    if (c.peer >= 0) jc["peer"] = c.peer;
    if (c.root >= 0) jc["root"] = c.root;
    if (c.count >= 0) jc["count"] = c.count;
    if (model::is_collective(c.kind) || model::is_p2p(c.kind) || c.kind == model::OpKind::Barrier ||
        c.kind == model::OpKind::SyncStream) {
      jc["stream"] = c.stream;
      jc["dtype"] = w.dtypes[static_cast<size_t>(c.dtype)];
      jc["redop"] = w.redops[static_cast<size_t>(c.redop)];
    }
    if (!c.usage_error.empty()) jc["usage_error"] = c.usage_error;
    calls.push_back(jc);
  }
  j["calls"] = calls;
  json sched = json::array();
  for (const auto& st : r.schedule) {
    json js = {{"kind", step_kind_name(st.kind)}, {"rank", st.rank}, {"text", st.text}};
    if (st.kind != StepKind::Complete && st.kind != StepKind::CompletePair) {
      js["thread"] = st.thread;
      js["edge"] = st.step.edge;  // which control edge: tells choices apart
    }
    if (!st.calls.empty()) js["calls"] = st.calls;
    if (st.comm >= 0) {
      js["comm"] = st.comm;
      js["slot"] = st.slot;
    }
    if (st.peer >= 0) js["peer"] = st.peer;
    sched.push_back(js);
  }
  j["schedule"] = sched;
  json programs = json::array();
  for (int rank = 0; rank < w.ranks; ++rank) {
    json threads = json::array();
    for (size_t t = 0; t < r.executed[static_cast<size_t>(rank)].size(); ++t)
      threads.push_back(
          {{"name", thread_name(w, rank, static_cast<int>(t))}, {"calls", r.executed[static_cast<size_t>(rank)][t]}});
    programs.push_back({{"rank", rank}, {"threads", threads}});
  }
  j["programs"] = programs;
  json blocked = json::array();
  for (const auto& b : r.blocked) {
    json jb = {{"rank", b.rank}, {"reason", b.reason}, {"finished", b.finished}};
    if (b.thread >= 0) jb["thread"] = b.thread;
    if (b.stream >= 0) jb["stream"] = b.stream;
    jb["call"] = b.call >= 0 ? json(b.call) : json(nullptr);
    blocked.push_back(jb);
  }
  j["blocked"] = blocked;
  j["wait_for_graph"] = wait_for_json(r.wait_for);
  return j.dump(2) + "\n";
}

std::string json_error_report(const std::string& file, const model::InputError& error) {
  using json = nlohmann::ordered_json;
  const auto& loc = error.loc();
  json j;
  j["format"] = "collmc-result";
  j["version"] = 1;
  j["scenario"] = {{"file", file}};
  j["verdict"] = nullptr;
  j["error"] = {{"message", error.message()},
                {"file", loc.file ? loc.file_name() : file},
                {"line", loc.line},
                {"column", loc.column}};
  // Bad input may hold bytes that are not UTF-8: replaced, not thrown on.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string json_array(const std::vector<std::string>& results) {
  std::string out = "[\n";
  for (size_t i = 0; i < results.size(); ++i) {
    std::string r = results[i];
    while (!r.empty() && r.back() == '\n') r.pop_back();
    out += r + (i + 1 < results.size() ? ",\n" : "\n");
  }
  return out + "]\n";
}

}  // namespace collmc::report
