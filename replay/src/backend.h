// What a backend supplies to the replay engine (launcher.cpp): whether it can run a plan here, how
// its rank processes are started, watched and stopped. Everything else (the shared block, the
// sequencer, the watchdog, the hang verdict, the classification, the report) is the engine's.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collmc/replay/nccl_support.h"
#include "collmc/replay/replay.h"
#include "shared_block.h"

namespace collmc::replay {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;  // "NCCL", "MPI": in summaries
  // Checks the plan against the machine. Returns the description of what runs it ("NCCL 2.28.3
  // (/usr/lib/...), 2 GPUs"); sets `refusal` (and may return "") when it cannot run here. May add
  // report notes and what it learnt of the hardware (the NCCL loaded, the ranks' placement).
  virtual std::string prepare(const ReplayPlan& plan, std::string& refusal, ReplayReport& report) = 0;
  // Starts one process per rank; each attaches to `shared` (its name for processes not forked), or
  // reaches it through a TCP store. `run_directory` is the run's private directory (cleanup.h): the
  // place for every file the run makes.
  virtual void start(const ReplayPlan& plan, SharedMemory& shared, const ReplayOptions& options,
                     const std::string& run_directory) = 0;
  // Every rank has attached (and read what it was given): what only the start needed can go.
  virtual void ranks_attached() {}
  // Reaps what exited; whether any rank process (or the job) still runs.
  virtual bool running() = 0;
  // Whether the ranks end blocked calls on the abort flag (NCCL: ncclCommAbort). If not, the engine
  // kills the job as soon as it declares a hang.
  virtual bool can_abort() const = 0;
  // Kills and reaps every process of the run; returns the ranks whose process was still alive.
  virtual std::vector<int> stop(const SharedBlock& shared) = 0;
  // The library the ranks reported, e.g. from the shared block; "" to keep prepare's description.
  virtual std::string library(const SharedBlock&) const { return {}; }
  // When ranks died without a word: what the launcher saw (e.g. mpirun's last lines).
  virtual std::string diagnostics() const { return {}; }
};

std::unique_ptr<Backend> make_nccl_backend(const ReplayOptions& options);

std::unique_ptr<Backend> make_mpi_backend();
// Ranks started by mpirun or srun (options.launcher) on any number of nodes, coordinated through a
// TCP store this process serves (store.h): `kind` picks the rank program (collmc-nccl-rank or
// collmc-mpi-rank).
std::unique_ptr<Backend> make_job_backend(BackendKind kind, const ReplayOptions& options);

// The engine: runs the plan with `backend` and compares with the model. Never leaves a process behind.
ReplayReport run_replay(const ReplayPlan& plan, const ReplayOptions& options, Backend& backend);

// Whether the model predicts a hang with at least one thread blocked in a call (its verdict is a
// deadlock, mismatch or divergent kernel): then the engine may confirm early (classify.cpp).
bool predicts_blocking(const ReplayPlan& plan);
// Whether every thread stands exactly where the model predicts the run ends (a group by its first
// call; no allowance for early returns): the early confirmation's test.
bool stands_where_predicted(const ReplayPlan& plan, const std::vector<RankReport>& ranks);

// Classification of a finished run into CONFIRMED, COMPLETED, ... (classify.cpp).
void classify(const ReplayPlan& plan, bool hung, const char* backend, ReplayReport& report);

}  // namespace collmc::replay
