// SEMANTICS.md §2-§6 as a next-state function. Each step is atomic; Issuer applies one call (or a
// group's calls) of one host thread to a copy of the state.
#include "collmc/checker/semantics.h"

#include <algorithm>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

namespace collmc::checker {

using model::Call;
using model::OpClass;
using model::OpKind;
using model::Profile;
using model::Verdict;

namespace {

bool has_part(const RankState& rs, int comm) {
  for (const auto& st : rs.streams)
    for (const auto& e : st)
      for (const auto& p : e.parts)
        if (!p.done && p.comm == comm) return true;
  return false;
}

bool streams_empty(const RankState& rs) {
  return std::all_of(rs.streams.begin(), rs.streams.end(), [](const auto& st) { return st.empty(); });
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Issuing calls

class Issuer {
 public:
  Issuer(const Semantics& sem, State& st, int rank, int thread)
      : sem_(sem), w_(sem.world_), st_(st), r_(rank), t_(thread), rs_(st.ranks[static_cast<size_t>(rank)]) {}

  // Applies the call's effect; returns false once a violation was found (kept in `violation`).
  bool issue(const Call& c) {
    if (!c.usage_error.empty()) return fail(Verdict::UsageError, c, c.usage_error);
    if (!check_comm(c)) return false;
    const bool mpi = w_.knobs.profile == Profile::Mpi;
    switch (c.kind) {
      case OpKind::Alloc:
      case OpKind::CudaMalloc: {
        auto& b = buf(c.buffer);
        b.alloc_call = static_cast<uint32_t>(c.id) + 1;
        b.freed = 0;
        return true;
      }
      case OpKind::Free:
      case OpKind::CudaFree: {
        auto& b = buf(c.buffer);
        if (b.freed) return fail(Verdict::UsageError, c, "buffer '" + bname(c.buffer) + "' is already freed");
        const bool from_alloc = alloc_kind(c.buffer) == OpKind::Alloc;
        if (c.kind == OpKind::Free && !from_alloc)
          return fail(Verdict::UsageError, c,
                      "free (ncclMemFree) of '" + bname(c.buffer) + "', which is not from alloc (ncclMemAlloc)");
        if (c.kind == OpKind::CudaFree && from_alloc)
          return fail(Verdict::UsageError, c,
                      "cuda_free of '" + bname(c.buffer) + "', which is from alloc (ncclMemAlloc): use free");
        if (int pending = pending_use(c.buffer, -1); pending >= 0)
          return fail(Verdict::UseAfterFree, c,
                      "'" + bname(c.buffer) + "' is freed while " + sem_.call_ref(pending) + " may still use it");
        b.freed = 1;
        return true;
      }
      case OpKind::RegisterLocal:
      case OpKind::DeregisterLocal:
        return check_buffer(c, c.buffer);
      case OpKind::Register: {
        if (!check_buffer(c, c.buffer)) return false;
        if (!mpi) {
          if (alloc_kind(c.buffer) != OpKind::Alloc)
            return fail(
                Verdict::UsageError, c,
                "register needs memory from alloc (ncclMemAlloc, VMM); '" + bname(c.buffer) + "' is from cudaMalloc");
          if (alloc_size(c.buffer) == 0) return true;  // size 0: returns at once, joins nothing
        }
        add_window(c);
        join_host(c, -1);
        return violation_.has_value() ? false : true;
      }
      case OpKind::Deregister: {
        if (!check_buffer(c, c.buffer)) return false;
        auto it = find_window(c.comm, c.buffer);
        if (it == rs_.windows.end())
          return fail(Verdict::UsageError, c,
                      "deregister of '" + bname(c.buffer) + "' on " + w_.comm_name(c.comm) + ": no window registered");
        if (!mpi) {
          if (int pending = pending_use(c.buffer, c.comm); pending >= 0)
            return fail(Verdict::UseAfterDeregister, c,
                        "the window of '" + bname(c.buffer) + "' on " + w_.comm_name(c.comm) +
                            " is deregistered while " + sem_.call_ref(pending) + " may still use it");
        }
        if (--it->count == 0) rs_.windows.erase(it);
        if (mpi) join_host(c, -1);
        return !violation_;
      }
      case OpKind::Init:
        member(c.comm).flags |= kCreated;
        join_host(c, -1);
        return !violation_;
      case OpKind::Split:
        if (c.child >= 0) {
          auto& child = member(c.child);
          if (child.flags & kCreated)
            return fail(Verdict::UsageError, c, "split creates " + w_.comm_name(c.child) + ", which already exists");
          child.flags |= kCreated;
        }
        join_host(c, c.child);
        return !violation_;
      case OpKind::Finalize:
        member(c.comm).flags |= kFinalized;
        return true;
      case OpKind::Destroy: {
        // Measured on 2x H200 (docs/HARDWARE.md): destroying a comm whose connections were set up
        // waits until every member destroys that same comm; a comm never connected is freed locally.
        auto& m = member(c.comm);
        const bool connected = (m.flags & kConnectReached) || has_p2p_connection(c.comm);
        m.flags |= kDestroyed;
        if (connected && !mpi && w_.comms[static_cast<size_t>(c.comm)].mode == model::CommMode::Blocking)
          waits_.push_back(
              Wait{WaitKind::Teardown, 0, static_cast<uint16_t>(c.comm), 0, 0, static_cast<uint32_t>(c.id)});
        return true;
      }
      case OpKind::Abort:
        abort_comm(c.comm);
        return true;
      case OpKind::SyncStream:
      case OpKind::SyncDevice:
        return true;  // the guard did the waiting
      case OpKind::Send:
      case OpKind::Recv:
        if (!check_buffer(c, c.buffer)) return false;
        if (mpi) return host_pair(c);
        return device_pair(c);
      case OpKind::Barrier:
        if (mpi) {
          join_host(c, -1);
          return !violation_;
        }
        return device_collective(c, true);
      default:  // collectives
        if (!check_buffer(c, c.buffer) || !check_buffer(c, c.buffer2)) return false;
        if (mpi) {
          join_host(c, -1);
          return !violation_;
        }
        return device_collective(c, false);
    }
  }

  // Appends the device entries (one per stream) and the waits of everything issued.
  void finish(ThreadState& thread) {
    if (!parts_.empty()) {
      const bool serialized = w_.knobs.stream_progress == model::StreamProgress::Serialized;
      const uint32_t seq = serialized ? rs_.next_seq++ : 0;
      for (auto& [stream, parts] : parts_) {
        StreamEntry e;
        e.seq = seq;
        e.parts = std::move(parts);
        rs_.streams[static_cast<size_t>(stream)].push_back(std::move(e));
      }
    }
    thread.waits.insert(thread.waits.end(), waits_.begin(), waits_.end());
  }

  std::optional<Violation> violation_;

 private:
  bool fail(Verdict v, const Call& c, std::string msg) {
    if (!violation_) violation_ = Violation{v, std::move(msg), r_, t_, c.id};
    return false;
  }

  MemberState& member(int comm) { return rs_.members[static_cast<size_t>(sem_.local_index(r_, comm))]; }
  BufferState& buf(int b) { return rs_.buffers[static_cast<size_t>(b)]; }
  const std::string& bname(int b) const { return w_.buffers[static_cast<size_t>(b)]; }

  // Kind of the call that allocated the buffer; the implicit plain buffer counts as cuda_malloc.
  OpKind alloc_kind(int b) const {
    uint32_t a = rs_.buffers[static_cast<size_t>(b)].alloc_call;
    return a == 0 ? OpKind::CudaMalloc : w_.calls[a - 1].kind;
  }
  uint64_t alloc_size(int b) const {
    uint32_t a = rs_.buffers[static_cast<size_t>(b)].alloc_call;
    return a == 0 ? model::kDefaultBufferSize : w_.calls[a - 1].size;
  }

  bool has_p2p_connection(int comm) const {
    return std::any_of(rs_.p2p.begin(), rs_.p2p.end(),
                       [&](const P2pState& p) { return p.comm == comm && p.connect_reached; });
  }

  bool check_comm(const Call& c) {
    if (c.comm < 0) return true;
    const auto& m = member(c.comm);
    const std::string& name = w_.comm_name(c.comm);
    if (c.kind == OpKind::Init) {
      if (m.flags & kCreated) return fail(Verdict::UsageError, c, "init of " + name + ", which already exists");
      return true;
    }
    if (!(m.flags & kCreated))
      return fail(
          Verdict::UsageError, c,
          name + " is not created yet on rank " + std::to_string(r_) + " (declared uninit: init or split creates it)");
    if (m.flags & (kDestroyed | kAborted))
      return fail(Verdict::UsageError, c, name + " was already destroyed or aborted on rank " + std::to_string(r_));
    if ((m.flags & kFinalized) && c.kind != OpKind::Destroy && c.kind != OpKind::Abort)
      return fail(Verdict::UsageError, c, name + " was already finalized on rank " + std::to_string(r_));
    return true;
  }

  bool check_buffer(const Call& c, int b) {
    if (b < 0) return true;
    if (buf(b).freed) return fail(Verdict::UsageError, c, "use of '" + bname(b) + "' after it was freed");
    return true;
  }

  // A device op of this rank not yet completed that touches buffer `b` (on `comm`, if >= 0).
  int pending_use(int b, int comm) const {
    for (const auto& st : rs_.streams)
      for (const auto& e : st)
        for (const auto& p : e.parts) {
          if (p.done || (comm >= 0 && p.comm != comm)) continue;
          const Call& pc = w_.calls[p.call];
          if (pc.buffer == b || pc.buffer2 == b) return static_cast<int>(p.call);
        }
    return -1;
  }

  std::vector<WindowState>::iterator find_window(int comm, int b, int flag = -1) {
    return std::find_if(rs_.windows.begin(), rs_.windows.end(), [&](const WindowState& x) {
      return x.comm == comm && x.buffer == b && (flag < 0 || x.flag == flag) && x.count > 0;
    });
  }

  void add_window(const Call& c) {
    auto flag = static_cast<uint8_t>(c.flag);
    auto it = find_window(c.comm, c.buffer, flag);
    if (it != rs_.windows.end()) {
      if (it->count < 255) ++it->count;
      return;
    }
    WindowState x{static_cast<uint16_t>(c.comm), static_cast<uint16_t>(c.buffer), flag, 1};
    auto pos =
        std::lower_bound(rs_.windows.begin(), rs_.windows.end(), x, [](const WindowState& a, const WindowState& b) {
          return std::tie(a.comm, a.buffer, a.flag) < std::tie(b.comm, b.buffer, b.flag);
        });
    rs_.windows.insert(pos, x);
  }

  bool symmetric_buffer(int comm, int b) {
    return b >= 0 && find_window(comm, b, static_cast<int>(model::RegFlag::Symmetric)) != rs_.windows.end();
  }

  // `count=`, or the buffer's size in elements of the dtype.
  uint64_t effective_count(const Call& c) const {
    if (c.count >= 0) return static_cast<uint64_t>(c.count);
    if (c.kind == OpKind::Barrier) return 1;
    if (c.buffer < 0) return 0;
    return alloc_size(c.buffer) / w_.dtype_size(c.dtype);
  }

  // The first difference between two calls filling the same slot, or "".
  std::string difference(const Call& a, uint64_t count_a, const Call& b, uint64_t count_b) const {
    if (a.kind != b.kind) return std::string(model::op_name(a.kind)) + " and " + std::string(model::op_name(b.kind));
    if (model::is_collective(a.kind) || a.kind == OpKind::Barrier) {
      if (count_a != count_b) return "count " + std::to_string(count_a) + " and " + std::to_string(count_b);
      if (a.dtype != b.dtype)
        return "dtype " + w_.dtypes[static_cast<size_t>(a.dtype)] + " and " + w_.dtypes[static_cast<size_t>(b.dtype)];
      const bool reduces = a.kind == OpKind::AllReduce || a.kind == OpKind::Reduce || a.kind == OpKind::ReduceScatter;
      if (reduces && a.redop != b.redop)
        return "op " + w_.redops[static_cast<size_t>(a.redop)] + " and " + w_.redops[static_cast<size_t>(b.redop)];
      const bool rooted = a.kind == OpKind::Broadcast || a.kind == OpKind::Reduce;
      if (rooted && a.root != b.root) return "root " + std::to_string(a.root) + " and " + std::to_string(b.root);
    }
    return {};
  }

  // Takes the comm's next host slot (an HBC) and waits for it unless the comm is nonblocking.
  void join_host(const Call& c, int child) {
    auto& m = member(c.comm);
    const uint32_t k = m.host_issued++;
    auto& cs = st_.comms[static_cast<size_t>(c.comm)];
    const size_t idx = k - cs.host_base;
    const uint64_t count = effective_count(c);
    if (idx < cs.host_open.size()) {
      const auto& first = cs.host_open[idx];
      const Call& fc = w_.calls[first.call];
      std::string diff = difference(fc, first.count, c, count);
      if (!diff.empty()) {
        fail(Verdict::Mismatch, c,
             "host slot " + std::to_string(k) + " of " + w_.comm_name(c.comm) +
                 " is filled by different calls: " + diff + " (rank " + std::to_string(fc.rank) + " " +
                 sem_.call_ref(fc.id) + ", rank " + std::to_string(r_) + " " + sem_.call_ref(c.id) + ")");
        return;
      }
      // The lowest arrived rank's call stands for the slot, so the state does not depend on arrival order.
      if (r_ < fc.rank) cs.host_open[idx].call = static_cast<uint32_t>(c.id);
    } else {
      cs.host_open.push_back(OpenSlot{static_cast<uint32_t>(c.id), count, 0, {}});
    }
    if (c.kind == OpKind::Split) {
      auto& children = cs.host_open[idx].split_children;
      std::pair<uint16_t, int16_t> entry(static_cast<uint16_t>(r_), static_cast<int16_t>(child));
      children.insert(std::lower_bound(children.begin(), children.end(), entry), entry);
    }
    if (w_.comms[static_cast<size_t>(c.comm)].mode == model::CommMode::Blocking)
      waits_.push_back(Wait{WaitKind::HostSlot, 0, static_cast<uint16_t>(c.comm), k, 0, static_cast<uint32_t>(c.id)});
    settle_host(c);
  }

  // Pops the slots every member has reached; checks split children when a split slot completes.
  void settle_host(const Call& c) {
    auto& cs = st_.comms[static_cast<size_t>(c.comm)];
    const auto& comm = w_.comms[static_cast<size_t>(c.comm)];
    while (!cs.host_open.empty()) {
      for (int m : comm.members) {
        const auto& ms = st_.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(sem_.local_index(m, c.comm))];
        if (ms.host_issued <= cs.host_base) return;
      }
      const OpenSlot& done = cs.host_open.front();
      if (!done.split_children.empty()) check_split(c, done);
      cs.host_open.erase(cs.host_open.begin());
      ++cs.host_base;
    }
  }

  void check_split(const Call& c, const OpenSlot& slot) {
    std::set<int> children;
    for (const auto& [rank, child] : slot.split_children)
      if (child >= 0) children.insert(child);
    for (int child : children) {
      std::vector<int> naming;
      for (const auto& [rank, ch] : slot.split_children)
        if (ch == child) naming.push_back(rank);
      std::sort(naming.begin(), naming.end());
      const auto& members = w_.comms[static_cast<size_t>(child)].members;
      if (naming != members) {
        fail(Verdict::Mismatch, c,
             "split of " + w_.comm_name(c.comm) + " (host slot " +
                 std::to_string(st_.comms[static_cast<size_t>(c.comm)].host_base) + "): ranks " +
                 model::rank_list_text(naming) + " join " + w_.comm_name(child) + ", whose members are " +
                 model::rank_list_text(members));
        return;
      }
    }
  }

  void connect(const Call& c) {
    if (!w_.knobs.runtime_connect) return;
    auto& m = member(c.comm);
    if (m.flags & kConnectReached) return;
    m.flags |= kConnectReached;
    if (w_.comms[static_cast<size_t>(c.comm)].mode == model::CommMode::Blocking)
      waits_.push_back(Wait{WaitKind::Connect, 0, static_cast<uint16_t>(c.comm), 0, 0, static_cast<uint32_t>(c.id)});
  }

  bool device_collective(const Call& c, bool barrier) {
    const bool sym = !barrier && model::symmetric_eligible(c.kind) && symmetric_buffer(c.comm, c.buffer) &&
                     (c.buffer2 < 0 || symmetric_buffer(c.comm, c.buffer2));
    auto& m = member(c.comm);
    const uint32_t k = m.dev_issued++;
    auto& cs = st_.comms[static_cast<size_t>(c.comm)];
    const size_t idx = k - cs.dev_base;
    const uint64_t count = effective_count(c);
    if (idx < cs.dev_open.size()) {
      const auto& first = cs.dev_open[idx];
      const Call& fc = w_.calls[first.call];
      std::string diff = difference(fc, first.count, c, count);
      if (!diff.empty())
        return fail(Verdict::Mismatch, c,
                    "device slot " + std::to_string(k) + " of " + w_.comm_name(c.comm) +
                        " is filled by different calls: " + diff + " (rank " + std::to_string(fc.rank) + " " +
                        sem_.call_ref(fc.id) + ", rank " + std::to_string(r_) + " " + sem_.call_ref(c.id) + ")");
      if (first.symmetric != static_cast<uint8_t>(sym)) {
        const int sym_rank = first.symmetric ? fc.rank : r_;
        const int reg_rank = first.symmetric ? r_ : fc.rank;
        return fail(Verdict::DivergentKernel, c,
                    "device slot " + std::to_string(k) + " of " + w_.comm_name(c.comm) + ": rank " +
                        std::to_string(sym_rank) + " runs a symmetric kernel (its buffer is in a symmetric window on " +
                        w_.comm_name(c.comm) + ") and rank " + std::to_string(reg_rank) + " a regular one");
      }
      if (r_ < fc.rank) cs.dev_open[idx].call = static_cast<uint32_t>(c.id);
    } else {
      cs.dev_open.push_back(OpenSlot{static_cast<uint32_t>(c.id), count, static_cast<uint8_t>(sym), {}});
    }
    // Every member issued this slot: nothing left to compare against.
    const auto& comm = w_.comms[static_cast<size_t>(c.comm)];
    while (!cs.dev_open.empty()) {
      bool all = std::all_of(comm.members.begin(), comm.members.end(), [&](int mr) {
        return st_.ranks[static_cast<size_t>(mr)]
                   .members[static_cast<size_t>(sem_.local_index(mr, c.comm))]
                   .dev_issued > cs.dev_base;
      });
      if (!all) break;
      cs.dev_open.erase(cs.dev_open.begin());
      ++cs.dev_base;
    }
    if (!sym) connect(c);
    DevicePart p;
    p.call = static_cast<uint32_t>(c.id);
    p.comm = static_cast<uint16_t>(c.comm);
    p.kind = PartKind::Collective;
    p.symmetric = static_cast<uint8_t>(sym);
    p.slot = k;
    add_part(c.stream, p);
    if (barrier)
      waits_.push_back(Wait{WaitKind::DevDone, 0, static_cast<uint16_t>(c.comm), k, 0, static_cast<uint32_t>(c.id)});
    return true;
  }

  P2pState& p2p(int comm, int peer) {
    P2pState key{static_cast<uint16_t>(comm), static_cast<uint16_t>(peer), 0, 0, 0};
    auto less = [](const P2pState& a, const P2pState& b) {
      return std::tie(a.comm, a.peer) < std::tie(b.comm, b.peer);
    };
    auto it = std::lower_bound(rs_.p2p.begin(), rs_.p2p.end(), key, less);
    if (it == rs_.p2p.end() || it->comm != key.comm || it->peer != key.peer) it = rs_.p2p.insert(it, key);
    return *it;
  }

  // The peer's matching call of pair `idx` (its send to us if we receive, and the reverse) and the
  // count it was issued with, if the peer issued it already.
  std::optional<std::pair<int, uint64_t>> peer_call(const Call& c, uint32_t idx) const {
    const auto& peer = st_.ranks[static_cast<size_t>(c.peer)];
    const PartKind want = c.kind == OpKind::Send ? PartKind::Recv : PartKind::Send;
    for (const auto& st : peer.streams)
      for (const auto& e : st)
        for (const auto& p : e.parts)
          if (p.kind == want && p.comm == c.comm && p.peer == r_ && p.slot == idx)
            return std::make_pair(static_cast<int>(p.call), p.count);
    const uint8_t dir = c.kind == OpKind::Send ? 1 : 0;
    for (const auto& th : peer.threads)
      for (const auto& wt : th.waits)
        if (wt.kind == WaitKind::P2pHost && wt.dir == dir && wt.comm == c.comm && wt.a == static_cast<uint32_t>(r_) &&
            wt.b == idx)
          return std::make_pair(static_cast<int>(wt.call), wt.count);
    return std::nullopt;
  }

  // Send and recv of one pair must agree on count and dtype.
  bool check_pair(const Call& c, uint32_t idx) {
    auto other = peer_call(c, idx);
    if (!other) return true;
    const Call& oc = w_.calls[static_cast<size_t>(other->first)];
    const uint64_t mine = effective_count(c);
    const uint64_t theirs = other->second;
    std::string diff;
    if (mine != theirs)
      diff = "count " + std::to_string(theirs) + " and " + std::to_string(mine);
    else if (c.dtype != oc.dtype)
      diff = "dtype " + w_.dtypes[static_cast<size_t>(oc.dtype)] + " and " + w_.dtypes[static_cast<size_t>(c.dtype)];
    if (diff.empty()) return true;
    return fail(Verdict::Mismatch, c,
                "send/recv pair " + std::to_string(idx) + " between ranks " + std::to_string(c.peer) + " and " +
                    std::to_string(r_) + " on " + w_.comm_name(c.comm) + " differs: " + diff + " (" +
                    sem_.call_ref(oc.id) + ", " + sem_.call_ref(c.id) + ")");
  }

  bool device_pair(const Call& c) {
    auto& pp = p2p(c.comm, c.peer);
    const uint32_t idx = c.kind == OpKind::Send ? pp.sends++ : pp.recvs++;
    if (!check_pair(c, idx)) return false;
    const bool needs_connect = w_.knobs.runtime_connect && !pp.connect_reached;
    pp.connect_reached = 1;
    if (needs_connect)
      waits_.push_back(Wait{WaitKind::P2pConnect, 0, static_cast<uint16_t>(c.comm), static_cast<uint32_t>(c.peer), 0,
                            static_cast<uint32_t>(c.id)});
    DevicePart p;
    p.call = static_cast<uint32_t>(c.id);
    p.comm = static_cast<uint16_t>(c.comm);
    p.kind = c.kind == OpKind::Send ? PartKind::Send : PartKind::Recv;
    p.peer = static_cast<uint16_t>(c.peer);
    p.slot = idx;
    p.count = effective_count(c);
    add_part(c.stream, p);
    return true;
  }

  bool host_pair(const Call& c) {
    auto& pp = p2p(c.comm, c.peer);
    const bool send = c.kind == OpKind::Send;
    const uint32_t idx = send ? pp.sends++ : pp.recvs++;
    if (!check_pair(c, idx)) return false;
    waits_.push_back(Wait{WaitKind::P2pHost, static_cast<uint8_t>(send ? 0 : 1), static_cast<uint16_t>(c.comm),
                          static_cast<uint32_t>(c.peer), idx, static_cast<uint32_t>(c.id), effective_count(c)});
    return true;
  }

  void add_part(int stream, const DevicePart& p) {
    for (auto& [s, parts] : parts_)
      if (s == stream) {
        parts.push_back(p);
        return;
      }
    parts_.emplace_back(stream, std::vector<DevicePart>{p});
  }

  void abort_comm(int comm) {
    member(comm).flags |= kAborted;
    for (auto& st : rs_.streams) {
      for (auto& e : st)
        e.parts.erase(
            std::remove_if(e.parts.begin(), e.parts.end(), [&](const DevicePart& p) { return p.comm == comm; }),
            e.parts.end());
      st.erase(std::remove_if(st.begin(), st.end(), [](const StreamEntry& e) { return e.parts.empty(); }), st.end());
    }
    for (auto& th : rs_.threads)
      th.waits.erase(std::remove_if(th.waits.begin(), th.waits.end(), [&](const Wait& wt) { return wt.comm == comm; }),
                     th.waits.end());
  }

  const Semantics& sem_;
  const model::World& w_;
  State& st_;
  int r_;
  int t_;
  RankState& rs_;
  std::vector<std::pair<int, std::vector<DevicePart>>> parts_;  // per stream, in issue order
  std::vector<Wait> waits_;
};

// ---------------------------------------------------------------------------------------------

namespace {
// Calls whose effect reads or removes the rank's pending device work (see IndependenceInfo).
bool reads_device(const Call& c, Profile profile) {
  switch (c.kind) {
    case OpKind::Free:
    case OpKind::CudaFree:
    case OpKind::Abort:
      return true;
    case OpKind::Deregister:
      return profile == Profile::Nccl;
    default:
      return false;
  }
}
}  // namespace

Semantics::Semantics(const model::World& world) : world_(world), control_(compile_control(world)) {
  local_.assign(static_cast<size_t>(world.ranks), std::vector<int>(world.comms.size(), -1));
  member_comms_.resize(static_cast<size_t>(world.ranks));
  for (const auto& c : world.comms)
    for (int m : c.members) {
      local_[static_cast<size_t>(m)][static_cast<size_t>(c.id)] =
          static_cast<int>(member_comms_[static_cast<size_t>(m)].size());
      member_comms_[static_cast<size_t>(m)].push_back(c.id);
    }
  // Edges always lead to lower node numbers (the automata are built backwards), so one pass upwards
  // sees every target before its source.
  reads_device_ahead_.assign(control_.nodes.size(), 0);
  for (size_t n = 0; n < control_.nodes.size(); ++n)
    for (const auto& e : control_.nodes[n].edges) {
      bool here = false;
      if (e.kind == ControlEdge::Kind::Call)
        here = reads_device(world_.calls[static_cast<size_t>(e.call)], world_.knobs.profile);
      if (e.kind == ControlEdge::Kind::Group)
        for (int c : control_.groups[static_cast<size_t>(e.group)])
          here = here || reads_device(world_.calls[static_cast<size_t>(c)], world_.knobs.profile);
      if (static_cast<size_t>(e.target) >= n) throw std::logic_error("control edge does not lead to a lower node");
      if (here || reads_device_ahead_[static_cast<size_t>(e.target)]) reads_device_ahead_[n] = 1;
    }
}

bool Semantics::thread_live(const State& s, int rank, int thread) const {
  const int32_t node = s.ranks[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)].node;
  return node >= 0 && node != control_.threads[static_cast<size_t>(rank)][static_cast<size_t>(thread)].end;
}

bool Semantics::step_reads_device(const Step& step) const {
  for (int c : step_calls(step))
    if (reads_device(world_.calls[static_cast<size_t>(c)], world_.knobs.profile)) return true;
  return false;
}

bool Semantics::has_pending_device_work(const State& s, int rank) const {
  return !streams_empty(s.ranks[static_cast<size_t>(rank)]);
}

bool Semantics::may_read_device(const State& s, int rank) const {
  const auto& rs = s.ranks[static_cast<size_t>(rank)];
  for (size_t t = 0; t < rs.threads.size(); ++t) {
    int32_t node = rs.threads[t].node;
    if (node < 0) node = control_.threads[static_cast<size_t>(rank)][t].entry;  // not started yet
    if (reads_device_ahead_[static_cast<size_t>(node)]) return true;
  }
  return false;
}

std::vector<int> Semantics::completion_ranks(const Step& step) const {
  if (step.kind == StepKind::Complete) return world_.comms[step.comm].members;
  if (step.kind == StepKind::CompletePair) return {step.rank, step.peer};
  return {};
}

State Semantics::initial() const {
  State s;
  s.ranks.resize(static_cast<size_t>(world_.ranks));
  for (int r = 0; r < world_.ranks; ++r) {
    auto& rs = s.ranks[static_cast<size_t>(r)];
    const auto& threads = control_.threads[static_cast<size_t>(r)];
    rs.threads.resize(threads.size());
    rs.threads[0].node = threads[0].entry;
    rs.streams.resize(world_.streams.size());
    for (int c : member_comms_[static_cast<size_t>(r)]) {
      MemberState m;
      if (!world_.comms[static_cast<size_t>(c)].uninit) m.flags = kCreated;
      rs.members.push_back(m);
    }
    rs.buffers.resize(world_.buffers.size());
  }
  s.comms.resize(world_.comms.size());
  return s;
}

bool Semantics::host_slot_complete(const State& s, int comm, uint32_t slot) const {
  return s.comms[static_cast<size_t>(comm)].host_base > slot;
}

bool Semantics::connect_complete(const State& s, int comm) const {
  for (int m : world_.comms[static_cast<size_t>(comm)].members)
    if (!(s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, comm))].flags & kConnectReached))
      return false;
  return true;
}

