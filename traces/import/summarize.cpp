// The plain findings printed at import: ranks missing from a collective their peers entered, calls
// that disagree in kind, and where every rank stopped. At any world size the summary stays short: ranks
// in the same role and state are one line, rank sets are ranges and strides, and at most about 40 lines
// are printed unless `verbose`.
#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "collmc/traces/trace.h"
#include "rank_list.h"

namespace collmc::traces {
namespace {

constexpr size_t kMaxFindings = 12;  // free-text findings before "... and N more"
constexpr size_t kMaxSequence = 12;  // "collective #k on ..." lines before "... and N more"
constexpr size_t kMaxStopped = 12;   // folded "stopped in" lines before "... and N more"

// Calls every member of the comm must make, in the same order, by the sequence they count in:
// "collective" (collectives and barriers), "register" (window registrations), "init".
const char* matched_sequence(CallKind k) {
  switch (k) {
    case CallKind::CommInit:
      return "init";
    case CallKind::WindowRegister:
      return "register";
    case CallKind::AllReduce:
    case CallKind::AllGather:
    case CallKind::ReduceScatter:
    case CallKind::Broadcast:
    case CallKind::Reduce:
    case CallKind::AllToAll:
    case CallKind::Barrier:
    case CallKind::WinFence:
      return "collective";
    default:
      return nullptr;
  }
}

constexpr size_t kMaxRankText = 160;  // a rank set longer than this is written by what it leaves out, or cut

// A sorted rank set for people, among the ranks `all` (sorted): ranges and strides; when the set leaves
// out fewer than it holds, "0..1023 except 7..1023 step 8"; a text still too long is cut, its count said.
std::string rank_set(const std::vector<int>& ranks, const std::vector<int>& all) {
  std::string text = rank_list(ranks);
  if (text.size() <= kMaxRankText || all.empty()) return text;
  std::vector<int> rest;
  std::set_difference(all.begin(), all.end(), ranks.begin(), ranks.end(), std::back_inserter(rest));
  std::string except = rank_list(all) + " except " + rank_list(rest);
  if (except.size() < text.size()) text = except;
  if (text.size() > kMaxRankText) {
    size_t cut = text.rfind(',', kMaxRankText);
    text = text.substr(0, cut == std::string::npos ? kMaxRankText : cut) + ",... (" + std::to_string(ranks.size()) +
           " ranks; --verbose for all)";
  }
  return text;
}

// "rank 3" / "ranks 7..1015 step 8", among the ranks of the trace; every rank written when verbose.
struct RankPhrase {
  std::vector<int> all;
  bool verbose = false;
  std::string operator()(const std::vector<int>& ranks) const {
    return std::string(ranks.size() == 1 ? "rank " : "ranks ") + (verbose ? rank_list(ranks) : rank_set(ranks, all));
  }
};

std::string label_of(const Communicator& comm) { return comm.label.empty() ? comm.id : comm.label; }

// The role a comm plays, for folding: a Flight Recorder group's description ("pg 12 (tp)" -> "tp"),
// else its label without the number that tells it apart ("split3" -> "split", "commId 0x9007" -> "commId").
std::string role_of(const Communicator& comm) {
  std::string label = label_of(comm);
  size_t open = label.rfind('(');
  if (open != std::string::npos && label.back() == ')') return label.substr(open + 1, label.size() - open - 2);
  if (size_t space = label.rfind(' '); space != std::string::npos && space > 0) {
    const std::string last = label.substr(space + 1);
    if (!last.empty() && std::isdigit(static_cast<unsigned char>(last[0]))) return label.substr(0, space);
  }
  while (!label.empty() && std::isdigit(static_cast<unsigned char>(label.back()))) label.pop_back();
  return label.empty() ? label_of(comm) : label;
}

// Lines capped at `max` (0: no cap), the rest counted.
class Section {
 public:
  Section(size_t max, std::string what) : max_(max), what_(std::move(what)) {}
  void add(std::string line) {
    if (max_ == 0 || lines_.size() < max_) {
      lines_.push_back(std::move(line));
    } else {
      ++left_out_;
    }
  }
  void into(std::vector<std::string>& out) const {
    out.insert(out.end(), lines_.begin(), lines_.end());
    if (left_out_ > 0) out.push_back("... and " + std::to_string(left_out_) + " more " + what_ + " (--verbose)");
  }

