// plan_trim (trim_history.h) and trim_history (trace.h): leave out the collectives every member of a comm
// completed before the earliest one some member did not. docs/TRACES.md argues why the check's verdict is
// the same with and without them.
#include "trim_history.h"

#include <algorithm>
#include <functional>
#include <map>

#include "collmc/model/operations.h"
#include "collmc/traces/trace.h"
#include "held_calls.h"
#include "rank_list.h"

namespace collmc::traces {

TrimPlan plan_trim(const TrimInput& in) {
  const size_t ncomms = in.members.size();
  TrimPlan plan;
  plan.cut.assign(ncomms, 0);
  plan.dropped.resize(in.ranks.size());
  // Per rank, per item: its position among the rank's collectives on its comm.
  std::vector<std::vector<uint32_t>> position(in.ranks.size());  // (a rank's items fit in 32 bits)
  for (size_t r = 0; r < in.ranks.size(); ++r) {
    std::map<uint32_t, uint32_t> next;
    position[r].resize(in.ranks[r].size());
    for (size_t i = 0; i < in.ranks[r].size(); ++i)
      if (in.ranks[r][i].collective) position[r][i] = next[in.ranks[r][i].comm]++;
  }
  // Per comm, per member: its collectives on the comm (item indices), for the agreement test.
  std::vector<std::map<uint32_t, std::vector<uint32_t>>> on_comm(ncomms);
  for (size_t r = 0; r < in.ranks.size(); ++r)
    for (size_t i = 0; i < in.ranks[r].size(); ++i)
      if (in.ranks[r][i].collective && in.ranks[r][i].comm < ncomms)
        on_comm[in.ranks[r][i].comm][static_cast<uint32_t>(r)].push_back(static_cast<uint32_t>(i));
  for (size_t c = 0; c < ncomms; ++c) {
    if (in.untrimmable[c] || in.members[c].empty()) continue;
    uint64_t cut = UINT64_MAX;
    for (uint32_t m : in.members[c]) {
      const auto it = on_comm[c].find(m);
      if (it == on_comm[c].end()) {
        cut = 0;  // a member that made none: nothing of this comm is shown completed by all
        break;
      }
      uint64_t k = 0;
      while (k < it->second.size() && in.ranks[m][it->second[k]].completed && !in.ranks[m][it->second[k]].in_group) ++k;
      cut = std::min(cut, k);
    }
    if (cut == UINT64_MAX) cut = 0;
    if (!in.completion_seen && cut > 0) --cut;
    // Every member must have made the same call at each position left out; a call on the comm by a rank
    // outside it (the summary reports those) leaves the comm whole.
    if (on_comm[c].size() != in.members[c].size()) cut = 0;
    const uint32_t lead = in.members[c].front();
    for (uint64_t k = 0; k < cut; ++k) {
      const TrimItem& a = in.ranks[lead][on_comm[c][lead][k]];
      bool agree = true;
      for (uint32_t m : in.members[c]) {
        const TrimItem& b = in.ranks[m][on_comm[c][m][k]];
        if (b.kind != a.kind || b.shape != a.shape) agree = false;
      }
      if (!agree) {
        cut = k;
        break;
      }
    }
    plan.cut[c] = cut;
  }
  // A rank leaves out only calls before its first call not seen to complete: lower the cuts until that
  // holds on every rank (each round only lowers them, so this ends).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < in.ranks.size(); ++r) {
      bool before_open = true;
      for (size_t i = 0; i < in.ranks[r].size(); ++i) {
        const TrimItem& it = in.ranks[r][i];
        const bool left_out = it.collective && it.comm < ncomms && position[r][i] < plan.cut[it.comm];
        if (left_out && !before_open) {
          plan.cut[it.comm] = position[r][i];
          changed = true;
        } else if (!left_out && !it.completed) {
          before_open = false;
        }
      }
    }
  }
  for (size_t r = 0; r < in.ranks.size(); ++r) {
    plan.dropped[r].assign(in.ranks[r].size(), false);
    for (size_t i = 0; i < in.ranks[r].size(); ++i) {
      const TrimItem& it = in.ranks[r][i];
      if (it.collective && it.comm < ncomms && position[r][i] < plan.cut[it.comm]) {
        plan.dropped[r][i] = true;
        ++plan.dropped_calls;
      }
    }
  }
  return plan;
}