static const P2pState* find_p2p(const RankState& rs, int comm, int peer) {
  for (const auto& p : rs.p2p)
    if (p.comm == comm && p.peer == peer) return &p;
  return nullptr;
}

bool Semantics::wait_holds(const State& s, int rank, const Wait& w) const {
  const auto& rs = s.ranks[static_cast<size_t>(rank)];
  switch (w.kind) {
    case WaitKind::HostSlot:
      return host_slot_complete(s, w.comm, w.a);
    case WaitKind::Connect:
      return connect_complete(s, w.comm);
    case WaitKind::P2pConnect: {
      const P2pState* other = find_p2p(s.ranks[w.a], w.comm, rank);
      return other && other->connect_reached;
    }
    case WaitKind::DevDone: {
      for (const auto& st : rs.streams)
        for (const auto& e : st)
          for (const auto& p : e.parts)
            if (!p.done && p.kind == PartKind::Collective && p.comm == w.comm && p.slot == w.a) return false;
      return true;
    }
    case WaitKind::P2pHost: {
      const P2pState* other = find_p2p(s.ranks[w.a], w.comm, rank);
      if (!other) return false;
      return w.dir == 0 ? other->recvs > w.b : other->sends > w.b;
    }
    case WaitKind::Teardown:
      for (int m : world_.comms[w.comm].members)
        if (!(s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, w.comm))].flags &
              (kDestroyed | kAborted)))
          return false;
      return true;
  }
  return false;
}

