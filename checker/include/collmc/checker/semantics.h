// The step relation of SEMANTICS.md, in one place: the only code that knows what a call does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "collmc/checker/control.h"
#include "collmc/checker/independence.h"
#include "collmc/checker/next_state.h"
#include "collmc/model/world.h"

namespace collmc::checker {

// Where a rank stands in a state, for reports: a host thread blocked in a call, or a device op stuck
// at (or behind) a stream's head.
struct BlockedCall {
  int rank = 0;
  int thread = -1;        // host thread, or -1 for a stream
  int stream = -1;        // stream id for device ops
  int call = -1;          // the call it is in (-1: finished, nothing pending)
  bool finished = false;  // a host thread that ended
  std::string reason;
};

// One "cannot proceed until" of a stuck state (SEMANTICS.md §5): a host thread (thread >= 0) or a
// stream head (stream >= 0) of `rank` waits for `target_rank`'s host (target_stream < 0: its
// blocked threads, or its exit) or for the head of `target_stream` of `target_rank`.
struct WaitDependency {
  int rank = 0;
  int thread = -1;
  int stream = -1;
  int call = -1;  // the call the waiting thread or stream head is in
  int target_rank = 0;
  int target_stream = -1;
  int comm = -1;
  int slot = -1;
  std::string label;
  // What holds it: a wait of a blocked thread (`wait` says which), a call's guard before it is issued, the
  // process's host thread, or a stream head's device op. For readers beyond the label (the live watch).
  enum class Source : uint8_t { Wait, Guard, Process, StreamHead };
  Source source = Source::Wait;
  WaitKind wait = WaitKind::HostSlot;
};

// A wait on many members (a host slot of a large comm, its connect, its teardown) names at most this
// many of the members it waits for, the first in member order, in reports ("and N more") and in the
// wait-for graph. What it says stays true, and a stuck state keeps its wait-for cycles: every member
// named is itself stuck, so every stuck thread keeps an edge to a stuck thread or an ended rank.
inline constexpr size_t kMaxListedWaitTargets = 16;

// Whether the world has a rooted MPI collective on a blocking mpi comm (`broadcast`, `reduce`): the only
// calls whose effect depends on mpi_progress (Issuer::leave_rooted_collective), so without one the three
// progress models give the same transitions.
bool has_progress_dependent_calls(const model::World& world);

// The progress models a check of `world` explores, in order (SEMANTICS_NOTES.md, "MPI progress"): the
// scenario's `mpi_progress` when it names one; for the default (`portable`) sync, strong and weak when
// the world has a call whose effect depends on it, else sync alone (the same transitions).
std::vector<model::MpiProgress> progress_models(const model::World& world);

class Semantics final : public NextState, public IndependenceInfo {
 public:
  // The transitions under the scenario's mpi_progress; `portable` (the default) is read as sync here:
  // check() explores every model it stands for, each with a Semantics of its own.
  explicit Semantics(const model::World& world);
  // The transitions under `progress` (sync, strong or weak), whatever the scenario sets.
  Semantics(const model::World& world, model::MpiProgress progress);

  State initial() const override;
  void enabled(const State& s, std::vector<Step>& out, int first_rank = 0) const override;
  std::optional<Violation> apply(State& s, const Step& step) const override;
  bool is_final(const State& s) const override;

  // IndependenceInfo
  int ranks() const override { return world_.ranks; }
  int threads(int rank) const override { return static_cast<int>(control_.threads[static_cast<size_t>(rank)].size()); }
  bool thread_live(const State& s, int rank, int thread) const override;
  bool step_reads_device(const Step& step) const override;
  bool has_pending_device_work(const State& s, int rank) const override;
  bool may_read_device(const State& s, int rank) const override;
  std::vector<int> completion_ranks(const Step& step) const override;
  bool threads_share_a_comm() const override { return threads_share_a_comm_; }
  bool ranks_share_a_process() const override { return !world_.processes.empty(); }
  void enabled_of_rank(const State& s, int rank, std::vector<Step>& host,
                       std::vector<Step>& completions) const override;
  bool commuting_choice(const State& s, int rank, int thread) const override;

  const model::World& world() const { return world_; }
  const ControlProgram& control() const { return control_; }
  // The progress model these transitions follow (never `portable`).
  model::MpiProgress mpi_progress() const { return mpi_progress_; }

