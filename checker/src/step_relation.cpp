// SEMANTICS.md §4-§6 as a next-state function: which steps are enabled in a state (guards, waits,
// device completions) and the successor each leads to. Each step is atomic; the effects of calls are
// in call_effects.cpp, the reports on stuck states in diagnosis.cpp.
#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>

#include "semantics_internal.h"

namespace collmc::checker {

using model::Call;
using model::OpClass;
using model::OpKind;
using model::Profile;
using model::Verdict;

// ---------------------------------------------------------------------------------------------

namespace {
// Calls whose effect reads or removes the rank's pending device work (see IndependenceInfo). With comms
// of both launchOrderImplicit settings (NCCL 2.31+), a stream-ordered call reads it too: whether its
// kernels may overlap with the other setting's depends on what is still pending (call_effects.cpp).
bool reads_device(const Call& c, Profile profile, bool launch_order_mixed) {
  if (launch_order_mixed && profile == Profile::Nccl) {
    const OpClass k = model::op_class(c.kind, profile);
    if (k == OpClass::StreamOrdered || k == OpClass::StreamThenSync) return true;
  }
  switch (c.kind) {
    case OpKind::Free:
    case OpKind::CudaFree:
    case OpKind::Abort:
    case OpKind::Revoke:  // drops its comm's running kernels, as abort does
      return true;
    case OpKind::Deregister:
      return profile == Profile::Nccl;
    default:
      return false;
  }
}

bool launch_order_mixed(const model::World& world) {
  if (world.knobs.nccl_version < model::kCollConfig) return false;
  bool on = false;
  bool off = false;
  for (const auto& c : world.comms)
    if (c.profile == Profile::Nccl) (c.launch_order_implicit ? on : off) = true;
  return on && off;
}
}  // namespace

bool has_progress_dependent_calls(const model::World& world) {
  return std::any_of(world.calls.begin(), world.calls.end(), [&](const model::Call& c) {
    return (c.kind == model::OpKind::Broadcast || c.kind == model::OpKind::Reduce) && c.comm >= 0 &&
           world.profile_of(c) == Profile::Mpi &&
           world.comms[static_cast<size_t>(c.comm)].mode == model::CommMode::Blocking;
  });
}

std::vector<model::MpiProgress> progress_models(const model::World& world) {
  using model::MpiProgress;
  if (world.knobs.mpi_progress != MpiProgress::Portable) return {world.knobs.mpi_progress};
  if (!has_progress_dependent_calls(world)) return {MpiProgress::Sync};
  return {MpiProgress::Sync, MpiProgress::Strong, MpiProgress::Weak};
}

Semantics::Semantics(const model::World& world)
    : Semantics(world, world.knobs.mpi_progress == model::MpiProgress::Portable ? model::MpiProgress::Sync
                                                                                : world.knobs.mpi_progress) {}

Semantics::Semantics(const model::World& world, model::MpiProgress progress)
    : launch_order_mixed_(launch_order_mixed(world)),
      world_(world),
      mpi_progress_(progress == model::MpiProgress::Portable ? model::MpiProgress::Sync : progress),
      control_(compile_control(world)) {
  // Comms are visited in id order, so every rank's list is sorted (local_index searches it).
  member_comms_.resize(static_cast<size_t>(world.ranks));
  for (const auto& c : world.comms)
    for (int m : c.members) member_comms_[static_cast<size_t>(m)].push_back(c.id);
  reads_device_ahead_ = control_.lookahead([&](const ControlEdge& e) {
    if (e.kind == ControlEdge::Kind::Call)
      return reads_device(world_.calls[static_cast<size_t>(e.call)],
                          world_.profile_of(world_.calls[static_cast<size_t>(e.call)]), launch_order_mixed_);
    if (e.kind == ControlEdge::Kind::Group)
      for (int c : control_.groups[static_cast<size_t>(e.group)])
        if (reads_device(world_.calls[static_cast<size_t>(c)], world_.profile_of(world_.calls[static_cast<size_t>(c)]),
                         launch_order_mixed_))
          return true;
    return false;
  });
  // (rank, comm) -> the first thread seen calling on it; a second thread makes the thread-safety rule live
  // (NCCL: any call; MPI: collectives, mpi_collective).
  std::map<std::pair<int, int>, int> comm_thread;
  for (const auto& c : world_.calls) {
    if (c.comm < 0 || (world_.profile_of(c) != Profile::Nccl && !mpi_collective(c))) continue;
    auto [it, fresh] = comm_thread.emplace(std::make_pair(c.rank, c.comm), c.thread);
    if (!fresh && it->second != c.thread) threads_share_a_comm_ = true;
  }
  grouped_.assign(world_.calls.size(), false);
  for (const auto& g : control_.groups)
    for (int32_t c : g) grouped_[static_cast<size_t>(c)] = true;
}

bool Semantics::thread_live(const State& s, int rank, int thread) const {
  const int32_t node = s.ranks[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)].node;
  return node >= 0 && node != control_.threads[static_cast<size_t>(rank)][static_cast<size_t>(thread)].end;
}