bool Semantics::waits_hold(const State& s, int rank, const ThreadState& thread) const {
  return std::all_of(thread.waits.begin(), thread.waits.end(), [&](const Wait& w) { return wait_holds(s, rank, w); });
}

Semantics::NonblockingWait Semantics::nonblocking_wait(const State& s, int rank, const Call& c) const {
  // ncclCommAbort is the way out of an operation in progress: it never waits.
  if (c.comm < 0 || c.kind == OpKind::Abort || local_index(rank, c.comm) < 0 ||
      world_.comms[static_cast<size_t>(c.comm)].mode != model::CommMode::Nonblocking)
    return {};
  const auto& m = s.ranks[static_cast<size_t>(rank)].members[static_cast<size_t>(local_index(rank, c.comm))];
  if (m.host_issued > 0 && !host_slot_complete(s, c.comm, m.host_issued - 1))
    return {NonblockingWait::HostSlot, m.host_issued - 1};
  if ((m.flags & kConnectReached) && world_.knobs.runtime_connect && !connect_complete(s, c.comm))
    return {NonblockingWait::Connect, 0};
  return {};
}

bool Semantics::guard_holds(const State& s, int rank, const Call& c, std::string* why) const {
  const auto& rs = s.ranks[static_cast<size_t>(rank)];
  switch (const NonblockingWait nb = nonblocking_wait(s, rank, c); nb.kind) {
    case NonblockingWait::HostSlot:
      if (why)
        *why = "waits for its previous call on nonblocking " + world_.comm_name(c.comm) + " (host slot " +
               std::to_string(nb.slot) + ") to complete";
      return false;
    case NonblockingWait::Connect:
      if (why) *why = "waits for the connect of nonblocking " + world_.comm_name(c.comm) + " to complete";
      return false;
    case NonblockingWait::None:
      break;
  }
  switch (model::op_class(c.kind, world_.knobs.profile)) {
    case OpClass::DeviceSync:
    case OpClass::LocalAfterSync: {
      bool ok = true;
      std::string what;
      if (c.kind == OpKind::SyncStream) {
        ok = rs.streams[static_cast<size_t>(c.stream)].empty();
        what = "stream " + world_.streams[static_cast<size_t>(c.stream)] + " to drain";
      } else if (c.kind == OpKind::Finalize || c.kind == OpKind::Destroy) {
        ok = !has_part(rs, c.comm);
        what = "its device work on " + world_.comm_name(c.comm) + " to drain";
      } else {
        ok = streams_empty(rs);
        what = "every stream of the device to drain";
      }
      if (!ok && why) *why = "waits for " + what;
      return ok;
    }
    default:
      return true;
  }
}

