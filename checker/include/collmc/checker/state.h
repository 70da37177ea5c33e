// The state of SEMANTICS.md §3: where every host thread is, the host and device slots every member
// issued on every comm, every rank's stream FIFOs, windows, buffers and connections. Plain data with a
// canonical byte encoding (the key of the visited set); the semantics in next_state.h give it meaning.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace collmc::checker {

enum class WaitKind : uint8_t {
  HostSlot,     // an HBC on `comm`, host slot `slot`: released when every member arrived
  Connect,      // the runtime connect of `comm`: released when every member reached it
  P2pConnect,   // the runtime connect of the pair (this rank, `peer`) on `comm`
  DevDone,      // barrier: this rank's device op `comm` device slot `slot` has completed
  P2pHost,      // mpi send (dir 0) / recv (dir 1) number `slot` with `peer` and `tag`: released when matched
  Teardown,     // destroy of a connected `comm`: released when every member entered its destroy
  StoreKey,     // store_wait / host_barrier: released when host store key `slot` counts `count` or more
  P2pAny,       // mpi receive that a MatchAny step matches (MPI_ANY_SOURCE: dir 1; MPI_ANY_TAG, or one posted
                // behind a pending receive it may share a message with: dir 2, from `peer`); never holds
  GrowId,       // grow of PARENT `comm` (every rank of the grow): released once grow_id on `comm` handed
                // out id number `slot` (NCCL 2.29+; measured on 2.30.7: grow_without_id)
  MpiProgress,  // mpi_progress = weak: a late rank of the rooted collective in host slot `slot` of `comm`:
                // released once every member that left it early entered MPI again (or ended)
  AbortDrain,   // abort of `comm` (alone or with the other comms of its group): released once this rank's
                // GPU is idle (no work of any comm left): the abort's free of device memory synchronizes
                // the device (measured, NCCL 2.30.7 on one shared H200: docs/HARDWARE.md)
  P2pProbe,     // mpi `probe COMM PEER|any` (MPI_Probe): released while a message it matches (from `peer`, or
                // any member with dir 1; of `tag`) is sent and not yet received; it receives nothing
};

// Wait::count of a Teardown wait for NCCL 2.31's intra-node barrier of destroy and finalize.
inline constexpr uint64_t kTeardownBarrierWait = 2;

// What a blocked host thread waits for; a thread moves on once all its waits hold.
// A receive's MPI_ANY_TAG in Wait::tag (MPI tags are >= 0).
inline constexpr uint32_t kWaitAnyTag = UINT32_MAX;

// Ranks, comms and buffers are named by 32-bit ids everywhere in the state, signed as the model's `int`
// ids are (a world may have more than 65,536 ranks: model::kMaxWorldRanks); the encoding is varints, so
// small ids stay one or two bytes.
struct Wait {
  WaitKind kind = WaitKind::HostSlot;
  uint8_t dir = 0;
  int32_t comm = 0;
  int32_t peer = 0;    // P2pConnect, P2pHost: the other world rank
  uint32_t slot = 0;   // HostSlot: host slot; DevDone: device slot; P2pHost: index of the pair
  uint32_t call = 0;   // the call it is blocked in
  uint32_t tag = 0;    // P2pHost, P2pAny (mpi): the message tag; kWaitAnyTag: MPI_ANY_TAG
  uint64_t count = 0;  // P2pHost: the element count, compared with the peer's when matched;
                       // Teardown: kTeardownBarrierWait for NCCL 2.31's destroy barrier (model::kDestroyBarrier)
  bool operator==(const Wait&) const = default;
};

// A thread's control position (control.h): the node and the done-sets of the any_orders it is inside,
// outermost first. Positions are kept settled: at an any_order's dispatch node at least two children
// remain (one remaining child is entered at once, none left continues after the any_order), so the
// steps are those of the 2^K automaton this replaces.
struct ControlPosition {
  int32_t node = -1;  // control node; -1: not started yet
  std::vector<uint64_t> done;
  bool operator==(const ControlPosition&) const = default;
};

struct ThreadState : ControlPosition {
  std::vector<Wait> waits;
  // Buffered sends (`send ... mode=buffered`, MPI_Bsend: MPI 4.1 sec. 3.4) of this thread whose receive may
  // not have come yet: P2pHost waits (dir 0) that block nothing; receives and wildcards find them as they
  // find a blocked send. Dropped at the thread's next call once received.
  std::vector<Wait> sent;
  bool operator==(const ThreadState&) const = default;
};