 private:
  size_t max_;
  std::string what_;
  std::vector<std::string> lines_;
  size_t left_out_ = 0;
};

// Per comm, per member: its matched calls of each sequence, in order (threads one after the other).
using Sequences = std::unordered_map<std::string, std::map<int, std::map<std::string, std::vector<const Call*>>>>;

Sequences collect_sequences(const Trace& trace) {
  Sequences seqs;
  for (const auto& [g, rt] : trace.ranks) {
    if (!rt.present) continue;
    for (const auto& t : rt.threads)
      for (const auto& c : t.calls)
        if (const char* seq = matched_sequence(c.kind); seq && !c.comm.empty()) seqs[c.comm][g][seq].push_back(&c);
  }
  return seqs;
}

void summarize_sequence(const Trace& trace, const Communicator& comm, const char* sequence, const Sequences& seqs,
                        const RankPhrase& ranks_phrase, Section& out) {
  static const std::map<std::string, std::vector<const Call*>> kNone;
  std::map<int, const std::vector<const Call*>*> seq;
  std::vector<int> absent;
  const auto on_comm = seqs.find(comm.id);
  for (const auto& [g, r] : comm.members) {
    auto it = trace.ranks.find(g);
    if (it == trace.ranks.end() || !it->second.present) {
      absent.push_back(g);
      continue;
    }
    static const std::vector<const Call*> kEmpty;
    const std::vector<const Call*>* list = &kEmpty;
    if (on_comm != seqs.end())
      if (auto m = on_comm->second.find(g); m != on_comm->second.end())
        if (auto s = m->second.find(sequence); s != m->second.end()) list = &s->second;
    seq[g] = list;
  }
  size_t longest = 0;
  for (const auto& [g, list] : seq) longest = std::max(longest, list->size());
  if (longest == 0 && (absent.empty() || seq.empty())) return;
  const std::string label = label_of(comm);
  // Numbered as the run counts them: the history left out before the first kept call counts too.
  const uint64_t before = std::string(sequence) == "collective" ? comm.dropped_collectives : 0;
  for (size_t k = 0; k < longest; ++k) {
    std::vector<int> entered, never;
    std::map<std::string, std::vector<int>> kinds;
    const Call* first = nullptr;
    for (const auto& [g, list] : seq) {
      if (k < list->size()) {
        entered.push_back(g);
        kinds[call_kind_name((*list)[k]->kind)].push_back(g);
        if (!first) first = (*list)[k];
      } else {
        never.push_back(g);
      }
    }
    std::string what =
        std::string(call_kind_name(first->kind)) + (first->origin.empty() ? std::string() : ", " + first->origin);
    std::string head =
        std::string(sequence) + " #" + std::to_string(before + k + 1) + " on " + label + " (" + what + "): ";
    if (!never.empty() || (!absent.empty() && k == 0)) {
      std::string line = head + ranks_phrase(entered) + " entered";
      if (!never.empty()) line += ", " + ranks_phrase(never) + " never did";
      if (!absent.empty()) line += ", " + ranks_phrase(absent) + " left no trace";
      out.add(line);
      if (!never.empty()) break;  // the later ones are missing on the same ranks
    } else if (kinds.size() > 1) {
      std::string line = head + "the ranks disagree:";
      for (const auto& [kind, ranks] : kinds) line += " " + ranks_phrase(ranks) + " called " + kind + ";";
      line.pop_back();
      out.add(line);
      break;
    }
  }
}

// Where ranks stopped, folded: one line per (kind, role of the comm, state, thread or not).
struct StopKey {
  std::string kind, role, state;
  bool thread = false;
  bool operator<(const StopKey& o) const {
    return std::tie(kind, role, state, thread) < std::tie(o.kind, o.role, o.state, o.thread);
  }
};
struct StopGroup {
  std::vector<int> ranks;
  std::set<std::string> comms;  // labels
  std::set<std::string> origins;
  std::string first_origin;
  std::string threads;
};

}  // namespace

std::vector<std::string> summarize(const Trace& trace, bool verbose) {
  RankPhrase ranks_phrase;
  for (const auto& [r, rt] : trace.ranks) ranks_phrase.all.push_back(r);
  ranks_phrase.verbose = verbose;
  std::vector<std::string> lines;
  Section findings(verbose ? 0 : kMaxFindings, "findings");
  for (const auto& f : trace.findings) findings.add(f);
  findings.into(lines);

  Section sequences(verbose ? 0 : kMaxSequence, "collectives some member never entered");
  const Sequences seqs = collect_sequences(trace);
  for (const auto& comm : trace.comms)
    for (const char* sequence : {"init", "register", "collective"})
      summarize_sequence(trace, comm, sequence, seqs, ranks_phrase, sequences);
  sequences.into(lines);

  std::unordered_map<std::string, const Communicator*> comm_by_id;
  for (const auto& cm : trace.comms) comm_by_id.emplace(cm.id, &cm);
  std::map<StopKey, StopGroup> stopped;
  std::vector<int> finished;
  for (const auto& [r, rt] : trace.ranks) {
    if (!rt.present) continue;
    bool any = false;
    for (const auto& t : rt.threads) {
      for (const auto& c : t.calls) {
        if (c.state == CallState::Completed) continue;
        auto cm = comm_by_id.find(c.comm);
        StopKey key{call_kind_name(c.kind), cm == comm_by_id.end() ? "" : role_of(*cm->second),
                    c.state == CallState::Started ? "started, never finished"
                                                  : "issued, never seen to finish (state scheduled)",
                    rt.threads.size() > 1};
        StopGroup& g = stopped[key];
        g.ranks.push_back(r);
        if (cm != comm_by_id.end()) g.comms.insert(label_of(*cm->second));
        if (g.origins.size() < 2) g.origins.insert(c.origin);
        if (g.first_origin.empty()) g.first_origin = c.origin;
        if (key.thread && g.threads.empty()) g.threads = t.name;
        any = true;
        break;
      }
    }
    if (any) continue;
    if (trace.format == "nccl-log") {
      // A log says a call was made, not whether it finished: name the last one instead.
      const Call* last = nullptr;
      for (const auto& t : rt.threads)
        for (const auto& c : t.calls)
          if (c.kind != CallKind::GroupStart && c.kind != CallKind::GroupEnd) last = &c;
      if (last) {
        auto cm = comm_by_id.find(last->comm);
        StopKey key{call_kind_name(last->kind), cm == comm_by_id.end() ? "" : role_of(*cm->second), "", false};
        StopGroup& g = stopped[key];
        g.ranks.push_back(r);
        if (cm != comm_by_id.end()) g.comms.insert(label_of(*cm->second));
        if (g.origins.size() < 2) g.origins.insert(last->origin);
        if (g.first_origin.empty()) g.first_origin = last->origin;
      }
      continue;
    }
    finished.push_back(r);
  }
  // Folded lines, the fewest ranks first: the odd ones out are the likely culprits.
  std::vector<std::pair<const StopKey*, const StopGroup*>> order;
  for (const auto& [k, g] : stopped) order.emplace_back(&k, &g);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second->ranks.size() < b.second->ranks.size(); });
  size_t present = 0;
  for (const auto& [r, rt] : trace.ranks) present += rt.present ? 1 : 0;
  Section stops(verbose ? 0 : kMaxStopped, "groups of ranks");
  for (const auto& [key, group] : order) {
    const auto& g = *group;
    std::string who = g.ranks.size() == 1 ? "rank " + std::to_string(g.ranks.front())
                                          : ranks_phrase(g.ranks) + " (" + std::to_string(g.ranks.size()) + " of " +
                                                std::to_string(present) + ")";
    if (key->thread) who += " thread " + g.threads;
    std::string where;
    if (g.comms.size() == 1) {
      where = " on " + *g.comms.begin();
    } else if (g.comms.size() > 1) {
      where = " on their " + key->role + " group (" + std::to_string(g.comms.size()) + " groups)";
    }
    std::string origin;
    if (g.origins.size() == 1 && !g.first_origin.empty()) {
      origin = " (" + g.first_origin + ")";
    } else if (!g.first_origin.empty()) {
      origin = " (rank " + std::to_string(g.ranks.front()) + ": " + g.first_origin + ")";
    }
    if (key->state.empty()) {
      stops.add(who + (g.ranks.size() == 1 ? "'s last logged call: " : ": last logged call ") + key->kind + where +
                origin);
    } else {
      stops.add(who + " stopped in " + key->kind + where + origin + ": " + key->state);
    }
  }
  stops.into(lines);
  if (!finished.empty()) lines.push_back(ranks_phrase(finished) + ": every traced call completed");
  return lines;
}

std::vector<std::string> import_summary(const Trace& trace, bool verbose) {
  std::vector<std::string> out;
  out.push_back("imported " + trace.format + " traces: " + std::to_string(trace.world_size) + " ranks, " +
                std::to_string(trace.comms.size()) + " communicators");
  if (const std::string line = outcome_line(trace); !line.empty()) out.push_back("  " + line);
  for (const auto& n : trace.notes) out.push_back("  partial: " + n);
  for (const auto& line : summarize(trace, verbose)) out.push_back("  " + line);
  for (const auto& n : trace.dropped) out.push_back("  " + n);  // each says "left out ..."
  for (const auto& n : trace.cannot_see) out.push_back("  note: " + n);
  return out;
}

}  // namespace collmc::traces
