// plan_trim (trim_history.h) and trim_history (trace.h): leave out the collectives every member of a comm
// completed before the earliest one some member did not. docs/TRACES.md argues why the check's verdict is
// the same with and without them.
#include "trim_history.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

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
  // Per rank, per item: its position among the rank's collectives (or host-blocking calls) on its comm.
  std::vector<std::vector<uint32_t>> position(in.ranks.size());  // (a rank's items fit in 32 bits)
  // Per comm: how many collectives and host-blocking calls every member's trace holds (the fewest of any
  // member): a later one of a rank cannot complete in the model, whatever its trace says.
  std::vector<uint32_t> matched_collectives(ncomms, UINT32_MAX), matched_host(ncomms, UINT32_MAX);
  {
    std::vector<std::map<uint32_t, std::pair<uint32_t, uint32_t>>> made(in.ranks.size());
    for (size_t r = 0; r < in.ranks.size(); ++r) {
      position[r].resize(in.ranks[r].size());
      for (size_t i = 0; i < in.ranks[r].size(); ++i) {
        const TrimItem& it = in.ranks[r][i];
        if (it.collective) position[r][i] = made[r][it.comm].first++;
        if (it.host_slot) position[r][i] = made[r][it.comm].second++;
      }
    }
    for (size_t c = 0; c < ncomms; ++c) {
      if (in.untrimmable[c] || in.members[c].empty()) {
        matched_collectives[c] = matched_host[c] = 0;  // a member without a trace makes none in the scenario
        continue;
      }
      for (uint32_t m : in.members[c]) {
        const auto it = made[m].find(static_cast<uint32_t>(c));
        matched_collectives[c] = std::min(matched_collectives[c], it == made[m].end() ? 0u : it->second.first);
        matched_host[c] = std::min(matched_host[c], it == made[m].end() ? 0u : it->second.second);
      }
    }
  }
  // A call the model cannot complete from what the traces hold: not seen to complete, or a collective or
  // host-blocking call some member's trace lacks the match of.
  auto open = [&](const TrimItem& it, uint32_t pos) {
    if (!it.completed) return true;
    if (it.comm >= ncomms) return false;
    return (it.collective && pos >= matched_collectives[it.comm]) || (it.host_slot && pos >= matched_host[it.comm]);
  };
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
        if (b.kind != a.kind || b.shape != a.shape || b.symmetric != a.symmetric) agree = false;
      }
      if (!agree) {
        cut = k;
        break;
      }
    }
    plan.cut[c] = cut;
  }
  // Lower the cuts until, on every rank, (a) the calls left out all come before its first call not seen to
  // complete, and (b) between a collective left out and a later call that asks whether it may still run (a
  // free, a deregister, an abort) lies a drain (a device sync): the model would otherwise find the use after
  // free that the full history has. Each round only lowers them, so this ends.
  const std::vector<uint64_t> agreed = plan.cut;
  std::vector<bool> for_pending(ncomms, false);
  std::vector<std::pair<uint32_t, uint32_t>> undrained;  // (comm, position) of the first left out since a drain
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < in.ranks.size(); ++r) {
      bool before_open = true;
      bool collective_since_drain = false;  // a collective, kept or left out, not yet drained by a device sync
      undrained.clear();
      for (size_t i = 0; i < in.ranks[r].size(); ++i) {
        const TrimItem& it = in.ranks[r][i];
        const bool left_out = it.collective && it.comm < ncomms && position[r][i] < plan.cut[it.comm];
        if (left_out && !before_open) {
          plan.cut[it.comm] = position[r][i];
          changed = true;
          continue;
        }
        if (it.collective) collective_since_drain = true;
        if (left_out) {
          if (std::none_of(undrained.begin(), undrained.end(), [&](const auto& u) { return u.first == it.comm; }))
            undrained.emplace_back(it.comm, position[r][i]);
          continue;
        }
        if (open(it, position[r][i])) before_open = false;
        // A free, deregister or abort while a collective may still run: the model may find a violation there,
        // or (an abort waits for an idle GPU, whose ops other members' aborts may have stopped) never return,
        // in some schedule; nothing after it is left out.
        if (it.reads_pending && collective_since_drain) before_open = false;
        if (it.drains) collective_since_drain = false;
        if (it.reads_pending)
          for (const auto& [comm, pos] : undrained)
            if (pos < plan.cut[comm]) {
              plan.cut[comm] = pos;
              for_pending[comm] = true;
              changed = true;
            }
        if (it.drains || it.reads_pending) undrained.clear();
      }
    }
  }
  for (size_t c = 0; c < ncomms; ++c)
    if (for_pending[c] && plan.cut[c] < agreed[c]) ++plan.held_for_pending;
  plan.connected.assign(ncomms, false);
  for (size_t r = 0; r < in.ranks.size(); ++r) {
    plan.dropped[r].assign(in.ranks[r].size(), false);
    for (size_t i = 0; i < in.ranks[r].size(); ++i) {
      const TrimItem& it = in.ranks[r][i];
      if (it.collective && it.comm < ncomms && position[r][i] < plan.cut[it.comm]) {
        plan.dropped[r][i] = true;
        ++plan.dropped_calls;
        if (!it.symmetric) plan.connected[it.comm] = true;  // members agree on it at every position
      }
    }
  }
  return plan;
}

