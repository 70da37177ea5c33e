// certain_hang.h: the greatest set of stuck ranks that wait for each other through certain waits.
#include "collmc/checker/certain_hang.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace collmc::checker {

using model::Call;
using model::OpKind;

namespace {

// The member's rank inside the comm, -1 when not a member.
int comm_rank(const model::World& w, int comm, int rank) {
  return comm < 0 ? -1 : w.comms[static_cast<size_t>(comm)].member_index(rank);
}

bool has_wildcard_receive(const model::World& w, int comm) {
  return std::any_of(w.calls.begin(), w.calls.end(),
                     [&](const Call& c) { return c.comm == comm && (c.any_source || c.kind == OpKind::Probe); });
}

// An MPI collective's host slot: whether the waiting rank's result depends on `target` (MPI 4.1 §6: the
// data each rank receives), or the call synchronizes by the standard (MPI_Barrier, §6.3).
bool mpi_collective_waits_for(const model::World& w, const Call& c, int rank, int target) {
  const std::string& f = c.mpi_call;
  auto is = [&](std::initializer_list<const char*> names) {
    return std::any_of(names.begin(), names.end(), [&](const char* n) { return f == n; });
  };
  switch (c.kind) {
    case OpKind::Barrier:
      return true;
    case OpKind::WinFence:  // a fence with no RMA between may return at once
      return false;
    case OpKind::AllReduce:
      if (is({"Scan", "Iscan"})) return comm_rank(w, c.comm, target) <= comm_rank(w, c.comm, rank);
      if (is({"Exscan", "Iexscan"})) return comm_rank(w, c.comm, target) < comm_rank(w, c.comm, rank);
      return true;
    case OpKind::AllGather:
    case OpKind::ReduceScatter:
      return true;
    case OpKind::AllToAll:
      if (is({"Gather", "Gatherv", "Igather", "Igatherv"})) return rank == c.root;
      if (is({"Scatter", "Scatterv", "Iscatter", "Iscatterv"})) return rank != c.root && target == c.root;
      return true;
    case OpKind::Broadcast:
      return c.root >= 0 && rank != c.root && target == c.root;
    case OpKind::Reduce:
      return c.root >= 0 && rank == c.root;
    case OpKind::Register:  // MPI_Win_create: every rank learns every other's base, size, disp_unit
    case OpKind::Init:      // MPI_Comm_create_group, and the communicator creations below: a context every
    case OpKind::Split:     // member agrees on (and, for a split, every member's color)
      return true;
    default:  // MPI_Win_free and the rest need not wait for anyone
      return false;
  }
}

}  // namespace

bool wait_is_certain(const model::World& w, const WaitDependency& d) {
  if (d.call < 0) return false;
  const Call& c = w.calls[static_cast<size_t>(d.call)];
  const bool mpi = w.profile_of(c) == model::Profile::Mpi;
  if (d.source != WaitDependency::Source::Wait) return !mpi;  // guards, process threads, device ops: NCCL's
  switch (d.wait) {
    case WaitKind::HostSlot:
      return !mpi || mpi_collective_waits_for(w, c, d.rank, d.target_rank);
    case WaitKind::P2pHost:
      // A receive from a named sender waits for its message; a send may leave eagerly. Under a wildcard
      // receive on the comm the pairing of sends to receives is a choice, not a fact.
      return c.kind == OpKind::Recv && !c.any_source && !has_wildcard_receive(w, c.comm);
    case WaitKind::Connect:
    case WaitKind::P2pConnect:
    case WaitKind::DevDone:
    case WaitKind::Teardown:
    case WaitKind::AbortDrain:
      return !mpi;
    case WaitKind::StoreKey:
    case WaitKind::P2pAny:
    case WaitKind::P2pProbe:
    case WaitKind::GrowId:
    case WaitKind::MpiProgress:
      return false;
  }
  return false;
}