// A thread stands at its end node while still blocked in its last call: it has ended once that call's
// waits hold too.
bool Semantics::thread_ended(const State& s, int rank, int thread) const {
  const ThreadState& ts = s.ranks[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)];
  return ts.node == control_.threads[static_cast<size_t>(rank)][static_cast<size_t>(thread)].end &&
         waits_hold(s, rank, ts);
}

bool Semantics::step_reads_device(const Step& step) const {
  for (int c : step_calls(step))
    if (reads_device(world_.calls[static_cast<size_t>(c)], world_.profile_of(world_.calls[static_cast<size_t>(c)]),
                     launch_order_mixed_))
      return true;
  return false;
}

bool Semantics::has_pending_device_work(const State& s, int rank) const {
  return !streams_empty(s.ranks[static_cast<size_t>(rank)]);
}

bool Semantics::may_read_device(const State& s, int rank) const {
  const auto& rs = s.ranks[static_cast<size_t>(rank)];
  for (size_t t = 0; t < rs.threads.size(); ++t) {
    const ThreadState& ts = rs.threads[t];
    if (ts.node < 0 ? reads_device_ahead_.from_entry(control_.threads[static_cast<size_t>(rank)][t].entry)
                    : reads_device_ahead_.ahead(control_, ts))
      return true;
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
    control_.enter(rs.threads[0], threads[0].entry);
    rs.streams.resize(world_.streams.size());
    for (int c : member_comms_[static_cast<size_t>(r)]) {
      const model::CommInstance& comm = world_.comms[static_cast<size_t>(c)];
      MemberState m;
      if (!comm.uninit) m.flags = kCreated;
      // `history`: the slots every member completed before, and the connections they set up
      // (docs/TRACES.md, "What the import keeps"); the comm's calls here count on from there.
      m.host_issued = comm.start_host;
      m.dev_issued = comm.start_device;
      if (comm.start_connected)
        m.flags |= world_.knobs.runtime_connect ? kConnectionsUsed | kConnectReached : kConnectionsUsed;
      rs.members.push_back(m);
    }
    rs.buffers.resize(world_.buffers.size());
  }
  s.comms.resize(world_.comms.size());
  for (size_t c = 0; c < world_.comms.size(); ++c) {
    const model::CommInstance& comm = world_.comms[c];
    s.comms[c].host_base = comm.start_host;
    s.comms[c].dev_base = comm.start_device;
    if (comm.start_connected && world_.knobs.runtime_connect)
      s.comms[c].connected = static_cast<uint32_t>(comm.members.size());
  }
  s.store.resize(world_.keys.size());
  return s;
}

int Semantics::process_turn(const State& s, int process) const {
  const auto& ranks = world_.processes[static_cast<size_t>(process)].ranks;
  const size_t n = ranks.size();
  const size_t first = s.ranks[static_cast<size_t>(ranks.front())].process_turn;
  for (size_t i = 0; i < n; ++i) {
    const size_t k = (first + i) % n;
    const int r = ranks[k];
    if (s.ranks[static_cast<size_t>(r)].threads[0].node != control_.threads[static_cast<size_t>(r)][0].end)
      return static_cast<int>(k);
  }
  return -1;
}