// Collective: completes with every member's slot. Send/Recv: completes with its pair. OneSided (put_signal,
// signal): completes alone and counts a signal at `peer`. SignalWait: completes once `count` signals
// from `peer` on `comm` arrived (and consumes them).
enum class PartKind : uint8_t { Collective, Send, Recv, OneSided, SignalWait };

// One device operation; a group's operations on one stream form one entry (one kernel launch).
struct DevicePart {
  uint32_t call = 0;
  int32_t comm = 0;
  PartKind kind = PartKind::Collective;
  uint8_t symmetric = 0;
  uint8_t done = 0;
  int32_t peer = 0;    // send/recv: the other world rank
  uint32_t slot = 0;   // collective: device slot; send/recv: index of the pair
  uint64_t count = 0;  // send/recv: the element count at issue, compared with the peer's
  bool operator==(const DevicePart&) const = default;
};

struct StreamEntry {
  uint32_t seq = 0;  // issue order on this rank (used by stream_progress = serialized)
  std::vector<DevicePart> parts;
  bool operator==(const StreamEntry&) const = default;
};

enum MemberFlag : uint16_t {
  kCreated = 1,
  kConnectReached = 2,
  kFinalized = 4,
  kDestroyed = 8,
  kAborted = 16,
  // A non-symmetric collective ran on the comm (its connections exist), also with runtime_connect = off
  // where no connect wait is recorded: what makes its destroy wait for the peers' (SEMANTICS.md §2).
  kConnectionsUsed = 32,
  // NCCL 2.31+: this rank joined the comm's intra-node teardown barrier (its ncclCommDestroy or
  // ncclCommFinalize ran commDestroySync without the abort flag; model::kDestroyBarrier). Never cleared.
  kTeardownBarrier = 64,
  // This rank's first one-sided call on the comm ran NCCL's signal-window registration (NCCL 2.29+).
  kRmaReady = 128,
  // ncclCommRevoke: the comm's kernels exit, and only destroy, abort and shrink may follow.
  kRevoked = 256,
};

// A rank's view of one comm it belongs to.
struct MemberState {
  uint32_t host_issued = 0;  // host slots taken
  uint32_t dev_issued = 0;   // device slots taken
  uint16_t flags = 0;        // MemberFlag bits, not an id: 16 bits as the enum's type (a new flag must fit it)
  uint32_t children = 0;     // comms this rank created from this one (split, shrink, grow): ncclComm's childCount
  uint32_t grows = 0;        // of which grows (the grow id each one needs, on the first and last rank)
  bool operator==(const MemberState&) const = default;
};

// WindowState::epochs bits: the MPI access and exposure epochs this rank holds open on the window (MPI 4.1
// sec. 12.5; issue 32 item 3). A fence epoch is open after a win_fence without mode=nosucceed; kFenceTransfers:
// a transfer of the fence epoch (none of a lock or start epoch) was issued since the last fence.
enum EpochFlag : uint8_t {
  kFenceEpoch = 1,
  kFenceTransfers = 2,
  kLockAllEpoch = 4,
  kStartEpoch = 8,  // MPI_Win_start ... MPI_Win_complete: an access epoch
  kPostEpoch = 16,  // MPI_Win_post ... MPI_Win_wait: an exposure epoch
};

struct WindowState {
  int32_t comm = 0;
  int32_t buffer = 0;
  uint8_t flag = 0;            // model::RegFlag
  uint8_t count = 0;           // registered this many times
  uint8_t epochs = 0;          // EpochFlag bits (mpi windows)
  std::vector<int32_t> locks;  // mpi: the targets (world ranks) this rank holds a lock of, sorted
  bool operator==(const WindowState&) const = default;
};

// P2pState::connect_reached bits above bit 0: the directions this rank's first send/recv call or group
// with the peer set up (nccl comms with runtime_connect = on).
inline constexpr uint8_t kConnectSends = 2;
inline constexpr uint8_t kConnectReceives = 4;

