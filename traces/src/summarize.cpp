// The plain findings printed at import: ranks missing from a collective their peers entered, calls
// that disagree in kind, and where every rank stopped.
#include <algorithm>
#include <map>

#include "collmc/traces/trace.h"
#include "rank_list.h"

namespace collmc::traces {
namespace {

constexpr size_t kMaxLines = 40;

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
      return "collective";
    default:
      return nullptr;
  }
}

std::string ranks_phrase(const std::vector<int>& ranks) {
  return std::string(ranks.size() == 1 ? "rank " : "ranks ") + rank_list(ranks);
}

template <typename Add>
void summarize_sequence(const Trace& trace, const Communicator& comm, const char* sequence, Add& add) {
  std::map<int, std::vector<const Call*>> seq;
  std::vector<int> absent;
  for (const auto& [g, r] : comm.members) {
    auto it = trace.ranks.find(g);
    if (it == trace.ranks.end() || !it->second.present) {
      absent.push_back(g);
      continue;
    }
    auto& list = seq[g];
    for (const auto& t : it->second.threads)
      for (const auto& c : t.calls)
        if (c.comm == comm.id && matched_sequence(c.kind) && std::string(matched_sequence(c.kind)) == sequence)
          list.push_back(&c);
  }
  size_t longest = 0;
  for (const auto& [g, list] : seq) longest = std::max(longest, list.size());
  std::string label = comm.label.empty() ? comm.id : comm.label;
  for (size_t k = 0; k < longest; ++k) {
    std::vector<int> entered, never;
    std::map<std::string, std::vector<int>> kinds;
    const Call* first = nullptr;
    for (const auto& [g, list] : seq) {
      if (k < list.size()) {
        entered.push_back(g);
        kinds[call_kind_name(list[k]->kind)].push_back(g);
        if (!first) first = list[k];
      } else {
        never.push_back(g);
      }
    }
    std::string what =
        std::string(call_kind_name(first->kind)) + (first->origin.empty() ? std::string() : ", " + first->origin);
    std::string head = std::string(sequence) + " #" + std::to_string(k + 1) + " on " + label + " (" + what + "): ";
    if (!never.empty() || (!absent.empty() && k == 0)) {
      std::string line = head + ranks_phrase(entered) + " entered";
      if (!never.empty()) line += ", " + ranks_phrase(never) + " never did";
      if (!absent.empty()) line += ", " + ranks_phrase(absent) + " left no trace";
      add(line);
      if (!never.empty()) break;  // the later ones are missing on the same ranks
    } else if (kinds.size() > 1) {
      std::string line = head + "the ranks disagree:";
      for (const auto& [kind, ranks] : kinds) line += " " + ranks_phrase(ranks) + " called " + kind + ";";
      line.pop_back();
      add(line);
      break;
    }
  }
}

}  // namespace

std::vector<std::string> summarize(const Trace& trace) {
  std::vector<std::string> lines;
  size_t dropped = 0;
  auto add = [&](std::string line) {
    if (lines.size() < kMaxLines) {
      lines.push_back(std::move(line));
    } else {
      ++dropped;
    }
  };

  for (const auto& f : trace.findings) add(f);
  // Per comm, per member: its matched calls in order (threads one after the other).
  for (const auto& comm : trace.comms) {
    for (const char* sequence : {"init", "register", "collective"}) summarize_sequence(trace, comm, sequence, add);
  }

  // Where every rank stopped.
  std::vector<int> finished;
  for (const auto& [r, rt] : trace.ranks) {
    if (!rt.present) continue;
    bool any = false;
    for (const auto& t : rt.threads) {
      for (const auto& c : t.calls) {
        if (c.state == CallState::Completed) continue;
        std::string comm;
        for (const auto& cm : trace.comms)
          if (cm.id == c.comm) comm = " on " + (cm.label.empty() ? cm.id : cm.label);
        add("rank " + std::to_string(r) + (rt.threads.size() > 1 ? " thread " + t.name : "") + " stopped in " +
            call_kind_name(c.kind) + comm + (c.origin.empty() ? "" : " (" + c.origin + ")") +
            (c.state == CallState::Started ? ": started, never finished"
                                           : ": issued, never seen to finish (state scheduled)"));
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
      if (last)
        add("rank " + std::to_string(r) + "'s last logged call: " + call_kind_name(last->kind) +
            (last->origin.empty() ? "" : " (" + last->origin + ")"));
      continue;
    }
    finished.push_back(r);
  }
  if (!finished.empty()) add(ranks_phrase(finished) + ": every traced call completed");
  if (dropped > 0) lines.push_back("... and " + std::to_string(dropped) + " more");
  return lines;
}

}  // namespace collmc::traces