int Semantics::process_holder(const State& s, int rank, bool group) const {
  const int p = world_.process_of(rank);
  if (p < 0) return -1;
  const auto& ranks = world_.processes[static_cast<size_t>(p)].ranks;
  const RankState& ps = s.ranks[static_cast<size_t>(ranks.front())];  // keeps the process's state
  const auto me = static_cast<size_t>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
  // The thread is inside another rank's blocking call, unless that call is a group of this round and
  // this step is the next device's part of the same ncclGroupStart/End.
  const bool joins_round = group && !((ps.process_grouped >> me) & 1u);
  for (size_t j = 0; j < ranks.size(); ++j) {
    const int q = ranks[j];
    if (q == rank || waits_hold(s, q, s.ranks[static_cast<size_t>(q)].threads[0])) continue;
    if (joins_round && ((ps.process_grouped >> j) & 1u)) continue;
    return q;
  }
  const int turn = process_turn(s, p);
  return turn == static_cast<int>(me) || turn < 0 ? -1 : ranks[static_cast<size_t>(turn)];
}

bool Semantics::host_slot_complete(const State& s, int comm, uint32_t slot) const {
  return s.comms[static_cast<size_t>(comm)].host_base > slot;
}

bool Semantics::connect_complete(const State& s, int comm) const {
  return s.comms[static_cast<size_t>(comm)].connected == world_.comms[static_cast<size_t>(comm)].members.size();
}

bool Semantics::wait_holds(const State& s, int rank, const Wait& w) const {
  const auto& rs = s.ranks[static_cast<size_t>(rank)];
  switch (w.kind) {
    case WaitKind::HostSlot:
      return host_slot_complete(s, w.comm, w.slot);
    case WaitKind::Connect:
      return connect_complete(s, w.comm);
    case WaitKind::P2pConnect: {
      const P2pState* other = find_p2p(s.ranks[w.peer], w.comm, rank);
      return other && other->connect_reached;
    }
    case WaitKind::DevDone: {
      for (const auto& st : rs.streams)
        for (const auto& e : st)
          for (const auto& p : e.parts)
            if (!p.done && p.kind == PartKind::Collective && p.comm == w.comm && p.slot == w.slot) return false;
      return true;
    }
    case WaitKind::P2pHost: {
      const P2pState* other = find_p2p(s.ranks[w.peer], w.comm, rank, w.tag);
      if (!other) return false;
      return w.dir == 0 ? other->recvs > w.slot : other->sends > w.slot;
    }
    case WaitKind::Teardown:
      if (w.count == kTeardownBarrierWait) {  // NCCL 2.31+: every member joined the intra-node barrier
        for (int m : world_.comms[w.comm].members)
          if (owes_teardown(w,
                            s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, w.comm))].flags))
            return false;
        return true;
      }
      return s.comms[w.comm].torn_down == world_.comms[w.comm].members.size();
    case WaitKind::StoreKey:
      return s.store[w.slot] >= w.count;
    case WaitKind::P2pAny:
      return false;  // a MatchAny step removes it
    case WaitKind::P2pProbe:
      // A message it matches is waiting: a sender issued more sends of a matching tag to this rank than this
      // rank has received.
      for (int sender : world_.comms[w.comm].members) {
        if (w.dir == 2 && sender != w.peer) continue;
        for (const P2pState& sent : s.ranks[static_cast<size_t>(sender)].p2p) {
          if (sent.comm != w.comm || sent.peer != rank || (w.tag != kWaitAnyTag && sent.tag != w.tag)) continue;
          const P2pState* received = find_p2p(rs, w.comm, sender, sent.tag);
          if (sent.sends > (received != nullptr ? received->recvs : 0)) return true;
        }
      }
      return false;
    case WaitKind::AbortDrain:
      return !has_any_part(rs);
    case WaitKind::GrowId:
      return s.comms[w.comm].grow_ids > w.slot;
    case WaitKind::MpiProgress:
      return early_ranks_progressed(s, w.comm, w.slot);
  }
  return false;
}

