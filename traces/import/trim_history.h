// Keeping what a hang needs (docs/TRACES.md, "What the import keeps"): the plan that says which
// collectives of a trace can be left out without changing what the check finds. It works on a thin view
// of each rank's calls, so the Flight Recorder reader can plan before it builds a single Call.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collmc/traces/trace.h"

namespace collmc::traces {

// One call of a rank, as the plan sees it.
// 16 bytes: the Flight Recorder reader plans on one per entry of every dump (32.8 M at 16k ranks).
struct TrimItem {
  uint64_t shape = 0;           // what else must agree (the element count, or a hash of every field the check
                                // compares: count, dtype, op, root, MPI function; 0: unknown)
  uint32_t comm = 0;            // index of its communicator (collectives); ignored otherwise
  uint16_t kind = 0;            // the call's kind: matched calls must agree in it
  bool collective : 1 = false;  // a collective or barrier that every member of `comm` makes
  bool completed : 1 = false;   // the source saw it finish (or, for a source that cannot see that, it was made)
  bool in_group : 1 = false;    // inside a group: never left out (a group is one launch)
  // A collective the model runs with a symmetric kernel (its buffers lie in a symmetric window this rank
  // registered on `comm`): it sets up no connection. Members must agree (else divergent_kernel: kept).
  bool symmetric : 1 = false;
  // The rank's device is idle after it (sync device, cuda_free): no collective before it may still run.
  bool drains : 1 = false;
  // The model reads whether a collective before it may still run (a free or deregister: use after free or
  // deregister; an abort or revoke: the kernels it stops): a collective before it is left out only if a
  // drain lies between them.
  bool reads_pending : 1 = false;
  // A host-blocking call on `comm` (register, init, split on its parent): it returns only once every member
  // made its match, so the model completes it only if every member's trace holds that many.
  bool host_slot : 1 = false;
};
static_assert(sizeof(TrimItem) == 16);

struct TrimInput {
  // Per rank (any order), its one thread of calls in program order; a rank with several threads or no trace
  // is listed in `untrimmable_comms` instead, by the comms it is a member of.
  std::vector<std::vector<TrimItem>> ranks;
  // Per comm, the indices (into `ranks`) of its members that have a trace.
  std::vector<std::vector<uint32_t>> members;
  std::vector<bool> untrimmable;  // per comm: a member's calls cannot be read (no trace, several threads)
  // The source cannot tell a call that finished from one that was only made (NCCL logs): the last call every
  // member made on a comm may be the one that hangs, and is kept.
  bool completion_seen = true;
};

struct TrimPlan {
  std::vector<uint64_t> cut;  // per comm: its first `cut` collectives are left out on every member
  // Per comm: a collective left out ran with a regular (non-symmetric) kernel, so the comm's connections are
  // set up (SEMANTICS.md §2-§3: its destroy waits for the peers', its later collectives have no connect).
  std::vector<bool> connected;
  std::vector<std::vector<bool>> dropped;  // per rank, per item
  uint64_t dropped_calls = 0;
  // Comms whose cut was lowered because a free, deregister or abort follows a collective with no drain
  // between (the model would see it may still run): what they keep, for the summary.
  uint64_t held_for_pending = 0;
};

// Per comm, the longest run of collectives from its first that every member made in the same kind and shape
// and saw completed, cut further so that on every rank the calls left out all come before its first call not
// seen to complete (the plan leaves out a completed prefix of each rank's history, never a call after one
// that may still be running).
TrimPlan plan_trim(const TrimInput& input);

// Per comm, the rows (`row_of`: world rank -> index into `in.ranks`) of its members, and whether it must be
// left whole: a member has no row (no trace, several threads), or the trace does not know every member.
void fill_trim_members(const std::vector<Communicator>& comms, const std::map<int, uint32_t>& row_of, TrimInput& in);

// The plan's state on the trace's comms (dropped_collectives, history_connected) and its summary line in
// `trace.dropped` (every reader ends its trim with it). `labels`: per comm, its name for people.
void record_trim(Trace& trace, const std::vector<std::string>& labels, const TrimPlan& plan, size_t nranks,
                 bool completion_seen);

// The summary line for a plan ("left out 812,000 calls of 1,024 ranks: on 136 communicators, ..."), empty
// when nothing is left out. `labels`: per comm, its name for people.
std::string trim_summary(const std::vector<std::string>& labels, const TrimPlan& plan, size_t nranks,
                         bool completion_seen = true);

}  // namespace collmc::traces
