// SEMANTICS.md §2-§3: what each call does to the state. Issuer applies one call (or a group's calls)
// of one host thread to the successor state; step_relation.cpp decides when a call may be issued.
#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>

#include "semantics_internal.h"

namespace collmc::checker {

using model::Call;
using model::OpClass;
using model::OpKind;
using model::Profile;
using model::Verdict;

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
    const bool mpi = w_.profile_of(c) == Profile::Mpi;
    if (!check_threads_in_comm(c, mpi)) return false;
    // Entering MPI moves the messages of the collectives this rank left early (mpi_progress = weak).
    if (mpi && c.comm >= 0) rs_.left_early.clear();
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
          if (alloc_size(c.buffer) == 0) {
            // Up to 2.28.x: returns ncclSuccess at once and joins nothing (calibrated: register_size_zero).
            // From 2.29: ncclInvalidArgument (src/dev_runtime.cc, v2.29.2-1).
            if (w_.knobs.nccl_version < model::kRegisterEmptyIsError) return true;
            return fail(Verdict::UsageError, c,
                        "register of '" + bname(c.buffer) + "' (size 0) on " + w_.comm_name(c.comm) +
                            ": ncclCommWindowRegister returns ncclInvalidArgument from NCCL 2.29");
          }
        }
        add_window(c);
        join_host(c, -1);
        // NCCL 2.31: the comm's RMA setup runs in this registration's group end, after the user's window
        // (one more symmetric window per RMA context, in the same host slot here: every rank registers
        // them alike). One-sided calls issued after the call or group may use it (finish()).
        if (!mpi && w_.knobs.nccl_version >= model::kRmaSetupAtRegister) rma_setup_.push_back(c.comm);
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
        // MPI_Win_free with an epoch still open (MPI 4.1 sec. 12.2.5): checked before the free joins the others.
        if (mpi && !epochs_closed(c, *it, "win_free (MPI_Win_free)")) return false;
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
        // NCCL 2.31+: ncclCommFinalize runs commDestroySync, whose intra-node barrier waits for every
        // member on the host to finalize or destroy the comm (src/init.cc:2936-2961, 2890-2910).
        if (!mpi && w_.knobs.nccl_version >= model::kDestroyBarrier) join_teardown_barrier(c, false);
        return true;
      case OpKind::Destroy: {
        // Measured on 2x H200 (docs/HARDWARE.md): destroying a comm whose connections were set up
        // waits until every member destroys that same comm; a comm never connected is freed locally.
        // SEMANTICS.md §2: the wait holds whatever runtime_connect and comm_mode are. With
        // runtime_connect = off NCCL connects every comm at its creation, so a cold comm waits too:
        // measured on one shared H200 with NCCL 2.30.7 (tests/calibration-probes/
        // destroy_cold_peer_idle_noconnect hangs; docs/HARDWARE.md, 2026-12-02).
        // From NCCL 2.31 the destroy of a comm that was not finalized (nor revoked, which marks it
        // finalized) runs the intra-node barrier of commDestroySync over every member, cold or warm; an
        // abort never joins it (model::kDestroyBarrier; src/init.cc:2890-2910, 3059-3090).
        auto& m = member(c.comm);
        const bool is_connected = connected(c.comm);
        if (!(m.flags & (kDestroyed | kAborted))) ++st_.comms[static_cast<size_t>(c.comm)].torn_down;
        const bool finalized = (m.flags & kFinalized) != 0;
        m.flags |= kDestroyed;
        if (!mpi && w_.knobs.nccl_version >= model::kDestroyBarrier) {
          if (!finalized) {
            join_teardown_barrier(c, true);
          } else if ((m.flags & kTeardownBarrier) &&
                     w_.comms[static_cast<size_t>(c.comm)].mode == model::CommMode::Nonblocking) {
            // A nonblocking finalize returned at once; its barrier runs in the background, and the
            // destroy waits for it (ncclCommDestroy: ncclCommEnsureReady).
            push_teardown_barrier_wait(c);
          }
          return true;
        }
        if (is_connected && !mpi)
          waits_.push_back(Wait{.kind = WaitKind::Teardown, .comm = c.comm, .call = static_cast<uint32_t>(c.id)});
        return true;
      }
      case OpKind::Abort:
        abort_comm(c);
        // Up to 2.23.x an abort waits, as a destroy does, until every other member aborted or destroyed
        // the comm (model::kAbortIsLocal): on the same connected comms the destroy rule holds for.
        if (!mpi && w_.knobs.nccl_version < model::kAbortIsLocal && connected(c.comm))
          waits_.push_back(Wait{.kind = WaitKind::Teardown, .comm = c.comm, .call = static_cast<uint32_t>(c.id)});
        return true;
      case OpKind::Revoke: {
        auto& m = member(c.comm);
        if (m.flags & kRevoked)
          return fail(Verdict::UsageError, c, w_.comm_name(c.comm) + " is already revoked (ncclInvalidArgument)");
        // ncclCommRevoke sets the comm's abort flags (its running kernels exit, as for abort) and marks
        // it finalized; the comm stays a member of its destroy (src/init.cc, v2.28.7-1 ... v2.30.7-1).
        m.flags |= kRevoked | kFinalized;
        sem_.drop_aborted_running(rs_, r_);
        aborted_.emplace_back(c.comm, c.id);
        return true;
      }
      case OpKind::Shrink:
      case OpKind::Grow:
        return create_child(c);
      case OpKind::GrowId:
        ++st_.comms[static_cast<size_t>(c.comm)].grow_ids;
        return true;
      case OpKind::SyncStream:
      case OpKind::SyncDevice:
        return true;  // the guard did the waiting
      case OpKind::Probe:
        // MPI 4.1 sec. 3.8.1: MPI_Probe returns once a message it matches can be received; it takes none.
        waits_.push_back(Wait{.kind = WaitKind::P2pProbe,
                              .dir = static_cast<uint8_t>(c.any_source ? 1 : 2),
                              .comm = c.comm,
                              .peer = c.any_source ? 0 : c.peer,
                              .call = static_cast<uint32_t>(c.id),
                              .tag = wait_tag(c)});
        return true;
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
      case OpKind::PutSignal:
      case OpKind::Signal:
      case OpKind::WaitSignal:
        return one_sided(c);
      case OpKind::StoreSet: {
        // Counted like a barrier arrival, so that sets and arrivals commute; a wait needs a count of one.
        auto& count = st_.store[static_cast<size_t>(c.key)];
        if (count < UINT32_MAX) ++count;
        return true;
      }
      case OpKind::MpiError:  // always carries its usage_error (resolve.cpp): reported above
        return true;
      case OpKind::RmaPut:
      case OpKind::RmaGet:
      case OpKind::RmaAccumulate:
      case OpKind::WinLock:
      case OpKind::WinUnlock:
      case OpKind::WinFlush:
      case OpKind::WinLockAll:
      case OpKind::WinUnlockAll:
      case OpKind::WinFlushAll:
      case OpKind::WinStart:
      case OpKind::WinComplete:
      case OpKind::WinPost:
      case OpKind::WinWait:
      case OpKind::WinFence:
        return window_call(c);
      case OpKind::MpiFinalize:
        // Every epoch of every window this rank still has is closed by now (MPI 4.1 sec. 11.2.2, 12.5).
        for (const WindowState& x : rs_.windows)
          if (w_.comms[static_cast<size_t>(x.comm)].profile == Profile::Mpi && !epochs_closed(c, x, "mpi_finalize"))
            return false;
        return true;
      case OpKind::StoreWait:
      case OpKind::HostBarrier: {
        uint32_t needed = 1;
        if (c.kind == OpKind::HostBarrier) {
          auto& count = st_.store[static_cast<size_t>(c.key)];
          if (count < UINT32_MAX) ++count;
          needed = static_cast<uint32_t>(c.members_view.size());
        }
        waits_.push_back(Wait{.kind = WaitKind::StoreKey,
                              .slot = static_cast<uint32_t>(c.key),
                              .call = static_cast<uint32_t>(c.id),
                              .count = needed});
        return true;
      }
      case OpKind::AllReduce:
      case OpKind::AllGather:
      case OpKind::ReduceScatter:
      case OpKind::Broadcast:
      case OpKind::Reduce:
      case OpKind::AllToAll:
        if (!check_buffer(c, c.buffer) || !check_buffer(c, c.buffer2)) return false;
        if (mpi) {
          join_host(c, -1);
          if (!violation_) leave_rooted_collective(c);
          return !violation_;
        }
        return device_collective(c, false);
    }
    throw std::logic_error("an operation without effects (operations.def has a row call_effects.cpp lacks)");
  }

  // Appends the device entries (one per stream) and the waits of everything issued.
  void finish(ThreadState& thread) {
    // The first one-sided call on a comm registers NCCL's signal window at the group's end, after the
    // group's own window registrations (src/group.cc: regTaskQueue, then rmaCeInitTaskQueue).
    for (const auto& [comm, call] : rma_init_)
      if (!violation_) join_slot(w_.calls[static_cast<size_t>(call)], comm, 0, -1);
    for (int comm : rma_setup_) member(comm).flags |= kRmaReady;
    for (const auto& [comm, peer] : first_pairs_)
      if (!violation_) check_connect_directions(comm, peer);
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
    // An abort returns once this rank's GPU is idle: ncclCommAbort frees the comm's device memory, and
    // the free synchronizes the device, so it waits for every kernel of every comm, not only its own
    // (measured on one shared H200, NCCL 2.30.7: tests/calibration-probes/abort_two_streams and
    // abort_stuck_comm_first hang in their first abort while another comm's kernel is stuck;
    // docs/HARDWARE.md). A group's aborts all took effect above, so aborting the stuck comms together
    // releases them.
    for (const auto& [comm, call] : aborted_)
      if (has_any_part(rs_))
        waits_.push_back(Wait{.kind = WaitKind::AbortDrain, .comm = comm, .call = static_cast<uint32_t>(call)});
    thread.waits.insert(thread.waits.end(), waits_.begin(), waits_.end());
    // Buffered messages already received are dropped; the new ones join the thread's outbox.
    std::erase_if(thread.sent, [&](const Wait& m) {
      const P2pState* got = find_p2p(st_.ranks[m.peer], m.comm, r_, m.tag);
      return got != nullptr && got->recvs > m.slot;
    });
    thread.sent.insert(thread.sent.end(), sent_.begin(), sent_.end());
  }

  std::optional<Violation> violation_;

 private:
  bool fail(Verdict v, const Call& c, std::string msg) {
    if (!violation_) violation_ = Violation{v, std::move(msg), r_, t_, c.id, std::nullopt};
    return false;
  }
  // An MPI usage rule broken in this state (mpi_rules.def): usage_error, its text and section, the rule named.
  bool fail(model::MpiRule rule, const Call& c, const std::string& text) {
    if (!violation_)
      violation_ = Violation{Verdict::UsageError, model::mpi_rule_message(rule, text), r_, t_, c.id, rule};
    return false;
  }

  // ---- MPI one-sided calls: this rank's epochs on one window (MPI 4.1 sec. 12.5; issue 32 item 3) ----
  // The MPI trace reader writes each call as it was made; what is erroneous is decided here, in every
  // interleaving of the rank's threads, for hand-written and imported scenarios alike.
  std::string window_text(int comm, int buffer) const { return "'" + bname(buffer) + "' of " + w_.comm_name(comm); }
  std::string call_name(const Call& c) const {
    return std::string(model::op_name(c.kind)) + " (" +
           (c.mpi_call.empty() ? std::string(model::op_info(c.kind).mpi_name) : "MPI_" + c.mpi_call) + ")";
  }

  bool window_call(const Call& c) {
    using model::MpiRule;
    auto it = find_window(c.comm, c.buffer);
    if (it == rs_.windows.end())
      return fail(MpiRule::RmaArgument, c,
                  call_name(c) + " on " + window_text(c.comm, c.buffer) +
                      ", which is no window of this rank (no register, or freed)");
    WindowState& x = *it;
    const int32_t target = c.peer;
    const bool locked = std::binary_search(x.locks.begin(), x.locks.end(), target);
    // The messages' parts, built only when a rule is broken (this runs at every step of a one-sided call).
    auto on = [&] { return " on " + window_text(c.comm, c.buffer); };
    auto of_target = [&] { return " of rank " + std::to_string(target) + on(); };
    switch (c.kind) {
      case OpKind::RmaPut:
      case OpKind::RmaGet:
      case OpKind::RmaAccumulate: {
        // A transfer inside a lock or start epoch belongs to that epoch, not to a fence epoch around it
        // (MPICH's test/mpi/rma/mixedsync.c does `fence; lock; put; unlock; fence`; SEMANTICS_NOTES.md).
        const bool passive = (x.epochs & (kLockAllEpoch | kStartEpoch)) != 0 || locked;
        if (!passive && !(x.epochs & kFenceEpoch))
          return fail(MpiRule::RmaEpoch, c,
                      call_name(c) + " to rank " + std::to_string(target) + on() +
                          " outside any access epoch: no win_fence, win_lock, win_lock_all or win_start opened one");
        if (!passive) x.epochs |= kFenceTransfers;
        return true;
      }
      case OpKind::WinLock:
        if (locked || (x.epochs & kLockAllEpoch))
          return fail(MpiRule::RmaEpoch, c,
                      call_name(c) + of_target() + " while this rank already holds " +
                          ((x.epochs & kLockAllEpoch) ? "win_lock_all" : "a lock of it") +
                          ": two access epochs at once");
        x.locks.insert(std::lower_bound(x.locks.begin(), x.locks.end(), target), target);
        return true;
      case OpKind::WinLockAll:
        if ((x.epochs & kLockAllEpoch) || !x.locks.empty())
          return fail(MpiRule::RmaEpoch, c,
                      call_name(c) + on() + " while this rank already holds " +
                          ((x.epochs & kLockAllEpoch) ? "win_lock_all" : "a lock") + ": two access epochs at once");
        x.epochs |= kLockAllEpoch;
        return true;
      case OpKind::WinUnlock:
        if (!locked) return fail(MpiRule::RmaEpoch, c, call_name(c) + of_target() + ", which this rank has not locked");
        x.locks.erase(std::lower_bound(x.locks.begin(), x.locks.end(), target));
        return true;
      case OpKind::WinUnlockAll:
        if (!(x.epochs & kLockAllEpoch))
          return fail(MpiRule::RmaEpoch, c, call_name(c) + on() + " without win_lock_all");
        x.epochs &= static_cast<uint8_t>(~kLockAllEpoch);
        return true;
      case OpKind::WinFlush:
      case OpKind::WinFlushAll: {
        const bool all = c.kind == OpKind::WinFlushAll;
        if (!(x.epochs & kLockAllEpoch) && (all ? x.locks.empty() : !locked))
          return fail(MpiRule::RmaEpoch, c,
                      call_name(c) + (all ? on() : of_target()) + " outside a passive-target epoch");
        return true;
      }
      case OpKind::WinStart:
        if (x.epochs & kStartEpoch)
          return fail(MpiRule::RmaEpoch, c, call_name(c) + on() + " inside an access epoch it started before");
        x.epochs |= kStartEpoch;
        return true;
      case OpKind::WinComplete:
        if (!(x.epochs & kStartEpoch)) return fail(MpiRule::RmaEpoch, c, call_name(c) + on() + " without win_start");
        x.epochs &= static_cast<uint8_t>(~kStartEpoch);
        return true;
      case OpKind::WinPost:
        if (x.epochs & kPostEpoch)
          return fail(MpiRule::RmaEpoch, c, call_name(c) + on() + " inside an exposure epoch it posted before");
        x.epochs |= kPostEpoch;
        return true;
      case OpKind::WinWait:
        if (!(x.epochs & kPostEpoch)) return fail(MpiRule::RmaEpoch, c, call_name(c) + on() + " without win_post");
        x.epochs &= static_cast<uint8_t>(~kPostEpoch);
        return true;
      case OpKind::WinFence:
        // A fence completes the fence epoch's transfers and opens the next epoch unless MPI_MODE_NOSUCCEED.
        x.epochs &= static_cast<uint8_t>(~(kFenceEpoch | kFenceTransfers));
        if (c.win_mode != model::WinMode::NoSucceed) x.epochs |= kFenceEpoch;
        join_host(c, -1);
        return !violation_;
      default:
        return true;
    }
  }

  // A window's epochs are closed when it is freed or the rank finalizes (MPI 4.1 sec. 12.2.5, 12.5, 12.5.1).
  bool epochs_closed(const Call& c, const WindowState& x, const std::string& what) {
    using model::MpiRule;
    const std::string window = window_text(x.comm, x.buffer);
    std::string open;
    if (x.epochs & kLockAllEpoch) open = "win_lock_all";
    if (!x.locks.empty()) open = "a win_lock of rank " + std::to_string(x.locks.front());
    if (x.epochs & kStartEpoch) open = "win_start";
    if (!open.empty())
      return fail(
          MpiRule::RmaEpoch, c,
          what + " of " + window + " while its epoch from " + open + " is still open: every epoch is closed first");
    if ((x.epochs & kFenceEpoch) && (x.epochs & kFenceTransfers))
      return fail(MpiRule::RmaEpoch, c,
                  what + " of " + window + " with RMA calls after its last win_fence and no fence to complete them");
    return true;
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

  // With runtime_connect = off NCCL connects every comm at its creation (measured: a cold destroy
  // waits, docs/HARDWARE.md 2026-12-02); otherwise a comm is connected once it used connections.
  bool connected(int comm) {
    return !w_.knobs.runtime_connect || (member(comm).flags & kConnectionsUsed) || has_p2p_connection(comm);
  }

  // shrink, grow: the rank joins the creation of the child (a host slot of the child, over the child's
  // members). The parent's count of children (ncclComm's childCount, which seeds the child's magic)
  // must agree: the slot compares it (the sequence of split/shrink/grow on a parent matches on every
  // rank). Every rank of a grow waits for the id grow_id hands out: the parent's first and last rank
  // receive it inside NCCL, the new ranks pass it, and the others meet them in the child's bootstrap,
  // which cannot start before (measured on 2.30.7: grow_without_id).
  bool create_child(const Call& c) {
    if (c.child < 0)  // only a projected world (shrink/) drops the child: the language always names one
      return fail(Verdict::UsageError, c, std::string(model::op_name(c.kind)) + " without the communicator it creates");
    auto& child = member(c.child);
    if (child.flags & kCreated)
      return fail(Verdict::UsageError, c,
                  std::string(model::op_name(c.kind)) + " creates " + w_.comm_name(c.child) + ", which already exists");
    child.flags |= kCreated;
    uint64_t sequence = kNoParent;
    if (c.comm >= 0) {
      auto& parent = member(c.comm);
      sequence = parent.children++;
      if (c.kind == OpKind::Grow) wait_for_grow_id(c, c.comm, parent.grows++);
    } else if (c.kind == OpKind::Grow) {
      const auto& grown = w_.comms[static_cast<size_t>(c.child)];
      if (grown.grown_from >= 0) wait_for_grow_id(c, grown.grown_from, static_cast<uint32_t>(grown.grow_index));
    }
    join_slot(c, c.child, sequence, -1);
    return !violation_;
  }

  // NCCL 2.31+: this rank's destroy or finalize joins the comm's intra-node barrier (commDestroySync);
  // the thread waits until every member joined it, unless a finalize on a nonblocking comm returns at once
  // (`destroying`: a destroy, which always waits: ncclCommDestroy blocks on any comm).
  void join_teardown_barrier(const Call& c, bool destroying) {
    member(c.comm).flags |= kTeardownBarrier;
    if (destroying || w_.comms[static_cast<size_t>(c.comm)].mode == model::CommMode::Blocking)
      push_teardown_barrier_wait(c);
  }
  void push_teardown_barrier_wait(const Call& c) {
    waits_.push_back(Wait{.kind = WaitKind::Teardown,
                          .comm = c.comm,
                          .call = static_cast<uint32_t>(c.id),
                          .count = kTeardownBarrierWait});
  }

  // mpi_progress (model::MpiProgress): the early ranks of a rooted collective (the broadcast's root, the
  // reduce's other ranks) leave it at once, without the host slot's wait join_slot gave them; with
  // weak progress the others also wait until each early rank entered MPI again.
  void leave_rooted_collective(const Call& c) {
    const auto progress = sem_.mpi_progress_;
    if (progress == model::MpiProgress::Sync || (c.kind != OpKind::Broadcast && c.kind != OpKind::Reduce)) return;
    const auto& comm = w_.comms[static_cast<size_t>(c.comm)];
    if (comm.mode != model::CommMode::Blocking) return;  // join_slot gave no wait to take away
    const int root = c.root >= 0 ? c.root : comm.members.front();
    const bool early = (c.kind == OpKind::Broadcast) == (r_ == root);
    const uint32_t slot = member(c.comm).host_issued - 1;
    if (early) {
      waits_.pop_back();  // the HostSlot wait join_slot pushed last
      if (progress == model::MpiProgress::Weak) {
        const std::pair<int32_t, uint32_t> entry(c.comm, slot);
        rs_.left_early.insert(std::lower_bound(rs_.left_early.begin(), rs_.left_early.end(), entry), entry);
      }
    } else if (progress == model::MpiProgress::Weak) {
      waits_.push_back(
          Wait{.kind = WaitKind::MpiProgress, .comm = c.comm, .slot = slot, .call = static_cast<uint32_t>(c.id)});
    }
  }

  void wait_for_grow_id(const Call& c, int parent, uint32_t id) {
    waits_.push_back(Wait{.kind = WaitKind::GrowId, .comm = parent, .slot = id, .call = static_cast<uint32_t>(c.id)});
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
    if (m.flags & kRevoked) {
      if (c.kind == OpKind::Destroy || c.kind == OpKind::Abort || c.kind == OpKind::Shrink) return true;
      return fail(Verdict::UsageError, c,
                  name + " was revoked on rank " + std::to_string(r_) +
                      ": only destroy, abort and shrink may follow (ncclInvalidUsage)");
    }
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
    WindowState x{.comm = c.comm, .buffer = c.buffer, .flag = flag, .count = 1, .epochs = 0, .locks = {}};
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
    // The signal-window registration of the first one-sided call is the same whichever call it was.
    if (model::is_one_sided(a.kind) && model::is_one_sided(b.kind)) return {};
    if (a.kind != b.kind) return std::string(model::op_name(a.kind)) + " and " + std::string(model::op_name(b.kind));
    if (a.kind == OpKind::Init) {
      // The member lists the two ranks passed (the declared members when they passed none).
      const auto& declared = w_.comms[static_cast<size_t>(a.comm)].members;
      const auto& va = a.members_view.empty() ? declared : a.members_view;
      const auto& vb = b.members_view.empty() ? declared : b.members_view;
      if (va != vb)
        return "member lists: rank " + std::to_string(a.rank) + " passes " + model::rank_list_text(va) + ", rank " +
               std::to_string(b.rank) + " passes " + model::rank_list_text(vb);
    }
    if (a.kind == OpKind::Register && w_.profile_of(a) == Profile::Nccl &&
        w_.knobs.nccl_version < model::kRegisterSizesMayDiffer && count_a != count_b)
      return "window sizes " + std::to_string(count_a) + " and " + std::to_string(count_b) +
             " bytes (NCCL before 2.30 needs one size)";
    if ((a.kind == OpKind::Shrink || a.kind == OpKind::Grow) && count_a != kNoParent && count_b != kNoParent &&
        count_a != count_b)
      return "the parent's child sequence: rank " + std::to_string(a.rank) + " creates its child number " +
             std::to_string(count_a + 1) + " of " + w_.comm_name(a.comm) + ", rank " + std::to_string(b.rank) +
             " its number " + std::to_string(count_b + 1);
    if (model::is_collective(a.kind) || a.kind == OpKind::Barrier) {
      // MPI 4.1 sec. 6.12: a nonblocking collective never matches a blocking one; nor do two different
      // functions that the language writes with one statement (Scan and Exscan, Gather and Scatter, ...).
      if (!a.mpi_call.empty() && !b.mpi_call.empty() && a.mpi_call != b.mpi_call)
        return "MPI_" + a.mpi_call + " and MPI_" + b.mpi_call;
      // NCCL 2.31 nccl.h, ncclCollConfig_t: "The same configuration must be set on every rank; NCCL
      // validates it only locally" (a rank's maxCTAs, cgaClusterSize... change the kernel it runs).
      if (a.coll_config != b.coll_config)
        return "per-collective config " + (a.coll_config.empty() ? std::string("(none)") : a.coll_config) + " and " +
               (b.coll_config.empty() ? std::string("(none)") : b.coll_config) +
               " (ncclCollConfig_t must be the same on every rank; NCCL checks it only locally)";
      if (w_.dtype_unknown(a.dtype) || w_.dtype_unknown(b.dtype)) {
        // a type the trace could not say (dtype=any): neither its count nor its type is compared
      } else if (count_a != count_b) {
        return "count " + std::to_string(count_a) + " and " + std::to_string(count_b);
      } else if (a.dtype != b.dtype) {
        return "dtype " + w_.dtypes[static_cast<size_t>(a.dtype)] + " and " + w_.dtypes[static_cast<size_t>(b.dtype)];
      }
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
    join_slot(c, c.comm, c.kind == OpKind::Register ? alloc_size(c.buffer) : effective_count(c), child);
  }

  // Takes host slot `comm`'s next slot for `c` (counted as `count` in the comparison of the calls).
  void join_slot(const Call& c, int comm_id, uint64_t count, int child) {
    auto& m = member(comm_id);
    const uint32_t k = m.host_issued++;
    auto& cs = st_.comms[static_cast<size_t>(comm_id)];
    const size_t idx = k - cs.host_base;
    if (idx < cs.host_open.size()) {
      if (cs.host_open[idx].count == kNoParent) cs.host_open[idx].count = count;  // compare with a parent's rank
      const auto& first = cs.host_open[idx];
      const Call& fc = w_.calls[first.call];
      std::string diff = difference(fc, first.count, c, count);
      if (!diff.empty()) {
        fail(Verdict::Mismatch, c,
             "host slot " + std::to_string(k) + " of " + w_.comm_name(comm_id) +
                 " is filled by different calls: " + diff + " (rank " + std::to_string(fc.rank) + " " +
                 sem_.call_ref(fc.id) + ", rank " + std::to_string(r_) + " " + sem_.call_ref(c.id) + ")");
        return;
      }
      // The lowest arrived rank's call stands for the slot, so the state does not depend on arrival order.
      if (r_ < fc.rank) cs.host_open[idx].call = static_cast<uint32_t>(c.id);
      ++cs.host_open[idx].arrived;
    } else {
      cs.host_open.push_back(OpenSlot{static_cast<uint32_t>(c.id), 1, count, 0, {}});
    }
    if (c.kind == OpKind::Split) {
      auto& children = cs.host_open[idx].split_children;
      std::pair<int32_t, int32_t> entry(r_, static_cast<int32_t>(child));
      children.insert(std::lower_bound(children.begin(), children.end(), entry), entry);
    }
    if (w_.comms[static_cast<size_t>(comm_id)].mode == model::CommMode::Blocking)
      waits_.push_back(
          Wait{.kind = WaitKind::HostSlot, .comm = comm_id, .slot = k, .call = static_cast<uint32_t>(c.id)});
    settle_host(c, comm_id);
  }

  // Pops the slots every member has reached; checks split children when a split slot completes.
  void settle_host(const Call& c, int comm_id) {
    auto& cs = st_.comms[static_cast<size_t>(comm_id)];
    const auto& comm = w_.comms[static_cast<size_t>(comm_id)];
    while (!cs.host_open.empty() && cs.host_open.front().arrived == comm.members.size()) {
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
    auto& m = member(c.comm);
    m.flags |= kConnectionsUsed;
    if (!w_.knobs.runtime_connect) return;
    if (m.flags & kConnectReached) return;
    m.flags |= kConnectReached;
    ++st_.comms[static_cast<size_t>(c.comm)].connected;
    if (w_.comms[static_cast<size_t>(c.comm)].mode == model::CommMode::Blocking)
      waits_.push_back(Wait{.kind = WaitKind::Connect, .comm = c.comm, .call = static_cast<uint32_t>(c.id)});
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
      ++cs.dev_open[idx].arrived;
    } else {
      cs.dev_open.push_back(OpenSlot{static_cast<uint32_t>(c.id), 1, count, static_cast<uint8_t>(sym), {}});
    }
    // Every member issued this slot: nothing left to compare against.
    const auto& comm = w_.comms[static_cast<size_t>(c.comm)];
    while (!cs.dev_open.empty() && cs.dev_open.front().arrived == comm.members.size()) {
      cs.dev_open.erase(cs.dev_open.begin());
      ++cs.dev_base;
    }
    if (!sym) connect(c);
    DevicePart p;
    p.call = static_cast<uint32_t>(c.id);
    p.comm = c.comm;
    p.kind = PartKind::Collective;
    p.symmetric = static_cast<uint8_t>(sym);
    p.slot = k;
    if (!check_launch_order(c)) return false;
    add_part(c.stream, p);
    if (barrier)
      waits_.push_back(Wait{.kind = WaitKind::DevDone, .comm = c.comm, .slot = k, .call = static_cast<uint32_t>(c.id)});
    return true;
  }

  P2pState& p2p(int comm, int peer, uint32_t tag = 0) { return p2p_record(rs_, comm, peer, tag); }

  // The runtime connect of a pair of ranks on a comm: each side's first send/recv call or group with the
  // other sets up one connection per direction it uses, and the two sides exchange their connection data
  // in one step, so the directions must mirror (a send here for each receive there). Measured on one
  // shared H200 (NCCL 2.30.7 and 2.31.0a16, 2026-12-03, tests/calibration-probes/
  // p2p_group_recv_needs_later_send): a group of a receive and a send against a lone receive fails inside
  // NCCL ("Message truncated: received 1024 bytes instead of 512"; "ncclProxyClientGetFd ... failed").
  void check_connect_directions(int comm, int peer) {
    if (peer == r_) return;  // a send to itself pairs with its own receive: no connection to agree on
    const P2pState* other = find_p2p(st_.ranks[static_cast<size_t>(peer)], comm, r_);
    if (other == nullptr || !other->connect_reached) return;  // the peer compares when it gets there
    const uint8_t mine = p2p(comm, peer).connect_reached & (kConnectSends | kConnectReceives);
    const uint8_t theirs = other->connect_reached & (kConnectSends | kConnectReceives);
    const uint8_t mirrored = static_cast<uint8_t>(((theirs & kConnectSends) ? kConnectReceives : 0) |
                                                  ((theirs & kConnectReceives) ? kConnectSends : 0));
    if (mine == mirrored) return;
    auto what = [](uint8_t dirs) {
      return std::string(dirs == (kConnectSends | kConnectReceives) ? "a send and a receive"
                         : dirs == kConnectSends                    ? "a send only"
                                                                    : "a receive only");
    };
    const int first = static_cast<int>(std::find_if(w_.calls.begin(), w_.calls.end(),
                                                    [&](const Call& c) {
                                                      return c.rank == r_ && c.comm == comm && c.peer == peer &&
                                                             model::is_p2p(c.kind);
                                                    }) -
                                       w_.calls.begin());
    fail(Verdict::Mismatch, w_.calls[static_cast<size_t>(first)],
         "the first send/recv between ranks " + std::to_string(peer) + " and " + std::to_string(r_) + " on " +
             w_.comm_name(comm) + " sets up different connections: rank " + std::to_string(peer) +
             "'s first call or group has " + what(theirs) + ", rank " + std::to_string(r_) + "'s " + what(mine) +
             " (NCCL's runtime connect of the pair fails: group the first send and receive alike on both ranks)");
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
    const uint32_t tag = wait_tag(c);
    for (const auto& th : peer.threads)
      for (const auto* list : {&th.waits, &th.sent})
        for (const auto& wt : *list)
          if (wt.kind == WaitKind::P2pHost && wt.dir == dir && wt.comm == c.comm && wt.peer == r_ && wt.slot == idx &&
              wt.tag == tag)
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
    const std::string diff = sem_.pair_difference(oc, theirs, c, mine);
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
    // The directions this rank's first send/recv call or group with the peer sets up (bits of
    // connect_reached above bit 0), compared with the peer's in finish().
    const bool first = needs_connect || std::find(first_pairs_.begin(), first_pairs_.end(),
                                                  std::make_pair(c.comm, c.peer)) != first_pairs_.end();
    if (needs_connect) first_pairs_.emplace_back(c.comm, c.peer);
    pp.connect_reached |= 1;
    if (first && w_.knobs.runtime_connect)
      pp.connect_reached |= c.kind == OpKind::Send ? kConnectSends : kConnectReceives;
    if (needs_connect)
      waits_.push_back(
          Wait{.kind = WaitKind::P2pConnect, .comm = c.comm, .peer = c.peer, .call = static_cast<uint32_t>(c.id)});
    DevicePart p;
    p.call = static_cast<uint32_t>(c.id);
    p.comm = c.comm;
    p.kind = c.kind == OpKind::Send ? PartKind::Send : PartKind::Recv;
    p.peer = c.peer;
    p.slot = idx;
    p.count = effective_count(c);
    if (!check_launch_order(c)) return false;
    add_part(c.stream, p);
    return true;
  }

  bool host_pair(const Call& c) {
    const bool send = c.kind == OpKind::Send;
    const uint32_t tag = wait_tag(c);
    // MPI 4.1 sec. 3.5 (order): a receive posted after a pending wildcard receive of this thread that may
    // match the same message (same comm; source and tag each equal or a wildcard) cannot take a message
    // the earlier one matches: it is matched by a MatchAny step too, which serves the receives in posting
    // order. A receive from MPI_ANY_SOURCE or with MPI_ANY_TAG has no pair yet: a MatchAny step
    // (step_relation.cpp) picks the message.
    const bool behind_any = !send && std::any_of(waits_.begin(), waits_.end(), [&](const Wait& w) {
      return w.kind == WaitKind::P2pAny && w.comm == c.comm && (w.dir == 1 || c.any_source || w.peer == c.peer) &&
             (w.tag == kWaitAnyTag || tag == kWaitAnyTag || w.tag == tag);
    });
    if (!send && (c.any_source || tag == kWaitAnyTag || behind_any)) {
      waits_.push_back(Wait{.kind = WaitKind::P2pAny,
                            .dir = static_cast<uint8_t>(c.any_source ? 1 : 2),
                            .comm = c.comm,
                            .peer = c.any_source ? 0 : c.peer,
                            .call = static_cast<uint32_t>(c.id),
                            .tag = tag,
                            .count = effective_count(c)});
      return true;
    }
    // Messages of one sender, comm and tag match receives in order (MPI 4.1 sec. 3.5, non-overtaking):
    // one pair counter per tag.
    auto& pp = p2p(c.comm, c.peer, tag);
    const uint32_t idx = send ? pp.sends++ : pp.recvs++;
    if (!check_pair(c, idx)) return false;
    // A buffered send (MPI 4.1 sec. 3.4) completes locally: the message waits for its receive, the thread does not.
    auto& into = send && c.buffered ? sent_ : waits_;
    into.push_back(Wait{.kind = WaitKind::P2pHost,
                        .dir = static_cast<uint8_t>(send ? 0 : 1),
                        .comm = c.comm,
                        .peer = c.peer,
                        .slot = idx,
                        .call = static_cast<uint32_t>(c.id),
                        .tag = tag,
                        .count = effective_count(c)});
    return true;
  }

  // NCCL 2.31 ncclConfig_t.launchOrderImplicit (docs/userguide api/types.rst): kernels of a comm that has
  // it on "must not overlap with operations on disabled/default communicators"; a kernel issued while one
  // of the other setting is still pending on this rank's GPU may overlap with it: usage_error.
  bool check_launch_order(const Call& c) {
    if (!sem_.launch_order_mixed_ || w_.profile_of(c) != Profile::Nccl) return true;
    const bool mine = w_.comms[static_cast<size_t>(c.comm)].launch_order_implicit;
    auto clash = [&](const DevicePart& p) {
      return !p.done && w_.comms[p.comm].profile == Profile::Nccl && w_.comms[p.comm].launch_order_implicit != mine;
    };
    int other = -1;
    for (const auto& st : rs_.streams)
      for (const auto& e : st)
        for (const auto& p : e.parts)
          if (other < 0 && clash(p)) other = static_cast<int>(p.call);
    for (const auto& [stream, parts] : parts_)
      for (const auto& p : parts)
        if (other < 0 && clash(p)) other = static_cast<int>(p.call);
    if (other < 0) return true;
    const int on = mine ? c.id : other;
    const int off = mine ? other : c.id;
    return fail(Verdict::UsageError, c,
                sem_.call_ref(on) + " (launch_order_implicit) may overlap on this GPU with " + sem_.call_ref(off) +
                    ", on a comm without it: NCCL 2.31 says they must not overlap (order or synchronize them, or "
                    "configure both comms alike)");
  }

  void add_part(int stream, const DevicePart& p) {
    for (auto& [s, parts] : parts_)
      if (s == stream) {
        parts.push_back(p);
        return;
      }
    parts_.emplace_back(stream, std::vector<DevicePart>{p});
  }

  // ncclCommAbort (issue 14 item 6; documented, unmeasured): the comm's kernels that run exit at once;
  // one queued behind another comm's kernel must start first, and the abort waits for that (finish()
  // adds the wait). Aborting the comms together (one group) lets the stuck kernel ahead exit too.
  void abort_comm(const Call& c) {
    const int comm = c.comm;
    if (!(member(comm).flags & (kDestroyed | kAborted))) ++st_.comms[static_cast<size_t>(comm)].torn_down;
    member(comm).flags |= kAborted;
    sem_.drop_aborted_running(rs_, r_);
    aborted_.emplace_back(comm, c.id);
    for (auto& th : rs_.threads)
      th.waits.erase(std::remove_if(th.waits.begin(), th.waits.end(),
                                    [&](const Wait& wt) { return wt.kind != WaitKind::StoreKey && wt.comm == comm; }),
                     th.waits.end());
  }

  // Two threads of this rank inside one comm at once. NCCL communicators are not thread-safe (user guide,
  // "Thread Safety"): a call on a comm while another thread of this rank is blocked inside a call on it is a
  // usage error; a framework-level group serialises its threads' calls (the guard, step_relation.cpp): no
  // error. MPI 4.1 sec. 11.6.2 ("Collective calls"): collectives on a communicator match in the order each
  // process issues them, and threads that issue them on one communicator must order them themselves; a
  // collective issued while another thread is inside a blocking collective call on the comm is not ordered
  // against it. A thread waiting for its own nonblocking collective (an MPI_I* call in a group, its wait the
  // group's end) is not inside that call, and point-to-point calls may run concurrently (MPI_THREAD_MULTIPLE).
  bool check_threads_in_comm(const Call& c, bool mpi) {
    if (c.comm < 0 || (mpi ? !sem_.mpi_collective(c) : w_.comms[static_cast<size_t>(c.comm)].serialized)) return true;
    for (size_t t = 0; t < rs_.threads.size(); ++t) {
      if (static_cast<int>(t) == t_) continue;
      for (const Wait& w : rs_.threads[t].waits) {
        if (w.kind == WaitKind::StoreKey || w.comm != c.comm) continue;
        const bool inside_blocking_collective =
            (w.kind == WaitKind::HostSlot || w.kind == WaitKind::MpiProgress) && !sem_.grouped_[w.call];
        if ((mpi && !inside_blocking_collective) || sem_.wait_holds(st_, r_, w)) continue;
        const auto& threads = w_.programs[static_cast<size_t>(r_)].threads;
        return fail(Verdict::UsageError, c,
                    std::string(mpi ? "two threads in collectives on " : "two host threads inside ") +
                        w_.comm_name(c.comm) + " at once: thread " + threads[t].name + " is " +
                        (mpi ? "inside " : "blocked in ") + sem_.call_ref(static_cast<int>(w.call)) + " while thread " +
                        threads[static_cast<size_t>(t_)].name + " calls " + sem_.call_ref(c.id) +
                        (mpi ? " (MPI 4.1 sec. 11.6.2: threads must order their collective calls on one communicator)"
                             : " (NCCL communicators are not thread-safe)"));
      }
    }
    return true;
  }

  // put_signal, signal, wait_signal (NCCL 2.29+): stream-ordered. (A put into a window the target never
  // registers is found when the scenario is resolved.)
  bool one_sided(const Call& c) {
    if (!check_buffer(c, c.buffer)) return false;
    // rmaTaskAppend (src/enqueue.cc, v2.29.2-1 ... v2.30.7-1): the source of a put must lie in a
    // symmetric window of the comm, or the call returns ncclInvalidArgument.
    if (c.kind == OpKind::PutSignal && !symmetric_buffer(c.comm, c.buffer))
      return fail(Verdict::UsageError, c,
                  "put_signal from '" + bname(c.buffer) + "', which is not in a symmetric window on " +
                      w_.comm_name(c.comm) + " (ncclPutSignal returns ncclInvalidArgument)");
    if (w_.knobs.nccl_version >= model::kRmaSetupAtRegister) {
      // NCCL 2.31: the RMA setup ran at the rank's first window registration on the comm (kRmaReady, set
      // at the end of that registration's call or group) or in init (NCCL_RMA_EAGER_INIT); before it,
      // ncclSignal and ncclWaitSignal return ncclInvalidUsage (src/enqueue.cc:2853-2860). A put needs a
      // symmetric source window, checked above.
      if (!w_.knobs.rma_eager_init && !(member(c.comm).flags & kRmaReady))
        return fail(Verdict::UsageError, c,
                    std::string(c.kind == OpKind::Signal ? "signal" : "wait_signal") + " on " + w_.comm_name(c.comm) +
                        " before RMA is initialized: this rank registered no window on it before this call or group "
                        "(NCCL 2.31: ncclInvalidUsage; register a window first, or set rma_eager_init = on)");
    } else if (auto& m = member(c.comm); !(m.flags & kRmaReady)) {
      // Up to 2.30.x the rank's first one-sided call on the comm also registers NCCL's signal window: a
      // host collective over every member at the group's end (finish()).
      m.flags |= kRmaReady;
      rma_init_.emplace_back(c.comm, c.id);
    }
    DevicePart p;
    p.call = static_cast<uint32_t>(c.id);
    p.comm = c.comm;
    p.kind = c.kind == OpKind::WaitSignal ? PartKind::SignalWait : PartKind::OneSided;
    p.peer = c.peer;
    p.slot = static_cast<uint32_t>(c.id);  // each call is issued once per run
    p.count = c.kind == OpKind::WaitSignal ? (c.count > 0 ? static_cast<uint64_t>(c.count) : 1) : effective_count(c);
    if (!check_launch_order(c)) return false;
    add_part(c.stream, p);
    return true;
  }

  const Semantics& sem_;
  const model::World& w_;
  State& st_;
  int r_;
  int t_;
  RankState& rs_;
  std::vector<std::pair<int, std::vector<DevicePart>>> parts_;  // per stream, in issue order
  std::vector<Wait> waits_;
  std::vector<Wait> sent_;                        // buffered sends of this call (ThreadState::sent)
  std::vector<std::pair<int, int>> aborted_;      // (comm, abort call) of the aborts among these calls
  std::vector<std::pair<int, int>> rma_init_;     // (comm, call) of the first one-sided calls among these calls
  std::vector<int> rma_setup_;                    // NCCL 2.31: comms whose RMA setup these registrations ran
  std::vector<std::pair<int, int>> first_pairs_;  // (comm, peer) whose runtime connect these calls reached
  // The child sequence of a grow by a new rank (no parent): compared with nothing.
  static constexpr uint64_t kNoParent = UINT64_MAX;
};

std::optional<Violation> apply_calls(const Semantics& semantics, State& next, int rank, int thread,
                                     std::span<const int32_t> calls) {
  Issuer issuer(semantics, next, rank, thread);
  for (int32_t c : calls)
    if (!issuer.issue(semantics.world().calls[static_cast<size_t>(c)])) break;
  issuer.finish(next.ranks[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)]);
  return std::move(issuer.violation_);
}

}  // namespace collmc::checker