bool Semantics::early_ranks_progressed(const State& s, int comm, uint32_t slot) const {
  for (int m : world_.comms[static_cast<size_t>(comm)].members) {
    const auto& rs = s.ranks[static_cast<size_t>(m)];
    if (!left_early(rs, comm, slot)) continue;
    // A rank that ended called MPI_Finalize, which completes its messages.
    for (size_t t = 0; t < rs.threads.size(); ++t)
      if (!thread_ended(s, m, static_cast<int>(t))) return false;
  }
  return true;
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
  // A framework-level group (`serialized`, PyTorch's ProcessGroupNCCL): a call waits while another
  // thread of the rank is inside a call on the group (the threads' calls are serialised per group).
  if (c.comm >= 0 && world_.comms[static_cast<size_t>(c.comm)].serialized)
    for (size_t t = 0; t < rs.threads.size(); ++t)
      for (const Wait& w : rs.threads[t].waits)
        if (w.kind != WaitKind::StoreKey && w.comm == c.comm && !wait_holds(s, rank, w)) {
          if (why)
            *why = "waits for thread " + world_.programs[static_cast<size_t>(rank)].threads[t].name +
                   "'s call on serialized group " + world_.comm_name(c.comm) + " (" +
                   call_ref(static_cast<int>(w.call)) + ") to return";
          return false;
        }
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
  switch (model::op_class(c.kind, world_.profile_of(c))) {
    case OpClass::DeviceSync:
    case OpClass::LocalAfterSync: {
      // The message is built only when asked for: this runs for every enabled-step query.
      if (c.kind == OpKind::SyncStream) {
        if (rs.streams[static_cast<size_t>(c.stream)].empty()) return true;
        if (why) *why = "waits for stream " + world_.streams[static_cast<size_t>(c.stream)] + " to drain";
      } else if (c.kind == OpKind::Finalize || c.kind == OpKind::Destroy) {
        if (!has_part(rs, c.comm)) return true;
        if (why) *why = "waits for its device work on " + world_.comm_name(c.comm) + " to drain";
      } else if (c.kind == OpKind::CudaFree && world_.process_of(rank) >= 0) {
        // cudaFree stalls behind the work of every device its process drives (see process_devices_idle).
        if (process_devices_idle(s, rank)) return true;
        if (why)
          *why = "waits for every stream of every device of process " +
                 world_.processes[static_cast<size_t>(world_.process_of(rank))].name + " to drain";
      } else {
        if (streams_empty(rs)) return true;
        if (why) *why = "waits for every stream of the device to drain";
      }
      return false;
    }
    default:
      return true;
  }
}

void Semantics::host_steps(const State& s, int r, std::vector<Step>& out) const {
  const auto& rs = s.ranks[static_cast<size_t>(r)];
  for (size_t t = 0; t < rs.threads.size(); ++t) {
    const ThreadState& ts = rs.threads[t];
    if (ts.node < 0) continue;
    const size_t n_edges = control_.edge_count(ts);
    if (n_edges == 0 || !waits_hold(s, r, ts)) continue;
    // Search order (the set of steps is the same): rank r tries the alternatives of a choice
    // starting at r mod n, so that a depth-first search meets ranks that chose differently (the
    // cross orders that deadlock) early instead of after every rank agreed.
    const bool choice = control_.edge_at(ts, 0).kind == ControlEdge::Kind::Choice;
    const size_t first = choice ? static_cast<size_t>(r) % n_edges : 0;
    for (size_t i = 0; i < n_edges; ++i) {
      const size_t e = (first + i) % n_edges;
      const ControlEdge& edge = control_.edge_at(ts, e);
      Step step;
      step.rank = r;
      step.thread = static_cast<int32_t>(t);
      step.edge = static_cast<int32_t>(e);
      switch (edge.kind) {
        case ControlEdge::Kind::Choice:
          step.kind = StepKind::Choose;
          break;
        case ControlEdge::Kind::Spawn:
          step.kind = StepKind::Spawn;
          step.spawned_thread = edge.thread;
          break;
        case ControlEdge::Kind::Call:
          step.kind = StepKind::Issue;
          step.call = edge.call;
          if (t == 0 && process_holder(s, r, false) >= 0) continue;
          if (!guard_holds(s, r, world_.calls[static_cast<size_t>(edge.call)])) continue;
          break;
        case ControlEdge::Kind::Group: {
          if (t == 0 && process_holder(s, r, true) >= 0) continue;
          step.kind = StepKind::IssueGroup;
          step.group = edge.group;
          const auto& calls = control_.groups[static_cast<size_t>(edge.group)];
          if (!std::all_of(calls.begin(), calls.end(),
                           [&](int32_t c) { return guard_holds(s, r, world_.calls[static_cast<size_t>(c)]); }))
            continue;
          break;
        }
      }
      out.push_back(step);
    }
  }
}