struct P2pState {
  int32_t comm = 0;
  int32_t peer = 0;
  uint32_t tag = 0;             // mpi: one record per message tag (messages of one tag match in order); nccl: 0
  uint32_t sends = 0;           // to peer
  uint32_t recvs = 0;           // from peer
  uint8_t connect_reached = 0;  // bit 0; kConnectSends, kConnectReceives: what the first call or group set up
  uint32_t signals = 0;         // one-sided signals received from peer
  uint32_t signals_taken = 0;   // of which waits consumed this many
  bool operator==(const P2pState&) const = default;
};

struct BufferState {
  uint32_t alloc_call = 0;  // 0: the implicit plain buffer; else the allocating call's id + 1
  uint8_t freed = 0;
  bool operator==(const BufferState&) const = default;
};

struct RankState {
  std::vector<ThreadState> threads;
  std::vector<std::vector<StreamEntry>> streams;  // by stream id; front is the head
  std::vector<MemberState> members;               // by the rank's local comm index
  std::vector<WindowState> windows;               // sorted by (comm, buffer, flag)
  std::vector<P2pState> p2p;                      // sorted by (comm, peer, tag)
  std::vector<BufferState> buffers;               // by buffer id
  uint32_t next_seq = 0;
  // The first rank of a `process` whose one host thread drives several ranks (model::ProcessInstance)
  // keeps the process's state here: the index (in the process's ranks) of the rank whose call the
  // thread issues next, and bit i set when rank i issued a group in the current round of groups (one
  // ncclGroupStart/End around the per-device calls; a call outside a group clears it). 0 elsewhere.
  uint32_t process_turn = 0;
  uint32_t process_grouped = 0;
  // mpi_progress = weak: the rooted collectives (comm, host slot) this rank left early and has not
  // entered MPI since; sorted. Its next MPI call empties it.
  std::vector<std::pair<int32_t, uint32_t>> left_early;
  bool operator==(const RankState&) const = default;
};

// First arrival at a slot that not every member has reached yet: what later arrivals must match.
struct OpenSlot {
  uint32_t call = 0;
  uint32_t arrived = 0;  // members that took this slot; it completes when all have (O(1), not a scan)
  uint64_t count = 0;
  uint8_t symmetric = 0;
  std::vector<std::pair<int32_t, int32_t>> split_children;  // (rank, child comm or -1)
  bool operator==(const OpenSlot&) const = default;
};

struct CommState {
  // Members that reached the runtime connect / entered destroy (or abort): counts of the members'
  // flags, so that a wait on every member is one comparison, not a scan of the comm.
  uint32_t connected = 0;
  uint32_t torn_down = 0;
  uint32_t grow_ids = 0;   // grow ids handed out on this comm (grow_id)
  uint32_t host_base = 0;  // host slots below this are complete
  std::vector<OpenSlot> host_open;
  uint32_t dev_base = 0;  // device slots below this were reached by every member
  std::vector<OpenSlot> dev_open;
  bool operator==(const CommState&) const = default;
};

// A vector of sub-states (the ranks, the comms, the store keys of a State) that notes which elements
// were handed out for writing. The depth-first search uses it twice: its visited set re-encodes only
// the sub-states a step changed (state_tree.h shares unchanged ones between states), and it undoes
// steps by restoring the few sub-states they changed instead of copying whole states. Reading through
// a const State costs nothing extra; writing (any non-const access) notes the element. A copy is a
// plain value with no tracking state.
template <class T>
class Tracked {
 public:
  static constexpr uint32_t kNoId = UINT32_MAX;
  using value_type = T;
  using const_iterator = typename std::vector<T>::const_iterator;

  Tracked() = default;
  Tracked(const Tracked& o) : v_(o.v_), ids_(o.v_.size(), kNoId), all_changed_(true) {}
  Tracked& operator=(const Tracked& o) {
    if (this != &o) {
      v_ = o.v_;
      reset_tracking();
    }
    return *this;
  }
  Tracked(Tracked&&) noexcept = default;
  Tracked& operator=(Tracked&& o) noexcept {
    v_ = std::move(o.v_);
    reset_tracking();  // ids and changes described the other object's history
    return *this;
  }

