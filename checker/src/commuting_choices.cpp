// Which any_orders the partial-order reduction may resolve in one order (docs/REDUCTION.md, "Orders
// left open"): the thread is its rank's only live thread, and every child still to run is one call
// that can never block the thread and touches nothing another remaining child touches.
#include <array>

#include "semantics_internal.h"

namespace collmc::checker {

using model::Call;
using model::OpKind;
using model::Profile;

namespace {

// What a call of a commuting child touches on its rank.
struct Footprint {
  int comm = -1;                     // slots, windows, membership flags and pending-call state of this comm
  int stream = -1;                   // the stream whose FIFO it appends to
  int writes = -1;                   // a buffer it allocates
  std::array<int, 2> reads{-1, -1};  // buffers it reads (freed? allocated how? its size)
};

bool conflict(const Footprint& a, const Footprint& b) {
  if (a.comm >= 0 && a.comm == b.comm) return true;
  if (a.stream >= 0 && a.stream == b.stream) return true;
  auto touches = [](const Footprint& f, int buffer) {
    return buffer >= 0 && (f.writes == buffer || f.reads[0] == buffer || f.reads[1] == buffer);
  };
  return touches(b, a.writes) || touches(a, b.writes);
}

}  // namespace

bool Semantics::commuting_choice(const State& s, int rank, int thread) const {
  // With comms of both launchOrderImplicit settings (NCCL 2.31+), whether a kernel may overlap another
  // depends on what is pending when each is issued: children on different comms no longer commute.
  if (launch_order_mixed_) return false;
  const auto& rs = s.ranks[static_cast<size_t>(rank)];
  for (int t = 0; t < static_cast<int>(rs.threads.size()); ++t)
    if (t != thread && thread_live(s, rank, t)) return false;
  const ThreadState& ts = rs.threads[static_cast<size_t>(thread)];
  if (ts.node < 0 || control_.nodes[static_cast<size_t>(ts.node)].any_order < 0 || !waits_hold(s, rank, ts))
    return false;
  const bool serialized = world_.knobs.stream_progress == model::StreamProgress::Serialized;
  std::array<Footprint, 64> seen{};
  size_t n = 0;
  bool commuting = true;
  control_.for_each_edge(ts, [&](size_t, const ControlEdge& enter) {
    if (!commuting) return;
    // The child is one call, after which the thread is back at the dispatch node.
    const ControlNode& child = control_.nodes[static_cast<size_t>(enter.target)];
    if (child.edges.size() != 1 || child.edges.front().kind != ControlEdge::Kind::Call ||
        child.edges.front().target != ts.node) {
      commuting = false;
      return;
    }
    const Call& c = world_.calls[static_cast<size_t>(child.edges.front().call)];
    Footprint f;
    f.comm = c.comm;
    bool ok = c.usage_error.empty();
    switch (c.kind) {
      case OpKind::Alloc:
      case OpKind::CudaMalloc:
        f.writes = c.buffer;
        break;
      case OpKind::RegisterLocal:
      case OpKind::DeregisterLocal:
        f.reads[0] = c.buffer;
        break;
      case OpKind::Register:  // an HBC: it blocks unless the comm is nonblocking
        f.reads[0] = c.buffer;
        ok = ok && world_.profile_of(c) == Profile::Nccl &&
             world_.comms[static_cast<size_t>(c.comm)].mode == model::CommMode::Nonblocking;
        break;
      case OpKind::AllReduce:
      case OpKind::AllGather:
      case OpKind::ReduceScatter:
      case OpKind::Broadcast:
      case OpKind::Reduce:
      case OpKind::AllToAll: {
        // A SOC: it blocks only for the runtime connect of a blocking comm, which a rank reaches once.
        f.reads = {c.buffer, c.buffer2};
        f.stream = c.stream;
        ok = ok && world_.profile_of(c) == Profile::Nccl && !serialized;
        if (ok && c.comm >= 0 && local_index(rank, c.comm) >= 0 && world_.knobs.runtime_connect &&
            world_.comms[static_cast<size_t>(c.comm)].mode == model::CommMode::Blocking)
          ok = (rs.members[static_cast<size_t>(local_index(rank, c.comm))].flags & kConnectReached) != 0;
        break;
      }
      default:
        ok = false;
    }
    // A member of its comm, whose previous nonblocking call completed: the guard holds, and only this
    // thread's own calls on the comm could make it fail again.
    if (ok && c.comm >= 0)
      ok = local_index(rank, c.comm) >= 0 && nonblocking_wait(s, rank, c).kind == NonblockingWait::None;
    for (size_t i = 0; ok && i < n; ++i) ok = !conflict(seen[i], f);
    if (!ok) {
      commuting = false;
      return;
    }
    seen[n++] = f;
  });
  return commuting;
}

}  // namespace collmc::checker