  // One line saying what a step does, in the scenario's words.
  std::string describe_step(const Step& step) const;
  // The call a step issued (or the group's calls); empty for choices, spawns and completions.
  std::vector<int> step_calls(const Step& step) const;
  // Every host thread and non-empty stream of every rank: what it waits for.
  std::vector<BlockedCall> blocked(const State& s) const;
  // Every wait of every blocked thread and stuck stream head, for the wait-for graph.
  std::vector<WaitDependency> wait_dependencies(const State& s) const;
  // Whether `thread` of `rank` is stuck in the last call of its program: blocked in it with nothing after
  // it, or held before it by its guard with it the thread's only way on (certain_hang.h).
  bool stuck_in_last_call(const State& s, int rank, int thread) const;

  // Whether every wait of `thread` of `rank` holds.
  bool waits_hold(const State& s, int rank, const ThreadState& thread) const;
  bool wait_holds(const State& s, int rank, const Wait& w) const;
  // Whether a member whose flags on the comm are `flags` still owes its part of the destroy that the
  // Teardown wait `w` waits for: up to 2.30.x, it has neither destroyed nor aborted the comm; from 2.31
  // (`w.count == kTeardownBarrierWait`: model::kDestroyBarrier), it has not joined the intra-node
  // barrier of ncclCommDestroy/ncclCommFinalize, which an abort never joins.
  static bool owes_teardown(const Wait& w, uint16_t flags) {
    if (w.count == kTeardownBarrierWait) return !(flags & kTeardownBarrier);
    return !(flags & (kDestroyed | kAborted));
  }
  // The rank's local index of `comm` (its position among the rank's comms), or -1. A search of the
  // rank's few comms, not a [rank][comm] table (W x comms entries: 0.5 GB at W = 16384).
  int local_index(int rank, int comm) const {
    const auto& comms = member_comms_[static_cast<size_t>(rank)];
    const auto it = std::lower_bound(comms.begin(), comms.end(), comm);
    return it != comms.end() && *it == comm ? static_cast<int>(it - comms.begin()) : -1;
  }

