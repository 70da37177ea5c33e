// SEMANTICS.md §5 for people: what a step does, where every rank stands in a stuck state and what
// it waits for (the records the text report and the wait-for graph are built from).
#include <algorithm>
#include <sstream>

#include "semantics_internal.h"

namespace collmc::checker {

using model::Call;
using model::OpClass;
using model::OpKind;
using model::Profile;
using model::Verdict;

// ---------------------------------------------------------------------------------------------
// Reports

std::string Semantics::call_ref(int call) const {
  const Call& c = world_.calls[static_cast<size_t>(call)];
  return "`" + c.text + "` (" + c.loc.file_name() + ":" + std::to_string(c.loc.line) + ")";
}

std::vector<int> Semantics::step_calls(const Step& step) const {
  if (step.kind == StepKind::Issue) return {step.call};
  if (step.kind == StepKind::IssueGroup) {
    const auto& g = control_.groups[static_cast<size_t>(step.group)];
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
          << world_.programs[step.rank].threads[static_cast<size_t>(step.spawned_thread)].name;
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
      if (step.call >= 0) {  // one-sided
        const Call& c = world_.calls[static_cast<size_t>(step.call)];
        if (c.kind == OpKind::WaitSignal)
          out << "device: rank " << step.rank << "'s " << call_ref(step.call) << " receives its signal from rank "
              << step.peer;
        else
          out << "device: rank " << step.rank << "'s " << call_ref(step.call) << " completes (a signal to rank "
              << step.peer << ")";
        break;
      }
      out << "device: send/recv " << step.slot << " on " << world_.comm_name(step.comm) << " from rank " << step.rank
          << " to rank " << step.peer << " completes";
      break;
    case StepKind::MatchAny: {
      out << "rank " << step.rank << " " << thread_name() << ": its wildcard receive on " << world_.comm_name(step.comm)
          << " takes send " << step.slot << (step.tag != 0 ? " of tag " + std::to_string(step.tag) : "") << " of rank "
          << step.peer;
      break;
    }
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

std::vector<int> Semantics::store_holders(const State& s, int rank, const Call& c) const {
  std::vector<int> out;
  if (c.kind == OpKind::HostBarrier) {
    // Members of the barrier not waiting at this key yet.
    for (int m : c.members_view) {
      if (m == rank) continue;
      bool arrived = false;
      for (const auto& t : s.ranks[static_cast<size_t>(m)].threads)
        for (const auto& w : t.waits)
          arrived = arrived || (w.kind == WaitKind::StoreKey && w.slot == static_cast<uint32_t>(c.key));
      if (!arrived) out.push_back(m);
    }
    return out;
  }
  // store_wait: the ranks whose programs can set the key.
  for (const Call& other : world_.calls)
    if (other.key == c.key && other.rank != rank &&
        (other.kind == OpKind::StoreSet || other.kind == OpKind::HostBarrier) &&
        std::find(out.begin(), out.end(), other.rank) == out.end())
      out.push_back(other.rank);
  return out;
}

std::string Semantics::describe_wait(const State& s, int rank, const Wait& w) const {
  if (w.kind == WaitKind::StoreKey) {
    const Call& c = world_.calls[w.call];
    std::string out = "waits at host store key \"" + world_.keys[w.slot] + "\" (count " +
                      std::to_string(s.store[w.slot]) + ", needs " + std::to_string(w.count) + ")";
    std::string missing;
    for (int m : store_holders(s, rank, c))
      missing += (missing.empty() ? "" : ", ") + ("rank " + std::to_string(m) + " (" + where_is(s, m) + ")");
    return missing.empty() ? out : out + "; not there: " + missing;
  }
  const auto& comm = world_.comms[w.comm];
  std::string out;
  std::vector<std::string> missing;
  size_t unlisted = 0;  // members waited for past kMaxListedWaitTargets
  auto miss = [&](int m) {
    if (missing.size() == kMaxListedWaitTargets) {
      ++unlisted;
      return;
    }
    missing.push_back("rank " + std::to_string(m) + " (" + where_is(s, m) + ")");
  };
  switch (w.kind) {
    case WaitKind::HostSlot:
      out = "waits for host slot " + std::to_string(w.slot) + " of " + comm.name;
      for (int m : comm.members) {
        const auto& ms = s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, w.comm))];
        if (ms.host_issued <= w.slot) miss(m);
      }
      break;
    case WaitKind::Connect:
      out = "waits in the runtime connect of " + comm.name + " (its first non-symmetric collective)";
      for (int m : comm.members) {
        const auto& ms = s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, w.comm))];
        if (!(ms.flags & kConnectReached)) miss(m);
      }
      break;
    case WaitKind::P2pConnect:
      out = "waits in the runtime connect with rank " + std::to_string(w.peer) + " on " + comm.name;
      miss(static_cast<int>(w.peer));
      break;
    case WaitKind::DevDone:
      out = "waits for its device slot " + std::to_string(w.slot) + " of " + comm.name + " to complete";
      break;
    case WaitKind::P2pHost:
      out = std::string("waits for the matching ") + (w.dir == 0 ? "recv" : "send") + " of rank " +
            std::to_string(w.peer) + (w.tag != 0 ? " with tag " + std::to_string(w.tag) : "");
      miss(static_cast<int>(w.peer));
      break;
    case WaitKind::StoreKey:
      break;  // above
    case WaitKind::P2pAny:
      if (w.dir == 2) {  // a receive from one peer: MPI_ANY_TAG, or posted behind a wildcard receive
        out = "waits for a message from rank " + std::to_string(w.peer) +
              (w.tag == kWaitAnyTag ? std::string(" with any tag")
                                    : " with tag " + std::to_string(w.tag) + " (posted after a wildcard receive)");
        miss(static_cast<int>(w.peer));
        break;
      }
      out = "waits for a message from any rank of " + comm.name + " (MPI_ANY_SOURCE" +
            (w.tag == kWaitAnyTag ? std::string(", MPI_ANY_TAG)") : ", tag " + std::to_string(w.tag) + ")");
      for (int m : comm.members) miss(m);
      break;
    case WaitKind::P2pProbe:
      out = "waits in a probe for a message" +
            (w.dir == 2 ? " from rank " + std::to_string(w.peer) : std::string(" from any rank of ") + comm.name) +
            (w.tag == kWaitAnyTag ? std::string() : " with tag " + std::to_string(w.tag));
      if (w.dir == 2)
        miss(static_cast<int>(w.peer));
      else
        for (int m : comm.members) miss(m);
      break;
    case WaitKind::AbortDrain:
      out = "waits in the abort of " + comm.name +
            " until this rank's GPU is idle (ncclCommAbort frees device memory, which waits for every kernel, "
            "also other comms' stuck ones); abort the stuck comms together (one group) to release them";
      break;
    case WaitKind::MpiProgress: {
      out = "waits in " + std::string(model::op_name(world_.calls[w.call].kind)) + " on " + comm.name +
            " for the ranks that left it early to enter MPI again (mpi_progress = weak: their messages move only "
            "inside an MPI call)";
      for (int m : comm.members)
        if (left_early(s.ranks[static_cast<size_t>(m)], w.comm, w.slot)) miss(m);
      break;
    }
    case WaitKind::GrowId:
      out = "waits in the grow of " + comm.name + " for its grow id " + std::to_string(w.slot + 1) +
            " (ncclCommGetUniqueId: `grow_id " + comm.name + "`), which no rank has handed out";
      for (int m : comm.members) miss(m);
      break;
    case WaitKind::Teardown:
      if (w.count == kTeardownBarrierWait)
        out = "waits in the intra-node barrier of " +
              std::string(world_.calls[w.call].kind == OpKind::Finalize ? "ncclCommFinalize" : "ncclCommDestroy") +
              " for every member to destroy or finalize " + comm.name +
              " (NCCL 2.31: commDestroySync; a member that aborted or revoked it never joins)";
      else
        out = world_.calls[w.call].kind == OpKind::Abort
                  ? "waits in the abort for every member to abort or destroy " + comm.name + " (NCCL before " +
                        model::nccl_version_text(model::kAbortIsLocal) + ": abort is an intra-node collective)"
                  : "waits for every member to destroy " + comm.name + " (it is connected)";
      for (int m : comm.members) {
        const auto& ms = s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, w.comm))];
        if (owes_teardown(w, ms.flags)) miss(m);
      }
      break;
  }
  if (!missing.empty()) {
    out += "; not there: ";
    for (size_t i = 0; i < missing.size(); ++i) out += (i ? ", " : "") + missing[i];
    if (unlisted) out += " and " + std::to_string(unlisted) + " more";
  }
  return out;
}