namespace {

void mark_device_reads(TrimItem& item, CallKind kind) {
  // The model's DEVSYNC of the whole device (SEMANTICS.md §2): nothing of this rank runs after it.
  item.drains = kind == CallKind::DeviceSync || kind == CallKind::CudaFree;
  // Calls whose effect depends on whether a device op of this rank may still run: a free or a window's
  // deregister (use_after_free, use_after_deregister), an abort or revoke (the kernels it stops).
  item.reads_pending = kind == CallKind::MemFree || kind == CallKind::WindowDeregister || kind == CallKind::CommAbort ||
                       kind == CallKind::CommRevoke;
}

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

// The comm a call creates in the scenario (an init of it, a split into it), as an index into `frame`, or
// UINT32_MAX.
uint32_t created_by(const Call& call, const std::map<std::string, uint32_t>& comm_index) {
  const std::string* id = call.kind == CallKind::CommInit    ? &call.comm
                          : call.kind == CallKind::CommSplit ? &call.child_comm
                                                             : nullptr;
  if (!id || id->empty()) return UINT32_MAX;
  auto it = comm_index.find(*id);
  return it == comm_index.end() ? UINT32_MAX : it->second;
}

// Comms left whole. A comm the trace creates (not one that exists from the start) is left whole where a member's trace
// holds no call the scenario creates it with (a shrink, which the language cannot write yet): the model then finds its
// collectives on a comm never created, in the full history as it must in the trimmed one.
void leave_whole_uncreated(const std::vector<Communicator>& comms, const std::vector<std::vector<uint32_t>>& created,
                           TrimInput& in) {
  for (size_t c = 0; c < comms.size(); ++c) {
    // A host-blocking comm (an mpi comm in an nccl scenario: the torch shim's gloo groups) counts its
    // collectives among its host slots, with its other host-blocking calls: `history host=N` would number
    // the kept ones among them otherwise than the run. Left whole.
    if (comms[c].host_blocking) in.untrimmable[c] = true;
    if (comms[c].origin == CommOrigin::Preexisting || in.untrimmable[c]) continue;
    for (uint32_t m : in.members[c])
      if (std::find(created[m].begin(), created[m].end(), static_cast<uint32_t>(c)) == created[m].end())
        in.untrimmable[c] = true;
  }
}

// What a call does to the windows the model keeps (the checker's add_window, find_window), in the names
// the scenario gives comms and buffers: a register, a deregister, or a collective that may run a symmetric
// kernel (SEMANTICS.md §3 step 4).
struct WindowOp {
  enum Kind : uint8_t { None, Register, Deregister, Collective } kind = None;
  bool symmetric_flag = false;  // Register: NCCL_WIN_COLL_SYMMETRIC
  uint32_t comm = 0;
  uint32_t buffer = 0;
  uint32_t buffer2 = UINT32_MAX;  // the output buffer the scenario names (`-> BUF2`), if any
};

class BufferIds {
 public:
  uint32_t of(const std::string& raw) {
    return ids_.emplace(scenario_buffer_name(raw), static_cast<uint32_t>(ids_.size())).first->second;
  }