namespace {

bool matched_collective(CallKind kind) {
  auto op = op_kind_of(kind);
  return op && (model::is_collective(*op) || model::op_form(*op) == model::OpForm::Barrier);
}

// What the plan needs of a trace's communicators: their indices by id and their names for people.
struct CommFrame {
  std::map<std::string, uint32_t> index;
  std::vector<std::string> labels;
  explicit CommFrame(const Trace& trace) {
    for (const auto& c : trace.comms) {
      index.emplace(c.id, static_cast<uint32_t>(labels.size()));
      labels.push_back(c.label.empty() ? c.id : c.label);
    }
  }
};

// The item for a call, less what only the call knows (completed, in_group). `root`: the root as the
// reader knows it (a world rank, or a rank of the communicator: the plan compares members of one comm).
TrimItem item_of(const Call& call, std::optional<int64_t> root, const CommFrame& frame) {
  TrimItem item;
  item.kind = static_cast<uint16_t>(call.kind);
  auto it = frame.index.find(call.comm);
  if (matched_collective(call.kind) && it != frame.index.end()) {
    item.collective = true;
    item.comm = it->second;
    // Everything the check compares across the members of a slot (count, dtype, op, root, the MPI
    // function): a slot whose calls differ is a mismatch even when the library completed it (Open MPI
    // completes MPI_Scan met by MPI_Exscan), so it is never left out.
    const std::string agreed = std::to_string(call.count.value_or(0)) + "|" + call.dtype + "|" + call.redop + "|" +
                               (root ? std::to_string(*root) : std::string("-")) + "|" + call.mpi_call;
    item.shape = std::hash<std::string>{}(agreed);
  }
  return item;
}

// Calls in a group are one launch: never left out. `depth` follows the thread's group nesting.
void mark_group(TrimItem& item, CallKind kind, int& depth) {
  if (kind == CallKind::GroupStart) ++depth;
  item.in_group = depth > 0;
  if (kind == CallKind::GroupEnd && depth > 0) --depth;
}

void record_plan(Trace& trace, const CommFrame& frame, const TrimPlan& plan, size_t rows, bool completion_seen) {
  for (size_t c = 0; c < trace.comms.size(); ++c) trace.comms[c].dropped_collectives = plan.cut[c];
  trace.dropped.push_back(trim_summary(frame.labels, plan, rows, completion_seen));
}

}  // namespace

std::string trim_summary(const std::vector<std::string>& labels, const TrimPlan& plan, size_t nranks,
                         bool completion_seen) {
  size_t comms = 0;
  uint64_t most = 0;
  std::string example;
  for (size_t c = 0; c < plan.cut.size(); ++c) {
    if (plan.cut[c] == 0) continue;
    ++comms;
    if (plan.cut[c] > most) {
      most = plan.cut[c];
      example = labels[c];
    }
  }
  if (plan.dropped_calls == 0) return "";
  return "left out " + std::to_string(plan.dropped_calls) + " calls of " + std::to_string(nranks) + " ranks: on " +
         std::to_string(comms) + " communicator" + (comms == 1 ? "" : "s") +
         (completion_seen
              ? ", the collectives every member completed before the earliest one some member did not (up to "
              : ", the collectives every member made, but the last, before the earliest one some member "
                "did not make (up to ") +
         std::to_string(most) + " on " + example + "); they cannot take part in the hang. --full-history keeps them";
}

void fill_trim_members(const std::vector<Communicator>& comms, const std::map<int, uint32_t>& row_of, TrimInput& in) {
  in.members.assign(comms.size(), {});
  in.untrimmable.assign(comms.size(), false);
  for (size_t ci = 0; ci < comms.size(); ++ci) {
    const Communicator& c = comms[ci];
    for (const auto& [g, local] : c.members) {
      auto row = row_of.find(g);
      if (row == row_of.end()) {
        in.untrimmable[ci] = true;
      } else {
        in.members[ci].push_back(row->second);
      }
    }
    if (c.size > 0 && static_cast<size_t>(c.size) != c.members.size()) in.untrimmable[ci] = true;
  }
}