void Semantics::enabled(const State& s, std::vector<Step>& out, int /*first_rank*/) const {
  for (int r = 0; r < world_.ranks; ++r) host_steps(s, r, out);
  for (int r = 0; r < world_.ranks; ++r) device_steps(s, r, out);
  for (int r = 0; r < world_.ranks; ++r) match_any_steps(s, r, out);
}

void Semantics::enabled_of_rank(const State& s, int rank, std::vector<Step>& host,
                                std::vector<Step>& completions) const {
  host_steps(s, rank, host);
  match_any_steps(s, rank, host);
  device_steps(s, rank, completions);
}

const Wait* Semantics::waiting_send(const State& s, int receiver, int comm, int sender, uint32_t tag,
                                    uint32_t pair) const {
  for (const auto& sts : s.ranks[static_cast<size_t>(sender)].threads)
    for (const auto* list : {&sts.sent, &sts.waits})
      for (const auto& sw : *list)
        if (sw.kind == WaitKind::P2pHost && sw.dir == 0 && sw.comm == comm && sw.peer == receiver && sw.tag == tag &&
            sw.slot == pair)
          return &sw;
  return nullptr;
}

namespace {
// Whether a wildcard receive's wait may take a send of `sender` with `tag` (MPI 4.1 sec. 3.2.4: source and
// tag each equal, or MPI_ANY_SOURCE, MPI_ANY_TAG).
bool receive_may_take(const Wait& recv, int sender, uint32_t tag) {
  return (recv.dir == 1 || recv.peer == sender) && (recv.tag == kWaitAnyTag || recv.tag == tag);
}
}  // namespace

// A thread blocked in wildcard receives (MPI_ANY_SOURCE, MPI_ANY_TAG, or a receive posted behind one) takes
// a message for each of them: one step per receive and message it may take, so the search tries every
// match. MPI 4.1 sec. 3.5 fixes which: of one sender thread's sends it may take (same comm, matching
// source and tag), the one posted first and not yet received (non-overtaking); and a message goes to the
// receive posted first among those of the thread that may take it.
void Semantics::match_any_steps(const State& s, int r, std::vector<Step>& out) const {
  const auto& rs = s.ranks[static_cast<size_t>(r)];
  for (size_t t = 0; t < rs.threads.size(); ++t) {
    const auto& waits = rs.threads[t].waits;
    for (size_t i = 0; i < waits.size(); ++i) {
      const Wait& any = waits[i];
      if (any.kind != WaitKind::P2pAny) continue;
      for (int sender : world_.comms[any.comm].members) {
        if (any.dir == 2 && sender != any.peer) continue;
        for (const auto& sender_thread : s.ranks[static_cast<size_t>(sender)].threads) {
          // The first send of this thread the receive may take that is not yet received.
          // Its buffered messages were sent before the sends it is blocked in.
          const Wait* first = nullptr;
          uint32_t received = 0;
          for (const auto* list : {&sender_thread.sent, &sender_thread.waits}) {
            for (const auto& sw : *list) {
              if (sw.kind != WaitKind::P2pHost || sw.dir != 0 || sw.comm != any.comm || sw.peer != r ||
                  !receive_may_take(any, sender, sw.tag))
                continue;
              const P2pState* mine = find_p2p(rs, any.comm, sender, sw.tag);
              received = mine != nullptr ? mine->recvs : 0;
              if (sw.slot < received) continue;  // received already
              first = &sw;
              break;
            }
            if (first != nullptr) break;
          }
          // An older send of that tag (another thread's) comes first.
          if (first == nullptr || first->slot != received) continue;
          const bool posted_earlier =
              std::any_of(waits.begin(), waits.begin() + static_cast<std::ptrdiff_t>(i), [&](const Wait& w) {
                return w.kind == WaitKind::P2pAny && w.comm == any.comm && receive_may_take(w, sender, first->tag);
              });
          if (posted_earlier) continue;
          Step step;
          step.kind = StepKind::MatchAny;
          step.rank = r;
          step.thread = static_cast<int32_t>(t);
          step.comm = any.comm;
          step.peer = sender;
          step.slot = first->slot;
          step.tag = first->tag;
          step.wait = static_cast<int32_t>(i);
          out.push_back(step);
        }
      }
    }
  }
}