 private:
  friend class Issuer;
  // Comms of both launchOrderImplicit settings at NCCL 2.31+ (launch_order_mixed in step_relation.cpp).
  bool launch_order_mixed_ = false;
  bool threads_share_a_comm_ = false;  // see IndependenceInfo::threads_share_a_comm
  std::vector<bool> grouped_;          // [call id]: the call stands in a group (an MPI_I* call before its wait)
  // A collective call on an mpi comm (collectives, barriers, communicator and window constructors: every
  // call that takes a host slot there), whose calls from two threads of a process MPI wants ordered.
  bool mpi_collective(const model::Call& c) const {
    return c.comm >= 0 && world_.profile_of(c) == model::Profile::Mpi &&
           model::op_class(c.kind, model::Profile::Mpi) == model::OpClass::HostBlocking;
  }
  // What a call on a nonblocking comm waits for first (NCCL's poll until the previous call returned):
  // the one rule both the guard and the wait-for graph read.
  struct NonblockingWait {
    enum Kind { None, HostSlot, Connect } kind = None;
    uint32_t slot = 0;
  };
  NonblockingWait nonblocking_wait(const State& s, int rank, const model::Call& call) const;
  // A rank driven with others by one process's host thread (`process P = [..]`): the rank that holds
  // that thread when `rank`'s main thread wants to issue a call (`group`: a group), or -1 when it may.
  // The thread issues the ranks' calls in turn and is held by a blocking call; a group joins the groups
  // the ranks before it issued in the same round (ncclGroupStart, a call per device, ncclGroupEnd).
  int process_holder(const State& s, int rank, bool group) const;
  // The index of the rank whose call the process's thread issues next (ranks that ended are skipped).
  int process_turn(const State& s, int process) const;
  // Why `rank`'s main thread, at `node`, cannot issue because of its process ("" when it can), and
  // the call it would issue (into `call`).
  std::string process_wait_reason(const State& s, int rank, const ControlPosition& at, int* call) const;
  bool first_issue_is_group(const ControlPosition& at) const;
  // After `rank`'s main thread issued a call or (`group`) a group: the turn passes to the next rank.
  void pass_process_turn(State& s, int rank, bool group) const;
  // cudaFree in a process that drives several GPUs waits for all of them (public reports: NVIDIA/nccl#48,
  // #70, #613; pytorch#880): every stream of every rank of `rank`'s process is empty.
  bool process_devices_idle(const State& s, int rank) const;
  // Whether `call` can start now (DEVSYNC drained, nonblocking comm idle); when not, why.
  bool guard_holds(const State& s, int rank, const model::Call& call, std::string* why = nullptr) const;
  bool host_slot_complete(const State& s, int comm, uint32_t slot) const;
  bool connect_complete(const State& s, int comm) const;
  // mpi_progress = weak: every member that left host slot `slot` of `comm` early has entered MPI since, or ended.
  bool early_ranks_progressed(const State& s, int comm, uint32_t slot) const;
  // The thread reached its end and is not blocked in its last call.
  bool thread_ended(const State& s, int rank, int thread) const;
  bool running_part(const State& s, int rank, PartKind kind, int comm, uint32_t slot, int peer) const;
  std::vector<const StreamEntry*> running_entries(const RankState& rs) const;
  // Calls `visit` on each running entry (the stream heads that may progress: every head, or with
  // stream_progress = serialized the heads issued first) until it returns true; returns whether one
  // did. What the enabled-step computation uses: no allocation.
  template <class Visit>
  bool find_running_entry(const RankState& rs, Visit&& visit) const {
    uint32_t min_seq = 0;
    const bool serialized = world_.knobs.stream_progress == model::StreamProgress::Serialized;
    if (serialized) {
      min_seq = UINT32_MAX;
      for (const auto& st : rs.streams)
        if (!st.empty()) min_seq = std::min(min_seq, st.front().seq);
    }
    for (const auto& st : rs.streams)
      if (!st.empty() && (!serialized || st.front().seq == min_seq) && visit(st.front())) return true;
    return false;
  }
  // The host steps of `rank`'s threads, and the device completions `rank` stands for (a collective's
  // lowest member, a send/recv pair's sender).
  void host_steps(const State& s, int rank, std::vector<Step>& out) const;
  void device_steps(const State& s, int rank, std::vector<Step>& out) const;
  // `recv COMM any`: a step per sender whose next send to `rank` waits for a receive.
  void match_any_steps(const State& s, int rank, std::vector<Step>& out) const;
  std::optional<Violation> apply_match_any(State& s, const Step& step) const;
  // The P2pHost wait of `sender`'s send number `pair` to `receiver` on `comm`, if it waits in it.
  const Wait* waiting_send(const State& s, int receiver, int comm, int sender, uint32_t tag, uint32_t pair) const;
  void complete_part(State& s, int rank, PartKind kind, int comm, uint32_t slot, int peer) const;
  // ncclCommAbort sets the comm's abort flag; a kernel of that comm exits once it runs (reaches the
  // head of its stream). Marks the running parts of comms this rank aborted done and drops the entries
  // left empty, again and again as work behind them starts.
  void drop_aborted_running(RankState& rs, int rank) const;
  std::string describe_wait(const State& s, int rank, const Wait& w) const;
  std::string where_is(const State& s, int rank) const;
  std::string call_ref(int call) const;
  // How a send and a receive of one pair differ ("" when they agree), `first` and `second` in that order in
  // the text: the dtype, and the count, which an MPI receive may exceed (MPI 4.1 sec. 3.2.4: a message
  // shorter than the receive buffer); `dtype=any` is compared with nothing.
  std::string pair_difference(const model::Call& first, uint64_t first_count, const model::Call& second,
                              uint64_t second_count) const;
  // The ranks a store wait (store_wait, host_barrier `c` of `rank`) is held up by.
  std::vector<int> store_holders(const State& s, int rank,
                                 const model::Call& c) const;  // "`register A wa` (file:line)"

  const model::World& world_;
  model::MpiProgress mpi_progress_ = model::MpiProgress::Sync;
  ControlProgram control_;
  std::vector<std::vector<int>> member_comms_;  // [rank] -> comm ids
  ControlLookahead reads_device_ahead_;         // a call that reads device work is still reachable
};

}  // namespace collmc::checker