bool Semantics::stuck_in_last_call(const State& s, int rank, int thread) const {
  const ThreadState& ts = s.ranks[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)];
  if (ts.node < 0) return false;
  const int32_t end = control_.threads[static_cast<size_t>(rank)][static_cast<size_t>(thread)].end;
  const bool blocked = !waits_hold(s, rank, ts);
  if (ts.node == end) return blocked;
  if (blocked) return false;  // in a call with more calls after it
  bool any = false, only_the_last = true;
  control_.for_each_edge(ts, [&](size_t, const ControlEdge& e) {
    any = true;
    if (e.kind != ControlEdge::Kind::Call || e.target != end ||
        guard_holds(s, rank, world_.calls[static_cast<size_t>(e.call)]))
      only_the_last = false;
  });
  return any && only_the_last;
}

CertainHang certain_hang(const Semantics& semantics, const State& stuck, const std::vector<bool>& may_still_call) {
  const model::World& w = semantics.world();
  // Candidate ranks: not able to call, every host thread stuck in its last call.
  std::vector<char> candidate(static_cast<size_t>(w.ranks), 0);
  for (int r = 0; r < w.ranks; ++r) {
    if (static_cast<size_t>(r) < may_still_call.size() && may_still_call[static_cast<size_t>(r)]) continue;
    const int threads = semantics.threads(r);
    bool all = threads > 0;
    for (int t = 0; t < threads && all; ++t) all = semantics.stuck_in_last_call(stuck, r, t);
    candidate[static_cast<size_t>(r)] = all ? 1 : 0;
  }
  // Nodes: (rank, thread, -1) host threads and (rank, -1, stream) stream heads of candidate ranks, with
  // their certain waits.
  using Node = std::tuple<int, int, int>;
  std::map<Node, std::vector<const WaitDependency*>> waits;
  const std::vector<WaitDependency> deps = semantics.wait_dependencies(stuck);
  for (const auto& d : deps) {
    if (!candidate[static_cast<size_t>(d.rank)] || !candidate[static_cast<size_t>(d.target_rank)]) continue;
    if (!wait_is_certain(w, d)) continue;
    waits[Node{d.rank, d.thread, d.thread >= 0 ? -1 : d.stream}].push_back(&d);
  }
  // Every host thread of a candidate rank is a node (one without a certain wait falls out at once).
  std::set<Node> in;
  for (int r = 0; r < w.ranks; ++r)
    if (candidate[static_cast<size_t>(r)])
      for (int t = 0; t < semantics.threads(r); ++t) in.insert(Node{r, t, -1});
  for (const auto& [n, _] : waits) in.insert(n);
  auto host_in = [&](int r) {
    for (int t = 0; t < semantics.threads(r); ++t)
      if (!in.count(Node{r, t, -1})) return false;
    return true;
  };
  auto target_in = [&](const WaitDependency& d) {
    return d.target_stream >= 0 ? in.count(Node{d.target_rank, -1, d.target_stream}) > 0 : host_in(d.target_rank);
  };
  // The greatest fixpoint: drop nodes none of whose certain waits is on the set, until none is dropped.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = in.begin(); it != in.end();) {
      auto found = waits.find(*it);
      const bool held = found != waits.end() && std::any_of(found->second.begin(), found->second.end(),
                                                            [&](const WaitDependency* d) { return target_in(*d); });
      if (held) {
        ++it;
      } else {
        it = in.erase(it);
        changed = true;
      }
    }
  }
  CertainHang out;
  std::set<int> ranks;
  for (const auto& n : in) ranks.insert(std::get<0>(n));
  for (int r : ranks) {
    if (!host_in(r)) continue;  // a rank counts when all its host threads do
    out.ranks.push_back(r);
    for (int t = 0; t < semantics.threads(r) && out.reasons.size() < out.ranks.size(); ++t) {
      auto found = waits.find(Node{r, t, -1});
      if (found == waits.end()) continue;
      for (const WaitDependency* d : found->second)
        if (target_in(*d)) {
          const Call& c = w.calls[static_cast<size_t>(d->call)];
          out.reasons.push_back("rank " + std::to_string(r) + " in `" + c.text + "` (" + c.loc.str() + ", " + d->label +
                                ") waits for rank " + std::to_string(d->target_rank));
          break;
        }
    }
    if (out.reasons.size() < out.ranks.size())
      out.reasons.push_back("rank " + std::to_string(r) + " waits for its own device work, which waits on the others");
  }
  out.found = !out.ranks.empty();
  return out;
}

}  // namespace collmc::checker