  size_t size() const { return v_.size(); }
  bool empty() const { return v_.empty(); }
  const T& operator[](size_t i) const { return v_[i]; }
  T& operator[](size_t i) {
    note(i);
    return v_[i];
  }
  const_iterator begin() const { return v_.cbegin(); }
  const_iterator end() const { return v_.cend(); }
  // Writing through iterators notes every element (range-for calls begin() once).
  typename std::vector<T>::iterator begin() {
    for (size_t i = 0; i < v_.size(); ++i) note(i);
    return v_.begin();
  }
  typename std::vector<T>::iterator end() { return v_.end(); }
  void resize(size_t n) {
    v_.resize(n);
    reset_tracking();
  }
  void push_back(T x) {
    v_.push_back(std::move(x));
    reset_tracking();
  }
  const std::vector<T>& values() const { return v_; }
  bool operator==(const Tracked& o) const { return v_ == o.v_; }

  // --- for the search (search.cpp, state_tree.h) ---
  // The id the visited set gave element `i`'s encoding, or kNoId when it changed since.
  uint32_t id(size_t i) const { return ids_[i]; }
  void set_id(size_t i, uint32_t id) { ids_[i] = id; }
  // Elements whose id changed since clear_changed() (with repeats), unless all_changed().
  const std::vector<uint32_t>& changed() const { return changed_; }
  bool all_changed() const { return all_changed_; }
  void clear_changed() {
    changed_.clear();
    all_changed_ = false;
  }
  // Undo: from a checkpoint on, the first write to an element after each checkpoint saves its value;
  // undo(mark) restores every element written since the checkpoint that returned `mark`.
  size_t checkpoint() {
    if (!journaling_) {
      journaling_ = true;
      stamps_.assign(v_.size(), 0);
    }
    ++epoch_;
    return saved_;
  }
  void undo(size_t mark) {
    while (saved_ > mark) {
      Saved& e = journal_[--saved_];
      v_[e.index] = e.value;  // a copy into the element's own storage: no allocation once warm
      if (ids_[e.index] != e.id) {
        ids_[e.index] = e.id;
        changed_.push_back(e.index);
      }
    }
    ++epoch_;  // a write after the undo is the first since every live checkpoint's view of it
  }
  size_t journal_size() const { return saved_; }

 private:
  struct Saved {
    uint32_t index = 0;
    uint32_t id = 0;
    T value{};
  };
  void note(size_t i) {
    if (journaling_ && stamps_[i] != epoch_) {
      stamps_[i] = epoch_;
      // Entries past saved_ are kept with their storage, so that saving reuses it.
      if (saved_ == journal_.size()) journal_.emplace_back();
      Saved& e = journal_[saved_++];
      e.index = static_cast<uint32_t>(i);
      e.id = ids_[i];
      e.value = v_[i];
    }
    if (ids_[i] != kNoId) {
      changed_.push_back(static_cast<uint32_t>(i));
      ids_[i] = kNoId;
    }
  }
  void reset_tracking() {
    ids_.assign(v_.size(), kNoId);
    changed_.clear();
    all_changed_ = true;
    journaling_ = false;
    journal_.clear();
    saved_ = 0;
    stamps_.clear();
  }

  std::vector<T> v_;
  std::vector<uint32_t> ids_;
  std::vector<uint32_t> changed_;
  bool all_changed_ = true;
  bool journaling_ = false;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> stamps_;  // [i]: the epoch element i was last saved in
  std::vector<Saved> journal_;    // [0, saved_): the saved values, oldest first
  size_t saved_ = 0;
};

struct State {
  Tracked<RankState> ranks;
  Tracked<CommState> comms;
  Tracked<uint32_t> store;  // host store, by key id: 0 unset; else set (1) or the barrier arrivals
  bool operator==(const State&) const = default;

  // Undo of the depth-first search (see Tracked): a checkpoint of all three parts, and back to it.
  struct Mark {
    size_t ranks = 0, comms = 0, store = 0;
  };
  Mark checkpoint() { return Mark{ranks.checkpoint(), comms.checkpoint(), store.checkpoint()}; }
  void undo(const Mark& m) {
    ranks.undo(m.ranks);
    comms.undo(m.comms);
    store.undo(m.store);
  }
};

// Canonical encoding: equal states give equal bytes, and decode(encode(s)) == s.
std::string encode_state(const State& s);
State decode_state(std::string_view bytes);

}  // namespace collmc::checker