void Semantics::successors(const State& s, std::vector<Transition>& out) const {
  for (int r = 0; r < world_.ranks; ++r) {
    const auto& rs = s.ranks[static_cast<size_t>(r)];
    for (size_t t = 0; t < rs.threads.size(); ++t) {
      const ThreadState& ts = rs.threads[t];
      if (ts.node < 0) continue;
      const ControlNode& node = control_.nodes[static_cast<size_t>(ts.node)];
      if (node.edges.empty() || !waits_hold(s, r, ts)) continue;
      // Search order (the set of successors is the same): rank r tries the alternatives of a choice
      // starting at r mod n, so that a depth-first search meets ranks that chose differently (the
      // cross orders that deadlock) early instead of after every rank agreed.
      const size_t n_edges = node.edges.size();
      const bool choice = node.edges.front().kind == ControlEdge::Kind::Choice;
      const size_t first = choice ? static_cast<size_t>(r) % n_edges : 0;
      for (size_t i = 0; i < n_edges; ++i) {
        const size_t e = (first + i) % n_edges;
        const ControlEdge& edge = node.edges[e];
        Step step;
        step.rank = static_cast<uint16_t>(r);
        step.thread = static_cast<uint16_t>(t);
        step.edge = static_cast<uint16_t>(e);
        std::vector<int32_t> single;
        const std::vector<int32_t>* calls = nullptr;
        switch (edge.kind) {
          case ControlEdge::Kind::Choice:
            step.kind = StepKind::Choose;
            break;
          case ControlEdge::Kind::Spawn:
            step.kind = StepKind::Spawn;
            step.call = edge.thread;
            break;
          case ControlEdge::Kind::Call:
            step.kind = StepKind::Issue;
            step.call = edge.call;
            single.push_back(edge.call);
            calls = &single;
            break;
          case ControlEdge::Kind::Group:
            step.kind = StepKind::IssueGroup;
            step.call = edge.group;
            calls = &control_.groups[static_cast<size_t>(edge.group)];
            break;
        }
        if (calls) {
          bool ok = std::all_of(calls->begin(), calls->end(),
                                [&](int32_t c) { return guard_holds(s, r, world_.calls[static_cast<size_t>(c)]); });
          if (!ok) continue;
        }
        Transition tr{step, s, std::nullopt};
        ThreadState& nts = tr.next.ranks[static_cast<size_t>(r)].threads[t];
        nts.waits.clear();
        nts.node = edge.target;
        if (edge.kind == ControlEdge::Kind::Spawn)
          tr.next.ranks[static_cast<size_t>(r)].threads[static_cast<size_t>(edge.thread)].node =
              control_.threads[static_cast<size_t>(r)][static_cast<size_t>(edge.thread)].entry;
        if (calls) {
          Issuer issuer(*this, tr.next, r, static_cast<int>(t));
          for (int32_t c : *calls)
            if (!issuer.issue(world_.calls[static_cast<size_t>(c)])) break;
          issuer.finish(tr.next.ranks[static_cast<size_t>(r)].threads[t]);
          tr.violation = std::move(issuer.violation_);
        }
        out.push_back(std::move(tr));
      }
    }
  }
  device_successors(s, out);
}

