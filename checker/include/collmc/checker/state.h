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
  HostSlot,    // an HBC on `comm`, host slot `slot`: released when every member arrived
  Connect,     // the runtime connect of `comm`: released when every member reached it
  P2pConnect,  // the runtime connect of the pair (this rank, `peer`) on `comm`
  DevDone,     // barrier: this rank's device op `comm` device slot `slot` has completed
  P2pHost,     // mpi send (dir 0) / recv (dir 1) number `slot` with `peer`: released when matched
  Teardown,    // destroy of a connected `comm`: released when every member entered its destroy
  StoreKey,    // store_wait / host_barrier: released when host store key `slot` counts `count` or more
  P2pAny,      // mpi `recv COMM any` (MPI_ANY_SOURCE): never holds; a MatchAny step picks a sender and removes it
};

// What a blocked host thread waits for; a thread moves on once all its waits hold.
struct Wait {
  WaitKind kind = WaitKind::HostSlot;
  uint8_t dir = 0;
  uint16_t comm = 0;
  uint16_t peer = 0;   // P2pConnect, P2pHost: the other world rank
  uint32_t slot = 0;   // HostSlot: host slot; DevDone: device slot; P2pHost: index of the pair
  uint32_t call = 0;   // the call it is blocked in
  uint64_t count = 0;  // P2pHost: the element count, compared with the peer's when matched
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
  bool operator==(const ThreadState&) const = default;
};

// Collective: completes with every member's slot. Send/Recv: completes with its pair. OneSided (put_signal,
// signal): completes alone and counts a signal at `peer`. SignalWait: completes once `count` signals
// from `peer` on `comm` arrived (and consumes them).
enum class PartKind : uint8_t { Collective, Send, Recv, OneSided, SignalWait };

// One device operation; a group's operations on one stream form one entry (one kernel launch).
struct DevicePart {
  uint32_t call = 0;
  uint16_t comm = 0;
  PartKind kind = PartKind::Collective;
  uint8_t symmetric = 0;
  uint8_t done = 0;
  uint16_t peer = 0;   // send/recv: the other world rank
  uint32_t slot = 0;   // collective: device slot; send/recv: index of the pair
  uint64_t count = 0;  // send/recv: the element count at issue, compared with the peer's
  bool operator==(const DevicePart&) const = default;
};

struct StreamEntry {
  uint32_t seq = 0;  // issue order on this rank (used by stream_progress = serialized)
  std::vector<DevicePart> parts;
  bool operator==(const StreamEntry&) const = default;
};

enum MemberFlag : uint8_t {
  kCreated = 1,
  kConnectReached = 2,
  kFinalized = 4,
  kDestroyed = 8,
  kAborted = 16,
};

// A rank's view of one comm it belongs to.
struct MemberState {
  uint32_t host_issued = 0;  // host slots taken
  uint32_t dev_issued = 0;   // device slots taken
  uint8_t flags = 0;
  bool operator==(const MemberState&) const = default;
};

struct WindowState {
  uint16_t comm = 0;
  uint16_t buffer = 0;
  uint8_t flag = 0;   // model::RegFlag
  uint8_t count = 0;  // registered this many times
  bool operator==(const WindowState&) const = default;
};

struct P2pState {
  uint16_t comm = 0;
  uint16_t peer = 0;
  uint32_t sends = 0;  // to peer
  uint32_t recvs = 0;  // from peer
  uint8_t connect_reached = 0;
  uint32_t signals = 0;        // one-sided signals received from peer
  uint32_t signals_taken = 0;  // of which waits consumed this many
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
  std::vector<P2pState> p2p;                      // sorted by (comm, peer)
  std::vector<BufferState> buffers;               // by buffer id
  uint32_t next_seq = 0;
  bool operator==(const RankState&) const = default;
};

// First arrival at a slot that not every member has reached yet: what later arrivals must match.
struct OpenSlot {
  uint32_t call = 0;
  uint32_t arrived = 0;  // members that took this slot; it completes when all have (O(1), not a scan)
  uint64_t count = 0;
  uint8_t symmetric = 0;
  std::vector<std::pair<uint16_t, int16_t>> split_children;  // (rank, child comm or -1)
  bool operator==(const OpenSlot&) const = default;
};

struct CommState {
  // Members that reached the runtime connect / entered destroy (or abort): counts of the members'
  // flags, so that a wait on every member is one comparison, not a scan of the comm.
  uint32_t connected = 0;
  uint32_t torn_down = 0;
  uint32_t host_base = 0;  // host slots below this are complete
  std::vector<OpenSlot> host_open;
  uint32_t dev_base = 0;  // device slots below this were reached by every member
  std::vector<OpenSlot> dev_open;
  bool operator==(const CommState&) const = default;
};

struct State {
  std::vector<RankState> ranks;
  std::vector<CommState> comms;
  std::vector<uint32_t> store;  // host store, by key id: 0 unset; else set (1) or the barrier arrivals
  bool operator==(const State&) const = default;
};

// Canonical encoding: equal states give equal bytes, and decode(encode(s)) == s.
std::string encode_state(const State& s);
State decode_state(std::string_view bytes);

}  // namespace collmc::checker