void trim_history(Trace& trace, bool completion_seen) {
  const CommFrame frame(trace);
  TrimInput in;
  in.completion_seen = completion_seen;
  std::map<int, uint32_t> row_of;
  std::vector<RankTrace*> rows;
  for (auto& [r, rt] : trace.ranks) {
    size_t threads = 0;
    for (const auto& t : rt.threads) threads += t.calls.empty() ? 0 : 1;
    if (!rt.present || threads > 1) continue;
    row_of[r] = static_cast<uint32_t>(rows.size());
    rows.push_back(&rt);
    std::vector<TrimItem> items;
    for (const auto& t : rt.threads) {
      int depth = 0;
      for (const auto& call : t.calls) {
        TrimItem item = item_of(call, call.root, frame);
        item.completed = call.state == CallState::Completed;
        mark_group(item, call.kind, depth);
        items.push_back(item);
      }
    }
    in.ranks.push_back(std::move(items));
  }
  fill_trim_members(trace.comms, row_of, in);
  TrimPlan plan = plan_trim(in);
  if (plan.dropped_calls == 0) return;
  for (size_t row = 0; row < rows.size(); ++row) {
    size_t i = 0;
    for (auto& t : rows[row]->threads) {
      std::vector<Call> kept;
      kept.reserve(t.calls.size());
      for (auto& call : t.calls)
        if (!plan.dropped[row][i++]) kept.push_back(std::move(call));
      t.calls = std::move(kept);
      t.open_spans.clear();
    }
  }
  record_plan(trace, frame, plan, rows.size(), completion_seen);
}

std::vector<std::vector<bool>> trim_held(Trace& trace, const std::vector<HeldRank>& held, bool completion_seen) {
  const CommFrame frame(trace);
  TrimInput in;
  in.completion_seen = completion_seen;
  std::map<int, uint32_t> row_of;
  std::vector<size_t> held_of_row;
  // Per shapes table, per shape: its item, made once (shapes are shared by thousands of calls).
  std::map<const CallShapes*, std::vector<TrimItem>> items_of_shapes;
  for (size_t h = 0; h < held.size(); ++h) {
    const HeldRank& hr = held[h];
    size_t threads = 0;
    for (const auto& t : hr.threads) threads += t.calls.empty() ? 0 : 1;
    if (threads > 1) continue;
    auto& shape_items = items_of_shapes[hr.shapes];
    for (size_t s = shape_items.size(); s < hr.shapes->size(); ++s) {
      const CallShape& shape = (*hr.shapes)[static_cast<uint32_t>(s)];
      // A root still named by its comm rank, or one the reader already made a world rank.
      std::optional<int64_t> root = shape.root_in_comm;
      if (!root.has_value() && shape.call.root.has_value()) root.emplace(*shape.call.root);
      shape_items.push_back(item_of(shape.call, root, frame));
    }
    row_of[hr.rank] = static_cast<uint32_t>(held_of_row.size());
    held_of_row.push_back(h);
    std::vector<TrimItem> items;
    for (const auto& t : hr.threads) {
      items.reserve(items.size() + t.calls.size());
      int depth = 0;
      for (const HeldCall& call : t.calls) {
        TrimItem item = shape_items[call.shape];
        item.completed = call.call_state() == CallState::Completed;
        mark_group(item, (*hr.shapes)[call.shape].call.kind, depth);
        items.push_back(item);
      }
    }
    in.ranks.push_back(std::move(items));
  }
  items_of_shapes.clear();
  fill_trim_members(trace.comms, row_of, in);
  TrimPlan plan = plan_trim(in);
  std::vector<std::vector<bool>> dropped(held.size());
  if (plan.dropped_calls == 0) return dropped;
  for (size_t row = 0; row < held_of_row.size(); ++row) dropped[held_of_row[row]] = std::move(plan.dropped[row]);
  record_plan(trace, frame, plan, held_of_row.size(), completion_seen);
  return dropped;
}

}  // namespace collmc::traces