std::optional<Violation> Semantics::apply_match_any(State& s, const Step& step) const {
  const Wait* send = waiting_send(s, step.rank, step.comm, step.peer, step.tag, step.slot);
  if (send == nullptr) throw std::logic_error("MatchAny step without its send");
  const uint64_t send_count = send->count;
  const uint32_t send_call = send->call;
  auto& rs = s.ranks[step.rank];
  auto& waits = rs.threads[step.thread].waits;
  if (static_cast<size_t>(step.wait) >= waits.size() || waits[step.wait].kind != WaitKind::P2pAny)
    throw std::logic_error("MatchAny step without its receive");
  const Wait w = waits[step.wait];
  waits.erase(waits.begin() + step.wait);
  ++p2p_record(rs, w.comm, step.peer, step.tag).recvs;
  const Call& rc = world_.calls[w.call];
  const Call& sc = world_.calls[send_call];
  const std::string diff = pair_difference(sc, send_count, rc, w.count);
  if (diff.empty()) return std::nullopt;
  return Violation{model::Verdict::Mismatch,
                   "send/recv pair " + std::to_string(step.slot) + " between ranks " + std::to_string(step.peer) +
                       " and " + std::to_string(step.rank) + " on " + world_.comm_name(w.comm) + " differs: " + diff +
                       " (" + call_ref(static_cast<int>(send_call)) + ", " + call_ref(static_cast<int>(w.call)) + ")",
                   step.rank,
                   step.thread,
                   static_cast<int>(w.call),
                   std::nullopt};
}

std::string Semantics::pair_difference(const Call& first, uint64_t first_count, const Call& second,
                                       uint64_t second_count) const {
  if (world_.dtype_unknown(first.dtype) || world_.dtype_unknown(second.dtype)) return {};
  const Call& recv = first.kind == OpKind::Recv ? first : second;
  const uint64_t sent = first.kind == OpKind::Recv ? second_count : first_count;
  const uint64_t room = first.kind == OpKind::Recv ? first_count : second_count;
  const bool mpi = world_.profile_of(recv) == model::Profile::Mpi;
  if (mpi ? sent > room : first_count != second_count)
    return "count " + std::to_string(first_count) + " and " + std::to_string(second_count) +
           (mpi ? " (the message is longer than the receive buffer: MPI 4.1 sec. 3.2.4)" : "");
  if (first.dtype != second.dtype)
    return "dtype " + world_.dtypes[static_cast<size_t>(first.dtype)] + " and " +
           world_.dtypes[static_cast<size_t>(second.dtype)];
  return {};
}

