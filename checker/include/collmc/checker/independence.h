// What a partial-order reduction needs to know of a next-state function: which rank a step belongs
// to and which steps can interfere with device completions. Semantics implements it; reductions
// read only this, never the step relation itself.
#pragma once

#include <vector>

#include "collmc/checker/next_state.h"

namespace collmc::checker {

class IndependenceInfo {
 public:
  virtual ~IndependenceInfo() = default;
  virtual int ranks() const = 0;
  virtual int threads(int rank) const = 0;
  // The thread started and has not reached its end.
  virtual bool thread_live(const State& s, int rank, int thread) const = 0;
  // A host step whose effect reads or removes the rank's pending device work (free, cuda_free,
  // deregister, abort): it does not commute with the completion of that work.
  virtual bool step_reads_device(const Step& step) const = 0;
  virtual bool has_pending_device_work(const State& s, int rank) const = 0;
  // Some thread of the rank can still reach a step that reads device work.
  virtual bool may_read_device(const State& s, int rank) const = 0;
  // Some rank has two threads with calls on one NCCL comm, or with collectives on one MPI comm. Whether
  // such a call is a usage error (another thread of the rank blocked inside that comm, or inside a
  // collective on it) then depends on other ranks' progress, which can unblock the thread: steps of
  // different ranks no longer commute, and no reduction may assume so.
  virtual bool threads_share_a_comm() const = 0;
  // Some process drives several ranks from one host thread (`process P = [..]`): whether a rank may
  // issue depends on its process's other ranks (their turn, their blocking calls), so steps of
  // different ranks no longer commute, and no reduction may assume so.
  virtual bool ranks_share_a_process() const = 0;
  // The ranks whose streams a completion step changes.
  virtual std::vector<int> completion_ranks(const Step& step) const = 0;
  // The enabled steps that belong to `rank`: its threads' host steps, and the completions it stands
  // for (every completion belongs to exactly one rank). Over all ranks: every enabled step.
  virtual void enabled_of_rank(const State& s, int rank, std::vector<Step>& host,
                               std::vector<Step>& completions) const = 0;
  // `thread` is its rank's only live thread and waits at an any_order whose children still to run
  // are one call each, none of which can block the thread, and no two of which touch the same comm,
  // stream or buffer (one allocating it): every order of them ends in the same state, and the thread
  // cannot stop inside the any_order, so one order of them keeps every outcome (docs/REDUCTION.md).
  virtual bool commuting_choice(const State& s, int rank, int thread) const = 0;
};

}  // namespace collmc::checker