// The first call or group a thread at `at` may issue (a dispatch node offers choices only).
static const ControlEdge* first_issue(const ControlProgram& control, const ControlPosition& at) {
  const ControlEdge* found = nullptr;
  control.for_each_edge(at, [&](size_t, const ControlEdge& e) {
    if (!found && (e.kind == ControlEdge::Kind::Call || e.kind == ControlEdge::Kind::Group)) found = &e;
  });
  return found;
}

bool Semantics::first_issue_is_group(const ControlPosition& at) const {
  const ControlEdge* e = first_issue(control_, at);
  return e != nullptr && e->kind == ControlEdge::Kind::Group;
}

std::string Semantics::process_wait_reason(const State& s, int rank, const ControlPosition& at, int* call) const {
  const int p = world_.process_of(rank);
  const ControlEdge* e = p < 0 ? nullptr : first_issue(control_, at);
  if (e == nullptr) return {};
  const int holder = process_holder(s, rank, e->kind == ControlEdge::Kind::Group);
  if (holder < 0) return {};
  *call = e->kind == ControlEdge::Kind::Call ? e->call : control_.groups[static_cast<size_t>(e->group)].front();
  const auto& holder_thread = s.ranks[static_cast<size_t>(holder)].threads[0];
  const std::string process = "process " + world_.processes[static_cast<size_t>(p)].name;
  if (!waits_hold(s, holder, holder_thread))
    return "waits for the host thread of " + process + ", which is blocked in rank " + std::to_string(holder) + "'s " +
           call_ref(static_cast<int>(holder_thread.waits.front().call)) +
           " (one thread drives the process's GPUs: group the per-device calls)";
  return "waits for the host thread of " + process + " to issue rank " + std::to_string(holder) +
         "'s next call first (" + where_is(s, holder) + ")";
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
        if (control_.edge_count(ts) == 0) {
          b.finished = true;
          b.reason = "finished";
        } else {
          if (t == 0) b.reason = process_wait_reason(s, r, ts, &b.call);
          for (const auto& e : control_.nodes[static_cast<size_t>(ts.node)].edges) {
            if (!b.reason.empty() || e.kind != ControlEdge::Kind::Call) continue;
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
        size_t unlisted = 0;  // members waited for past kMaxListedWaitTargets
        if (p.kind == PartKind::Collective) {
          for (int m : world_.comms[p.comm].members)
            if (m != r && !running_part(s, m, PartKind::Collective, p.comm, p.slot, -1)) {
              if (missing.size() == kMaxListedWaitTargets) {
                ++unlisted;
                continue;
              }
              const auto& ms = s.ranks[static_cast<size_t>(m)].members[static_cast<size_t>(local_index(m, p.comm))];
              missing.push_back("rank " + std::to_string(m) +
                                ((ms.flags & kAborted)    ? " (aborted the comm)"
                                 : ms.dev_issued > p.slot ? " (its op is queued behind another on its stream)"
                                                          : " (not issued: " + where_is(s, m) + ")"));
            }
          b.reason = what + " device slot " + std::to_string(p.slot) + " of " + world_.comm_name(p.comm) + " running";
        } else if (p.kind == PartKind::SignalWait) {
          b.reason = what + " running, waits for a signal from rank " + std::to_string(p.peer) + " (" +
                     where_is(s, p.peer) + ")";
        } else if (p.kind == PartKind::OneSided) {
          b.reason = what + " running";
        } else {
          b.reason = what + " running";
          PartKind other = p.kind == PartKind::Send ? PartKind::Recv : PartKind::Send;
          if (!running_part(s, p.peer, other, p.comm, p.slot, r))
            missing.push_back("rank " + std::to_string(p.peer) + " (" + where_is(s, p.peer) + ")");
        }
        if (!missing.empty()) {
          b.reason += ", waits for ";
          for (size_t i = 0; i < missing.size(); ++i) b.reason += (i ? ", " : "") + missing[i];
          if (unlisted) b.reason += " and " + std::to_string(unlisted) + " more";
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
  // A wait on the members of a comm depends on at most kMaxListedWaitTargets of them (the first
  // in member order): a 16k-rank knot otherwise has billions of edges.
  auto on_members = [&](WaitDependency& d, int comm, auto&& waits_for) {
    size_t listed = 0;
    for (int m : world_.comms[static_cast<size_t>(comm)].members) {
      if (!waits_for(m)) continue;
      if (listed++ == kMaxListedWaitTargets) break;
      d.target_rank = m;
      out.push_back(d);
    }
  };
  auto on_host_slot = [&](WaitDependency d, int comm, uint32_t slot) {
    d.comm = comm;
    d.slot = static_cast<int>(slot);
    d.label = "host slot " + std::to_string(slot) + " of " + world_.comm_name(comm);
    on_members(d, comm, [&](int m) { return member(m, comm).host_issued <= slot; });
  };
  auto on_connect = [&](WaitDependency d, int comm) {
    d.comm = comm;
    d.label = "connect of " + world_.comm_name(comm);
    on_members(d, comm, [&](int m) { return !(member(m, comm).flags & kConnectReached); });
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
        d.wait = w.kind;
        switch (w.kind) {
          case WaitKind::HostSlot:
            on_host_slot(d, w.comm, w.slot);
            break;
          case WaitKind::Connect:
            on_connect(d, w.comm);
            break;
          case WaitKind::P2pConnect:
          case WaitKind::P2pHost:
            d.comm = w.comm;
            d.target_rank = static_cast<int>(w.peer);
            d.label = (w.kind == WaitKind::P2pConnect ? "p2p connect on " : "send/recv on ") + world_.comm_name(w.comm);
            out.push_back(d);
            break;
          case WaitKind::P2pProbe:
          case WaitKind::P2pAny:
            // Any member may send: the thread depends on each of them.
            d.comm = w.comm;
            d.label =
                (w.kind == WaitKind::P2pProbe ? "probe on " : "recv from any rank on ") + world_.comm_name(w.comm);
            on_members(d, w.comm, [&](int m) { return m != r && (w.dir != 2 || m == static_cast<int>(w.peer)); });
            break;
          case WaitKind::MpiProgress: {
            // Each early rank that has not entered MPI since holds it up.
            d.comm = w.comm;
            d.label = "mpi progress on " + world_.comm_name(w.comm);
            on_members(d, w.comm,
                       [&](int m) { return m != r && left_early(s.ranks[static_cast<size_t>(m)], w.comm, w.slot); });
            break;
          }
          case WaitKind::GrowId:
            // Any member may hand out the id.
            d.comm = w.comm;
            d.label = "grow id of " + world_.comm_name(w.comm);
            on_members(d, w.comm, [&](int m) { return m != r; });
            break;
          case WaitKind::Teardown:
            d.comm = w.comm;
            d.label = (world_.calls[w.call].kind == OpKind::Abort      ? "abort of "
                       : world_.calls[w.call].kind == OpKind::Finalize ? "finalize of "
                                                                       : "destroy of ") +
                      world_.comm_name(w.comm);
            on_members(d, w.comm, [&](int m) { return owes_teardown(w, member(m, w.comm).flags); });
            break;
          case WaitKind::StoreKey:
            d.label = "host store key \"" + world_.keys[w.slot] + "\"";
            for (int m : store_holders(s, r, world_.calls[w.call])) {
              d.target_rank = m;
              out.push_back(d);
            }
            break;
          case WaitKind::AbortDrain:
            d.comm = w.comm;
            on_own_streams(
                d, r, -1, -1,
                "its unfinished device work (the abort of " + world_.comm_name(w.comm) + " waits for an idle GPU)");
            break;
          case WaitKind::DevDone:
            d.comm = w.comm;
            d.slot = static_cast<int>(w.slot);
            on_own_streams(d, r, stream_of(r, PartKind::Collective, w.comm, w.slot, -1), -1,
                           "its device slot " + std::to_string(w.slot) + " of " + world_.comm_name(w.comm));
            break;
        }
      }
      if (waiting) continue;
      const auto& node = control_.nodes[static_cast<size_t>(ts.node)];
      if (t == 0 && world_.process_of(r) >= 0) {
        // Held by its process's host thread: an edge to the rank that holds it (its blocked thread).
        int call = -1;
        if (!process_wait_reason(s, r, ts, &call).empty()) {
          WaitDependency d = base;
          d.source = WaitDependency::Source::Process;
          d.call = call;
          d.target_rank = process_holder(s, r, first_issue_is_group(ts));
          d.label = "host thread of process " + world_.processes[static_cast<size_t>(world_.process_of(r))].name;
          out.push_back(d);
          continue;
        }
      }
      for (const auto& e : node.edges) {
        if (e.kind != ControlEdge::Kind::Call) continue;
        const Call& c = world_.calls[static_cast<size_t>(e.call)];
        if (guard_holds(s, r, c)) continue;
        WaitDependency d = base;
        d.source = WaitDependency::Source::Guard;
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
        else if (c.kind == OpKind::CudaFree && world_.process_of(r) >= 0)
          for (int q : world_.processes[static_cast<size_t>(world_.process_of(r))].ranks)
            on_own_streams(d, q, -1, -1, q == r ? "the device" : "the devices of its process");
        else
          on_own_streams(d, r, -1, -1, "the device");
      }
    }
    auto running = running_entries(rs);
    for (size_t st = 0; st < rs.streams.size(); ++st) {
      if (rs.streams[st].empty()) continue;
      const StreamEntry& head = rs.streams[st].front();
      WaitDependency base;
      base.source = WaitDependency::Source::StreamHead;
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
          size_t listed = 0;
          for (int m : world_.comms[p.comm].members) {
            if (m == r || running_part(s, m, PartKind::Collective, p.comm, p.slot, -1)) continue;
            if (listed++ == kMaxListedWaitTargets) break;
            d.target_rank = m;
            d.target_stream = stream_of(m, PartKind::Collective, p.comm, p.slot, -1);
            out.push_back(d);
          }
        } else if (p.kind == PartKind::SignalWait) {
          d.label = "signal from rank " + std::to_string(p.peer) + " on " + world_.comm_name(p.comm);
          d.target_rank = p.peer;
          out.push_back(d);
        } else if (p.kind == PartKind::OneSided) {
          continue;  // completes on its own
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