std::vector<const StreamEntry*> Semantics::running_entries(const RankState& rs) const {
  std::vector<const StreamEntry*> out;
  if (world_.knobs.stream_progress == model::StreamProgress::Serialized) {
    uint32_t min_seq = UINT32_MAX;
    for (const auto& st : rs.streams)
      if (!st.empty()) min_seq = std::min(min_seq, st.front().seq);
    for (const auto& st : rs.streams)
      if (!st.empty() && st.front().seq == min_seq) out.push_back(&st.front());
  } else {
    for (const auto& st : rs.streams)
      if (!st.empty()) out.push_back(&st.front());
  }
  return out;
}

bool Semantics::running_part(const State& s, int rank, PartKind kind, int comm, uint32_t slot, int peer) const {
  for (const StreamEntry* e : running_entries(s.ranks[static_cast<size_t>(rank)]))
    for (const auto& p : e->parts)
      if (!p.done && p.kind == kind && p.comm == comm && p.slot == slot && (peer < 0 || p.peer == peer)) return true;
  return false;
}

void Semantics::device_successors(const State& s, std::vector<Transition>& out) const {
  for (int r = 0; r < world_.ranks; ++r) {
    for (const StreamEntry* e : running_entries(s.ranks[static_cast<size_t>(r)])) {
      for (const auto& p : e->parts) {
        if (p.done) continue;
        Step step;
        step.rank = static_cast<uint16_t>(r);
        step.comm = p.comm;
        step.slot = p.slot;
        if (p.kind == PartKind::Collective) {
          const auto& members = world_.comms[p.comm].members;
          if (members.front() != r) continue;
          bool all = std::all_of(members.begin(), members.end(),
                                 [&](int m) { return running_part(s, m, PartKind::Collective, p.comm, p.slot, -1); });
          if (!all) continue;
          step.kind = StepKind::Complete;
          Transition tr{step, s, std::nullopt};
          for (int m : members) complete_part(tr.next, m, PartKind::Collective, p.comm, p.slot, -1);
          out.push_back(std::move(tr));
        } else if (p.kind == PartKind::Send) {
          if (!running_part(s, p.peer, PartKind::Recv, p.comm, p.slot, r)) continue;
          step.kind = StepKind::CompletePair;
          step.peer = p.peer;
          Transition tr{step, s, std::nullopt};
          complete_part(tr.next, r, PartKind::Send, p.comm, p.slot, p.peer);
          complete_part(tr.next, p.peer, PartKind::Recv, p.comm, p.slot, r);
          out.push_back(std::move(tr));
        }
      }
    }
  }
}

