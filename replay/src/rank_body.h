// What every rank process runs, whatever the backend: the plan's threads, the sequencer's turns,
// the progress the watchdog reads, timings, errors, and staying alive until every rank is done.
// A backend supplies only what each call does (RankCalls). Private to the replay library.
#pragma once

#include <stdexcept>
#include <string>

#include "collmc/replay/plan.h"
#include "shared_block.h"

namespace collmc::replay {

// A call that failed (the backend's error text); after the watchdog's abort, "aborted".
struct RankFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RankCalls {
 public:
  virtual ~RankCalls() = default;
  // Devices, buffers, the declared communicators (in declaration order, on every rank).
  virtual void setup() = 0;
  // One plan step: a single call or a group's calls. Throws RankFailure.
  virtual void step(const PlanStep& step) = 0;
  // After every thread returned: a note for the report (e.g. communicators of the wrong size).
  virtual std::string finish() { return {}; }
  // While a thread waits for its turn (the replay's order, not the program's): the rank has not reached its
  // next call yet. The MPI backend lets the library progress here where the scenario has one-sided calls
  // (mpi_rank.cpp); the others do nothing.
  virtual void waiting() {}
  // Whether abort() can end calls blocked in the library. If not, the launcher kills the job.
  virtual bool can_abort() const { return false; }
  // On the watchdog's word, from another thread: abort every communicator.
  virtual void abort() {}
};

// Ends the rank process at once (_exit) with `code`, after the hook set below (a TCP store's client
// sends the rank's last state). Every exit of a rank process goes through here.
[[noreturn]] void rank_exit(int code);
void set_rank_exit_hook(void (*hook)());
// A rank that cannot run its plan: says why in its slot (attached, status error) and exits 2.
[[noreturn]] void rank_give_up(SharedBlock* shared, int rank, const std::string& why);

// Runs rank `rank`'s part of the plan in this process; returns the process exit code (0 finished,
// 2 error, 3 aborted). A finished rank returns only when every rank is done (or on the abort).
int run_rank(const ReplayPlan& plan, int rank, SharedBlock* shared, bool free_running, RankCalls& calls);

// The NCCL backend's calls (nccl_rank.cpp), for a forked child running rank `rank` on GPU `gpu`.
int run_nccl_rank(const ReplayPlan& plan, int rank, int gpu, SharedBlock* shared, bool free_running);

// A rank that mpirun or srun started: the GPU for the `local_rank`-th rank on its node (the only
// visible GPU when the launcher gives each rank one), or -1 with the reason in `why`.
int gpu_for_local_rank(int local_rank, std::string& why);

}  // namespace collmc::replay