std::optional<Violation> Semantics::apply(State& s, const Step& step) const {
  if (step.kind == StepKind::MatchAny) return apply_match_any(s, step);
  // Choices, spawns and completions return no violation (may_violate in next_state.h).
  if (step.kind == StepKind::Complete) {
    for (int m : world_.comms[step.comm].members) complete_part(s, m, PartKind::Collective, step.comm, step.slot, -1);
    return std::nullopt;
  }
  if (step.kind == StepKind::CompletePair) {
    // One step kind for the three completions between two ranks; the running part tells them apart.
    if (running_part(s, step.rank, PartKind::OneSided, step.comm, step.slot, step.peer)) {
      // A put or signal needs nothing of the peer: it completes and counts one signal there.
      complete_part(s, step.rank, PartKind::OneSided, step.comm, step.slot, step.peer);
      ++p2p_record(s.ranks[static_cast<size_t>(step.peer)], step.comm, step.rank).signals;
    } else if (running_part(s, step.rank, PartKind::SignalWait, step.comm, step.slot, step.peer)) {
      uint64_t count = 0;
      for (const StreamEntry* e : running_entries(s.ranks[step.rank]))
        for (const auto& p : e->parts)
          if (!p.done && p.kind == PartKind::SignalWait && p.comm == step.comm && p.slot == step.slot &&
              p.peer == step.peer)
            count = p.count;
      complete_part(s, step.rank, PartKind::SignalWait, step.comm, step.slot, step.peer);
      p2p_record(s.ranks[static_cast<size_t>(step.rank)], step.comm, step.peer).signals_taken +=
          static_cast<uint32_t>(count);
    } else {
      complete_part(s, step.rank, PartKind::Send, step.comm, step.slot, step.peer);
      complete_part(s, step.peer, PartKind::Recv, step.comm, step.slot, step.rank);
    }
    return std::nullopt;
  }
  auto& rs = s.ranks[step.rank];
  ThreadState& ts = rs.threads[step.thread];
  const ControlEdge& edge = control_.edge_at(ts, step.edge);
  ts.waits.clear();
  control_.take(ts, step.edge);
  switch (edge.kind) {
    case ControlEdge::Kind::Choice:
      return std::nullopt;
    case ControlEdge::Kind::Spawn:
      control_.enter(rs.threads[static_cast<size_t>(edge.thread)],
                     control_.threads[step.rank][static_cast<size_t>(edge.thread)].entry);
      return std::nullopt;
    case ControlEdge::Kind::Call:
      if (step.thread == 0) pass_process_turn(s, step.rank, false);
      return apply_calls(*this, s, step.rank, step.thread, std::span<const int32_t>(&edge.call, 1));
    case ControlEdge::Kind::Group:
      if (step.thread == 0) pass_process_turn(s, step.rank, true);
      return apply_calls(*this, s, step.rank, step.thread, control_.groups[static_cast<size_t>(edge.group)]);
  }
  return std::nullopt;
}

void Semantics::pass_process_turn(State& s, int rank, bool group) const {
  const int p = world_.process_of(rank);
  if (p < 0) return;
  const auto& ranks = world_.processes[static_cast<size_t>(p)].ranks;
  RankState& ps = s.ranks[static_cast<size_t>(ranks.front())];  // keeps the process's state
  const auto me = static_cast<uint32_t>(std::find(ranks.begin(), ranks.end(), rank) - ranks.begin());
  if (!group || ((ps.process_grouped >> me) & 1u)) ps.process_grouped = 0;  // outside a group, or the next round
  if (group) ps.process_grouped |= 1u << me;
  ps.process_turn = (me + 1) % static_cast<uint32_t>(ranks.size());
}

std::vector<const StreamEntry*> Semantics::running_entries(const RankState& rs) const {
  std::vector<const StreamEntry*> out;
  find_running_entry(rs, [&](const StreamEntry& e) {
    out.push_back(&e);
    return false;
  });
  return out;
}

bool Semantics::running_part(const State& s, int rank, PartKind kind, int comm, uint32_t slot, int peer) const {
  return find_running_entry(s.ranks[static_cast<size_t>(rank)], [&](const StreamEntry& e) {
    for (const auto& p : e.parts)
      if (!p.done && p.kind == kind && p.comm == comm && p.slot == slot && (peer < 0 || p.peer == peer)) return true;
    return false;
  });
}