void Semantics::complete_part(State& s, int rank, PartKind kind, int comm, uint32_t slot, int peer) const {
  auto& rs = s.ranks[static_cast<size_t>(rank)];
  for (auto& st : rs.streams) {
    if (st.empty()) continue;
    for (auto& p : st.front().parts)
      if (!p.done && p.kind == kind && p.comm == comm && p.slot == slot && (peer < 0 || p.peer == peer)) {
        p.done = 1;
        const auto& parts = st.front().parts;
        if (std::all_of(parts.begin(), parts.end(), [](const DevicePart& q) { return q.done; })) st.erase(st.begin());
        return;
      }
  }
}

bool Semantics::is_final(const State& s) const {
  for (int r = 0; r < world_.ranks; ++r) {
    const auto& rs = s.ranks[static_cast<size_t>(r)];
    for (size_t t = 0; t < rs.threads.size(); ++t) {
      const auto& ts = rs.threads[t];
      if (ts.node != control_.threads[static_cast<size_t>(r)][t].end) return false;
      if (!waits_hold(s, r, ts)) return false;
    }
    if (!streams_empty(rs)) return false;
  }
  // A host slot left open is a collective that never completes (a nonblocking call in progress),
  // unless every member that joined it aborted the comm.
  for (size_t c = 0; c < s.comms.size(); ++c) {
    const auto& cs = s.comms[c];
    if (cs.host_open.empty()) continue;
    for (int m : world_.comms[c].members) {
      const auto& ms =
          s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, static_cast<int>(c)))];
      if (ms.host_issued > cs.host_base && !(ms.flags & kAborted)) return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// Reports

std::string Semantics::call_ref(int call) const {
  const Call& c = world_.calls[static_cast<size_t>(call)];
  return "`" + c.text + "` (" + c.loc.file_name() + ":" + std::to_string(c.loc.line) + ")";
}

std::vector<int> Semantics::step_calls(const Step& step) const {
  if (step.kind == StepKind::Issue) return {step.call};
  if (step.kind == StepKind::IssueGroup) {
    const auto& g = control_.groups[static_cast<size_t>(step.call)];
    return {g.begin(), g.end()};
  }
  return {};
}

std::string Semantics::describe_step(const Step& step) const {
  std::ostringstream out;
  auto thread_name = [&]() { return world_.programs[step.rank].threads[step.thread].name; };
  switch (step.kind) {
    case StepKind::Choose:
      out << "rank " << step.rank << " " << thread_name() << ": chooses an order/alternative";
      break;
    case StepKind::Spawn:
      out << "rank " << step.rank << " " << thread_name() << ": starts thread "
          << world_.programs[step.rank].threads[static_cast<size_t>(step.call)].name;
      break;
    case StepKind::Issue:
      out << "rank " << step.rank << " " << thread_name() << ": " << call_ref(step.call);
      break;
    case StepKind::IssueGroup: {
      out << "rank " << step.rank << " " << thread_name() << ": group {";
      bool first = true;
      for (int c : step_calls(step)) {
        out << (first ? " " : "; ") << world_.calls[static_cast<size_t>(c)].text;
        first = false;
      }
      out << " }";
      break;
    }
    case StepKind::Complete:
      out << "device: " << world_.comm_name(step.comm) << " device slot " << step.slot << " completes on ranks "
          << model::rank_list_text(world_.comms[step.comm].members);
      break;
    case StepKind::CompletePair:
      out << "device: send/recv " << step.slot << " on " << world_.comm_name(step.comm) << " from rank " << step.rank
          << " to rank " << step.peer << " completes";
      break;
  }
  return out.str();
}