 private:
  std::map<std::string, uint32_t> ids_;
};

WindowOp window_op_of(const Call& call, const std::map<std::string, uint32_t>& comm_index, BufferIds& buffers) {
  WindowOp w;
  auto comm = comm_index.find(call.comm);
  if (comm == comm_index.end()) return w;
  const auto op = op_kind_of(call.kind);
  if (call.kind == CallKind::WindowRegister) {
    w.kind = WindowOp::Register;
    w.symmetric_flag = call.symmetric;
  } else if (call.kind == CallKind::WindowDeregister) {
    w.kind = WindowOp::Deregister;
  } else if (op && model::symmetric_eligible(*op)) {
    w.kind = WindowOp::Collective;
    if (!call.recv_buffer.empty() && call.recv_buffer != call.buffer) w.buffer2 = buffers.of(call.recv_buffer);
  } else {
    return w;
  }
  w.comm = comm->second;
  w.buffer = buffers.of(call.buffer);
  return w;
}

// One rank's windows, as the model counts them: per (comm, buffer, flag) how many registrations stand.
class RankWindows {
 public:
  // Applies a call's window effect; for a collective, whether the model runs it with a symmetric kernel.
  bool apply(const WindowOp& w) {
    switch (w.kind) {
      case WindowOp::None:
        return false;
      case WindowOp::Register:
        ++count_[{w.comm, w.buffer, w.symmetric_flag ? 0 : 1}];
        return false;
      case WindowOp::Deregister:
        // find_window(comm, buffer) with any flag: the first in (comm, buffer, flag) order, symmetric first.
        for (int flag : {0, 1})
          if (auto it = count_.find({w.comm, w.buffer, flag}); it != count_.end()) {
            if (--it->second == 0) count_.erase(it);
            break;
          }
        return false;
      case WindowOp::Collective:
        return !count_.empty() && symmetric(w.comm, w.buffer) &&
               (w.buffer2 == UINT32_MAX || symmetric(w.comm, w.buffer2));
    }
    return false;
  }
  bool empty() const { return count_.empty(); }

 private:
  bool symmetric(uint32_t comm, uint32_t buffer) const { return count_.count({comm, buffer, 0}) > 0; }
  std::map<std::tuple<uint32_t, uint32_t, int>, int> count_;
};

// The item for a call, less what only the call knows (completed, in_group, symmetric). `root`: the root as
// the reader knows it (a world rank, or a rank of the communicator: the plan compares members of one comm).
TrimItem item_of(const Call& call, std::optional<int64_t> root, const CommFrame& frame) {
  TrimItem item;
  item.kind = static_cast<uint16_t>(call.kind);
  mark_device_reads(item, call.kind);
  auto it = frame.index.find(call.comm);
  // The host-blocking calls the scenario writes (a shrink or grow it cannot: a comment).
  if (const auto op = op_kind_of(call.kind);
      op && it != frame.index.end() && model::op_class(*op, model::Profile::Nccl) == model::OpClass::HostBlocking &&
      call.kind != CallKind::CommShrink && call.kind != CallKind::CommGrow) {
    item.host_slot = true;
    item.comm = it->second;
  }
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

}  // namespace

void record_trim(Trace& trace, const std::vector<std::string>& labels, const TrimPlan& plan, size_t nranks,
                 bool completion_seen) {
  // On top of what a reader left out before (a Flight Recorder ring buffer's lost entries).
  for (size_t c = 0; c < trace.comms.size(); ++c) {
    trace.comms[c].dropped_collectives += plan.cut[c];
    trace.comms[c].history_connected =
        trace.comms[c].history_connected || (c < plan.connected.size() && plan.connected[c]);
  }
  if (std::string line = trim_summary(labels, plan, nranks, completion_seen); !line.empty())
    trace.dropped.push_back(std::move(line));
}

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
  std::string pending =
      plan.held_for_pending == 0
          ? ""
          : "kept more on " + std::to_string(plan.held_for_pending) + " communicator" +
                (plan.held_for_pending == 1 ? "" : "s") +
                ": a free, deregister or abort follows their collectives with no device sync between, where the "
                "model asks whether they may still run";
  if (plan.dropped_calls == 0) return pending;
  return "left out " + std::to_string(plan.dropped_calls) + " calls of " + std::to_string(nranks) + " ranks: on " +
         std::to_string(comms) + " communicator" + (comms == 1 ? "" : "s") +
         (completion_seen
              ? ", the collectives every member completed before the earliest one some member did not (up to "
              : ", the collectives every member made, but the last, before the earliest one some member "
                "did not make (up to ") +
         std::to_string(most) + " on " + example +
         "); the scenario starts those communicators as the calls left out leave them (`history`: their device "
         "slots taken, warm where one connected them), so the calls kept wait and are numbered as in the run" +
         (pending.empty() ? "" : "; " + pending) + ". --full-history keeps them";
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
  BufferIds buffers;
  std::vector<std::vector<uint32_t>> created;  // per row: the comms its calls create
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
    RankWindows windows;
    created.emplace_back();
    for (const auto& t : rt.threads) {
      int depth = 0;
      for (const auto& call : t.calls) {
        if (const uint32_t c = created_by(call, frame.index); c != UINT32_MAX) created.back().push_back(c);
        TrimItem item = item_of(call, call.root, frame);
        item.completed = call.state == CallState::Completed;
        item.symmetric = windows.apply(window_op_of(call, frame.index, buffers));
        mark_group(item, call.kind, depth);
        items.push_back(item);
      }
    }
    in.ranks.push_back(std::move(items));
  }
  fill_trim_members(trace.comms, row_of, in);
  leave_whole_uncreated(trace.comms, created, in);
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
  record_trim(trace, frame.labels, plan, rows.size(), completion_seen);
}