void Semantics::device_steps(const State& s, int r, std::vector<Step>& out) const {
  find_running_entry(s.ranks[static_cast<size_t>(r)], [&](const StreamEntry& e) {
    for (const auto& p : e.parts) {
      if (p.done) continue;
      Step step;
      step.rank = r;
      step.comm = p.comm;
      step.slot = p.slot;
      if (p.kind == PartKind::Collective) {
        const auto& members = world_.comms[p.comm].members;
        if (members.front() != r) continue;
        bool all = std::all_of(members.begin(), members.end(),
                               [&](int m) { return running_part(s, m, PartKind::Collective, p.comm, p.slot, -1); });
        if (!all) continue;
        step.kind = StepKind::Complete;
        out.push_back(step);
      } else if (p.kind == PartKind::Send) {
        if (!running_part(s, p.peer, PartKind::Recv, p.comm, p.slot, r)) continue;
        step.kind = StepKind::CompletePair;
        step.peer = p.peer;
        out.push_back(step);
      } else if (p.kind == PartKind::OneSided) {
        // A put or signal needs nothing of the peer: it completes and counts one signal there.
        step.kind = StepKind::CompletePair;
        step.peer = p.peer;
        step.call = static_cast<int32_t>(p.call);
        out.push_back(step);
      } else if (p.kind == PartKind::SignalWait) {
        const P2pState* from = find_p2p(s.ranks[static_cast<size_t>(r)], p.comm, p.peer);
        if (from == nullptr || from->signals - from->signals_taken < p.count) continue;
        step.kind = StepKind::CompletePair;
        step.peer = p.peer;
        step.call = static_cast<int32_t>(p.call);
        out.push_back(step);
      }
    }
    return false;
  });
}

void Semantics::complete_part(State& s, int rank, PartKind kind, int comm, uint32_t slot, int peer) const {
  auto& rs = s.ranks[static_cast<size_t>(rank)];
  for (auto& st : rs.streams) {
    if (st.empty()) continue;
    for (auto& p : st.front().parts)
      if (!p.done && p.kind == kind && p.comm == comm && p.slot == slot && (peer < 0 || p.peer == peer)) {
        p.done = 1;
        const auto& parts = st.front().parts;
        if (std::all_of(parts.begin(), parts.end(), [](const DevicePart& q) { return q.done; })) {
          st.erase(st.begin());
          drop_aborted_running(rs, rank);  // work of an aborted comm that starts now exits at once
        }
        return;
      }
  }
}

void Semantics::drop_aborted_running(RankState& rs, int rank) const {
  auto aborted = [&](const DevicePart& p) {
    return (rs.members[static_cast<size_t>(local_index(rank, p.comm))].flags & (kAborted | kRevoked)) != 0;
  };
  for (bool changed = true; changed;) {
    changed = false;
    find_running_entry(rs, [&](const StreamEntry& running) {
      for (auto& p : const_cast<StreamEntry&>(running).parts)  // rs is ours to write
        if (!p.done && aborted(p)) {
          p.done = 1;
          changed = true;
        }
      return false;
    });
    for (auto& st : rs.streams)
      if (!st.empty() &&
          std::all_of(st.front().parts.begin(), st.front().parts.end(), [](const DevicePart& q) { return q.done; }))
        st.erase(st.begin());
  }
}

bool Semantics::process_devices_idle(const State& s, int rank) const {
  for (int q : world_.processes[static_cast<size_t>(world_.process_of(rank))].ranks)
    if (!streams_empty(s.ranks[static_cast<size_t>(q)])) return false;
  return true;
}

bool Semantics::is_final(const State& s) const {
  for (int r = 0; r < world_.ranks; ++r) {
    const auto& rs = s.ranks[static_cast<size_t>(r)];
    for (size_t t = 0; t < rs.threads.size(); ++t) {
      if (!thread_ended(s, r, static_cast<int>(t))) return false;
      // A buffered message never received: its receiver owed the matching call before MPI_Finalize (MPI 4.1
      // sec. 11.2.2), so the communication never completes.
      for (const Wait& m : rs.threads[t].sent) {
        const P2pState* got = find_p2p(s.ranks[m.peer], m.comm, r, m.tag);
        if (got == nullptr || got->recvs <= m.slot) return false;
      }
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

}  // namespace collmc::checker