std::string Semantics::where_is(const State& s, int rank) const {
  const auto& rs = s.ranks[static_cast<size_t>(rank)];
  std::vector<std::string> parts;
  for (size_t t = 0; t < rs.threads.size(); ++t) {
    const auto& ts = rs.threads[t];
    for (const auto& w : ts.waits)
      if (!wait_holds(s, rank, w)) {
        parts.push_back("in " + call_ref(static_cast<int>(w.call)));
        break;
      }
  }
  if (parts.empty()) {
    bool done = true;
    for (size_t t = 0; t < rs.threads.size(); ++t)
      if (rs.threads[t].node != control_.threads[static_cast<size_t>(rank)][t].end) done = false;
    return done ? "finished" : "running";
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string Semantics::describe_wait(const State& s, int /*rank*/, const Wait& w) const {
  const auto& comm = world_.comms[w.comm];
  std::string out;
  std::vector<std::string> missing;
  switch (w.kind) {
    case WaitKind::HostSlot:
      out = "waits for host slot " + std::to_string(w.a) + " of " + comm.name;
      for (int m : comm.members) {
        const auto& ms = s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, w.comm))];
        if (ms.host_issued <= w.a) missing.push_back("rank " + std::to_string(m) + " (" + where_is(s, m) + ")");
      }
      break;
    case WaitKind::Connect:
      out = "waits in the runtime connect of " + comm.name + " (its first non-symmetric collective)";
      for (int m : comm.members) {
        const auto& ms = s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, w.comm))];
        if (!(ms.flags & kConnectReached)) missing.push_back("rank " + std::to_string(m) + " (" + where_is(s, m) + ")");
      }
      break;
    case WaitKind::P2pConnect:
      out = "waits in the runtime connect with rank " + std::to_string(w.a) + " on " + comm.name;
      missing.push_back("rank " + std::to_string(w.a) + " (" + where_is(s, static_cast<int>(w.a)) + ")");
      break;
    case WaitKind::DevDone:
      out = "waits for its device slot " + std::to_string(w.a) + " of " + comm.name + " to complete";
      break;
    case WaitKind::P2pHost:
      out = std::string("waits for the matching ") + (w.dir == 0 ? "recv" : "send") + " of rank " + std::to_string(w.a);
      missing.push_back("rank " + std::to_string(w.a) + " (" + where_is(s, static_cast<int>(w.a)) + ")");
      break;
    case WaitKind::Teardown:
      out = "waits for every member to destroy " + comm.name + " (it is connected)";
      for (int m : comm.members) {
        const auto& ms = s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, w.comm))];
        if (!(ms.flags & (kDestroyed | kAborted)))
          missing.push_back("rank " + std::to_string(m) + " (" + where_is(s, m) + ")");
      }
      break;
  }
  if (!missing.empty()) {
    out += "; not there: ";
    for (size_t i = 0; i < missing.size(); ++i) out += (i ? ", " : "") + missing[i];
  }
  return out;
}

std::vector<BlockedCall> Semantics::blocked(const State& s) const {
  std::vector<BlockedCall> out;
  for (int r = 0; r < world_.ranks; ++r) {
    const auto& rs = s.ranks[static_cast<size_t>(r)];
    for (size_t t = 0; t < rs.threads.size(); ++t) {
      const auto& ts = rs.threads[t];
      BlockedCall b;
      b.rank = r;
      b.thread = static_cast<int>(t);
      if (ts.node < 0) {
        b.reason = "not started";
        out.push_back(b);
        continue;
      }
      bool waiting = false;
      for (const auto& w : ts.waits)
        if (!wait_holds(s, r, w)) {
          b.call = static_cast<int>(w.call);
          b.reason += (waiting ? "; " : "") + describe_wait(s, r, w);
          waiting = true;
        }
      if (!waiting) {
        const auto& node = control_.nodes[static_cast<size_t>(ts.node)];
        if (node.edges.empty()) {
          b.finished = true;
          b.reason = "finished";
        } else {
          for (const auto& e : node.edges) {
            if (e.kind != ControlEdge::Kind::Call) continue;
            std::string why;
            if (!guard_holds(s, r, world_.calls[static_cast<size_t>(e.call)], &why)) {
              b.call = e.call;
              b.reason = why;
              break;
            }
          }
          if (b.reason.empty()) b.reason = "can proceed";
        }
      }
      out.push_back(b);
    }
    auto running = running_entries(rs);
    for (size_t st = 0; st < rs.streams.size(); ++st) {
      const auto& stream = rs.streams[st];
      if (stream.empty()) continue;
      const StreamEntry& head = stream.front();
      BlockedCall b;
      b.rank = r;
      b.stream = static_cast<int>(st);
      bool is_running = std::find(running.begin(), running.end(), &head) != running.end();
      for (const auto& p : head.parts) {
        if (p.done) continue;
        b.call = static_cast<int>(p.call);
        std::string what = call_ref(static_cast<int>(p.call));
        if (!is_running) {
          b.reason = what + " queued behind another stream's older op (stream_progress = serialized)";
          break;
        }
        std::vector<std::string> missing;
        if (p.kind == PartKind::Collective) {
          for (int m : world_.comms[p.comm].members)
            if (m != r && !running_part(s, m, PartKind::Collective, p.comm, p.slot, -1)) {
              const auto& ms = s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, p.comm))];
              missing.push_back("rank " + std::to_string(m) +
                                ((ms.flags & kAborted)    ? " (aborted the comm)"
                                 : ms.dev_issued > p.slot ? " (its op is queued behind another on its stream)"
                                                          : " (not issued: " + where_is(s, m) + ")"));
            }
          b.reason = what + " device slot " + std::to_string(p.slot) + " of " + world_.comm_name(p.comm) + " running";
        } else {
          b.reason = what + " running";
          PartKind other = p.kind == PartKind::Send ? PartKind::Recv : PartKind::Send;
          if (!running_part(s, p.peer, other, p.comm, p.slot, r))
            missing.push_back("rank " + std::to_string(p.peer) + " (" + where_is(s, p.peer) + ")");
        }
        if (!missing.empty()) {
          b.reason += ", waits for ";
          for (size_t i = 0; i < missing.size(); ++i) b.reason += (i ? ", " : "") + missing[i];
        }
        break;
      }
      if (stream.size() > 1) b.reason += " (" + std::to_string(stream.size() - 1) + " more queued behind it)";
      out.push_back(b);
    }
  }
  return out;
}