std::vector<std::vector<bool>> trim_held(Trace& trace, const std::vector<HeldRank>& held, bool completion_seen) {
  const CommFrame frame(trace);
  TrimInput in;
  in.completion_seen = completion_seen;
  std::map<int, uint32_t> row_of;
  std::vector<size_t> held_of_row;
  // Per shapes table, per shape: its item and window effect, made once (shapes are shared by thousands of
  // calls).
  std::map<const CallShapes*, std::vector<TrimItem>> items_of_shapes;
  std::map<const CallShapes*, std::vector<WindowOp>> windows_of_shapes;
  std::map<const CallShapes*, std::vector<uint32_t>> creates_of_shapes;
  std::vector<std::vector<uint32_t>> created;  // per row: the comms its calls create
  BufferIds buffers;
  for (size_t h = 0; h < held.size(); ++h) {
    const HeldRank& hr = held[h];
    size_t threads = 0;
    for (const auto& t : hr.threads) threads += t.calls.empty() ? 0 : 1;
    if (threads > 1) continue;
    auto& shape_items = items_of_shapes[hr.shapes];
    auto& shape_windows = windows_of_shapes[hr.shapes];
    auto& shape_creates = creates_of_shapes[hr.shapes];
    for (size_t s = shape_items.size(); s < hr.shapes->size(); ++s) {
      const CallShape& shape = (*hr.shapes)[static_cast<uint32_t>(s)];
      // A root still named by its comm rank, or one the reader already made a world rank.
      std::optional<int64_t> root = shape.root_in_comm;
      if (!root.has_value() && shape.call.root.has_value()) root.emplace(*shape.call.root);
      shape_items.push_back(item_of(shape.call, root, frame));
      shape_windows.push_back(window_op_of(shape.call, frame.index, buffers));
      shape_creates.push_back(created_by(shape.call, frame.index));
    }
    created.emplace_back();
    row_of[hr.rank] = static_cast<uint32_t>(held_of_row.size());
    held_of_row.push_back(h);
    std::vector<TrimItem> items;
    RankWindows windows;
    for (const auto& t : hr.threads) {
      items.reserve(items.size() + t.calls.size());
      int depth = 0;
      for (const HeldCall& call : t.calls) {
        TrimItem item = shape_items[call.shape];
        item.completed = call.call_state() == CallState::Completed;
        if (const WindowOp& w = shape_windows[call.shape]; w.kind != WindowOp::None) item.symmetric = windows.apply(w);
        if (shape_creates[call.shape] != UINT32_MAX) created.back().push_back(shape_creates[call.shape]);
        mark_group(item, (*hr.shapes)[call.shape].call.kind, depth);
        items.push_back(item);
      }
    }
    in.ranks.push_back(std::move(items));
  }
  items_of_shapes.clear();
  windows_of_shapes.clear();
  creates_of_shapes.clear();
  fill_trim_members(trace.comms, row_of, in);
  leave_whole_uncreated(trace.comms, created, in);
  TrimPlan plan = plan_trim(in);
  std::vector<std::vector<bool>> dropped(held.size());
  if (plan.dropped_calls == 0) return dropped;
  for (size_t row = 0; row < held_of_row.size(); ++row) dropped[held_of_row[row]] = std::move(plan.dropped[row]);
  record_trim(trace, frame.labels, plan, held_of_row.size(), completion_seen);
  return dropped;
}

}  // namespace collmc::traces
