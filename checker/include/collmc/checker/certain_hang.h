// A hang that is certain while the job still runs (issue 35, docs/TRACES.md "Watching a job"): in a stuck
// state of the scenario of the calls so far, the ranks whose every host thread sits in its last call (the
// call the run entered and has not returned from) and whose calls wait for each other through waits no
// implementation can skip. No continuation of the other ranks (those still computing) can release them.
#pragma once

#include <string>
#include <vector>

#include "collmc/checker/semantics.h"
#include "collmc/checker/state.h"

namespace collmc::checker {

// Whether a wait is one every implementation must honour: the call cannot return before `d.target_rank`
// acts, because its result depends on what that rank passes (an all-reduce on every member's data, a
// receive on its sender, a broadcast's non-root on the root), or the standard makes it synchronize (a
// barrier). A wait the model adds but a library may skip (a standard send that goes eagerly, the root of
// a broadcast, a reduce's non-root, a fence, a window free, MPI's weak progress) is not, nor a wait any of
// several ranks can release (a wildcard receive, a probe, a host store key, a grow's id).
bool wait_is_certain(const model::World& world, const WaitDependency& d);

struct CertainHang {
  bool found = false;
  std::vector<int> ranks;            // ascending world ranks whose calls can never return
  std::vector<std::string> reasons;  // per rank, one certain wait on another member: "rank 0 in ... waits for rank 1"
};

// `may_still_call[r]`: rank r of the run has a thread outside any call (it may call anything next), or
// its trace does not show where it is. In the stuck state `stuck` (reachable by the scenario of the calls
// so far), the greatest set of host threads and stream heads of ranks that may not still call, every host
// thread of such a rank stuck in its last call, each with a certain wait on a member of the set (a wait on
// a rank's host counts when every thread of that rank is in the set). Every member then waits forever:
// what it waits for can only come from the set, which cannot move.
CertainHang certain_hang(const Semantics& semantics, const State& stuck, const std::vector<bool>& may_still_call);

}  // namespace collmc::checker