std::vector<WaitDependency> Semantics::wait_dependencies(const State& s) const {
  std::vector<WaitDependency> out;
  auto stream_of = [&](int rank, PartKind kind, int comm, uint32_t slot, int peer) {
    const auto& rs = s.ranks[static_cast<size_t>(rank)];
    for (size_t st = 0; st < rs.streams.size(); ++st)
      for (const auto& e : rs.streams[st])
        for (const auto& p : e.parts)
          if (!p.done && p.kind == kind && p.comm == comm && p.slot == slot && (peer < 0 || p.peer == peer))
            return static_cast<int>(st);
    return -1;
  };
  auto member = [&](int rank, int comm) -> const MemberState& {
    return s.ranks[static_cast<size_t>(rank)].members[static_cast<size_t>(local_index(rank, comm))];
  };
  auto on_host_slot = [&](WaitDependency d, int comm, uint32_t slot) {
    d.comm = comm;
    d.slot = static_cast<int>(slot);
    d.label = "host slot " + std::to_string(slot) + " of " + world_.comm_name(comm);
    for (int m : world_.comms[static_cast<size_t>(comm)].members)
      if (member(m, comm).host_issued <= slot) {
        d.target_rank = m;
        out.push_back(d);
      }
  };
  auto on_connect = [&](WaitDependency d, int comm) {
    d.comm = comm;
    d.label = "connect of " + world_.comm_name(comm);
    for (int m : world_.comms[static_cast<size_t>(comm)].members)
      if (!(member(m, comm).flags & kConnectReached)) {
        d.target_rank = m;
        out.push_back(d);
      }
  };
  auto on_own_streams = [&](WaitDependency d, int rank, int only_stream, int only_comm, const std::string& label) {
    const auto& rs = s.ranks[static_cast<size_t>(rank)];
    d.label = label;
    d.target_rank = rank;
    for (size_t st = 0; st < rs.streams.size(); ++st) {
      if (rs.streams[st].empty() || (only_stream >= 0 && static_cast<int>(st) != only_stream)) continue;
      if (only_comm >= 0) {
        bool has = false;
        for (const auto& e : rs.streams[st])
          for (const auto& p : e.parts) has = has || (!p.done && p.comm == only_comm);
        if (!has) continue;
      }
      d.target_stream = static_cast<int>(st);
      out.push_back(d);
    }
  };
  for (int r = 0; r < world_.ranks; ++r) {
    const auto& rs = s.ranks[static_cast<size_t>(r)];
    for (size_t t = 0; t < rs.threads.size(); ++t) {
      const auto& ts = rs.threads[t];
      if (ts.node < 0) continue;
      WaitDependency base;
      base.rank = r;
      base.thread = static_cast<int>(t);
      bool waiting = false;
      for (const auto& w : ts.waits) {
        if (wait_holds(s, r, w)) continue;
        waiting = true;
        WaitDependency d = base;
        d.call = static_cast<int>(w.call);
        switch (w.kind) {
          case WaitKind::HostSlot:
            on_host_slot(d, w.comm, w.a);
            break;
          case WaitKind::Connect:
            on_connect(d, w.comm);
            break;
          case WaitKind::P2pConnect:
          case WaitKind::P2pHost:
            d.comm = w.comm;
            d.target_rank = static_cast<int>(w.a);
            d.label = (w.kind == WaitKind::P2pConnect ? "p2p connect on " : "send/recv on ") + world_.comm_name(w.comm);
            out.push_back(d);
            break;
          case WaitKind::Teardown:
            d.comm = w.comm;
            d.label = "destroy of " + world_.comm_name(w.comm);
            for (int m : world_.comms[w.comm].members)
              if (!(member(m, w.comm).flags & (kDestroyed | kAborted))) {
                d.target_rank = m;
                out.push_back(d);
              }
            break;
          case WaitKind::DevDone:
            d.comm = w.comm;
            d.slot = static_cast<int>(w.a);
            on_own_streams(d, r, stream_of(r, PartKind::Collective, w.comm, w.a, -1), -1,
                           "its device slot " + std::to_string(w.a) + " of " + world_.comm_name(w.comm));
            break;
        }
      }
      if (waiting) continue;
      const auto& node = control_.nodes[static_cast<size_t>(ts.node)];
      for (const auto& e : node.edges) {
        if (e.kind != ControlEdge::Kind::Call) continue;
        const Call& c = world_.calls[static_cast<size_t>(e.call)];
        if (guard_holds(s, r, c)) continue;
        WaitDependency d = base;
        d.call = e.call;
        const NonblockingWait nb = nonblocking_wait(s, r, c);
        if (nb.kind == NonblockingWait::HostSlot) {
          on_host_slot(d, c.comm, nb.slot);
          continue;
        }
        if (nb.kind == NonblockingWait::Connect) {
          on_connect(d, c.comm);
          continue;
        }
        if (c.kind == OpKind::SyncStream)
          on_own_streams(d, r, c.stream, -1, "stream " + world_.streams[static_cast<size_t>(c.stream)]);
        else if (c.kind == OpKind::Finalize || c.kind == OpKind::Destroy)
          on_own_streams(d, r, -1, c.comm, "its work on " + world_.comm_name(c.comm));
        else
          on_own_streams(d, r, -1, -1, "the device");
      }
    }
    auto running = running_entries(rs);
    for (size_t st = 0; st < rs.streams.size(); ++st) {
      if (rs.streams[st].empty()) continue;
      const StreamEntry& head = rs.streams[st].front();
      WaitDependency base;
      base.rank = r;
      base.stream = static_cast<int>(st);
      if (std::find(running.begin(), running.end(), &head) == running.end()) {
        WaitDependency d = base;
        d.call = static_cast<int>(head.parts.front().call);
        for (const StreamEntry* e : running)
          for (size_t other = 0; other < rs.streams.size(); ++other)
            if (!rs.streams[other].empty() && &rs.streams[other].front() == e) {
              d.target_rank = r;
              d.target_stream = static_cast<int>(other);
              d.label = "older op (serialized streams)";
              out.push_back(d);
            }
        continue;
      }
      for (const auto& p : head.parts) {
        if (p.done) continue;
        WaitDependency d = base;
        d.call = static_cast<int>(p.call);
        d.comm = p.comm;
        d.slot = static_cast<int>(p.slot);
        if (p.kind == PartKind::Collective) {
          d.label = "device slot " + std::to_string(p.slot) + " of " + world_.comm_name(p.comm);
          for (int m : world_.comms[p.comm].members) {
            if (m == r || running_part(s, m, PartKind::Collective, p.comm, p.slot, -1)) continue;
            d.target_rank = m;
            d.target_stream = stream_of(m, PartKind::Collective, p.comm, p.slot, -1);
            out.push_back(d);
          }
        } else {
          const PartKind other = p.kind == PartKind::Send ? PartKind::Recv : PartKind::Send;
          if (running_part(s, p.peer, other, p.comm, p.slot, r)) continue;
          d.label = "send/recv " + std::to_string(p.slot) + " on " + world_.comm_name(p.comm);
          d.target_rank = p.peer;
          d.target_stream = stream_of(p.peer, other, p.comm, p.slot, r);
          out.push_back(d);
        }
      }
    }
  }
  return out;
}

}  // namespace collmc::checker
