// Running a plan on real hardware: one process per rank, a sequencer that enforces the schedule's
// order of host calls, a watchdog that declares a hang, aborts and cleans up, and the comparison of
// what happened with what the model predicted. One engine, two backends: NCCL on GPUs (forked ranks)
// and MPI on CPUs (ranks started by mpirun).
#pragma once

#include <string>
#include <vector>

#include "collmc/replay/nccl_support.h"
#include "collmc/replay/plan.h"

namespace collmc::replay {

enum class BackendKind { Auto, Nccl, Mpi };  // Auto: MPI for `set profile = mpi`, else NCCL

// How the rank processes are started: forked here (NCCL) or by mpirun on this host (MPI), the
// coordination in a shared-memory block; or by mpirun / srun on any number of nodes, the
// coordination through a TCP store this process serves (docs/REPLAY.md, "Launchers").
enum class LauncherKind { Local, Mpirun, Srun };
const char* launcher_name(LauncherKind kind);

struct ReplayOptions {
  BackendKind backend = BackendKind::Auto;
  LauncherKind launcher = LauncherKind::Local;
  std::string hosts;                       // mpirun --host / srun --nodelist (empty: the launcher's default)
  std::vector<std::string> launcher_args;  // passed to mpirun / srun as they are
  // The address the ranks reach this process's TCP store at ("": 127.0.0.1 on one host, else this
  // host's name).
  std::string store_host;
  double hang_after_s = 5;  // no progress for this long is a hang (hangs the model did not predict)
  // Every rank in the call the model predicts it blocks in and no progress for this long: a
  // confirmed hang without waiting for hang_after_s. 0 turns the early confirmation off.
  double confirm_after_s = 0.5;
  double grace_s = 3;  // after the abort, how long ranks get to exit before they are killed
  bool verbose = false;
  // Ignore the schedule's order: every rank runs its program as fast as it can (for experiments;
  // the report says so).
  bool free_running = false;
  // The libnccl the NCCL ranks load ("": $COLLMC_NCCL_LIBRARY, else the system's libnccl.so.2).
  std::string nccl_library;
  // At most this many ranks of one communicator per GPU when they must share (NCCL 2.30+).
  int ranks_per_gpu = 2;
};

// Interrupted: SIGINT, SIGTERM or SIGHUP ended the replay (every rank process ended, nothing left).
enum class Outcome { Confirmed, Completed, NotReproduced, Different, Crashed, Refused, Interrupted };
const char* outcome_name(Outcome o);

struct CallTiming {
  int call = -1;
  double seconds = 0;
};

enum class ThreadState { NotStarted, InCall, BetweenCalls, Finished };
const char* thread_state_name(ThreadState s);  // "not started", "in call", "between calls", "finished"

struct ThreadReport {
  std::string name;
  ThreadState state = ThreadState::NotStarted;
  int call = -1;  // the call it is in (or last entered)
};

// How a hang was declared.
enum class HangRule { None, Predicted, NoProgress };

// How a rank process ended. HungAborted: its calls returned after the replay aborted the hung comms;
// HungKilled / HungKilledAfterAbort: killed at the hang, without / despite an abort first; Killed:
// killed although the run was not declared hung (another rank failed); NeverStarted: never reached
// the replay (a launcher failure).
enum class RankOutcome { Finished, Error, HungAborted, HungKilled, HungKilledAfterAbort, Killed, NeverStarted };
const char* rank_outcome_name(RankOutcome o);  // "finished", "error", "hung (aborted)", ... as the report prints

struct RankReport {
  int rank = 0;
  RankOutcome outcome = RankOutcome::Finished;
  std::string error;         // the CUDA/NCCL error, if any
  std::string note;          // e.g. the size of communicators a split produced
  double setup_seconds = 0;  // creating the declared communicators
  std::vector<ThreadReport> threads;
  std::vector<CallTiming> calls;  // every call that returned, with its duration
};

struct ReplayReport {
  std::string scenario;
  model::Verdict predicted = model::Verdict::Safe;
  Outcome outcome = Outcome::Completed;
  bool agrees = false;
  std::string summary;  // one line: why this outcome
  // The model's assumptions the verdict depends on (World::notes), printed next to its verdict.
  std::vector<std::string> model_notes;
  // The hardware did not do what the model assumed, in a way the library is allowed to (an MPI
  // broadcast that completed early): `agrees` is true and the summary says why.
  bool allowed_difference = false;
  std::vector<RankReport> ranks;
  double seconds = 0;               // the whole run
  double hang_detect_seconds = -1;  // from the last progress (the last rank blocking) to the hang verdict
  double hang_exit_seconds = -1;    // from the hang verdict to every rank process gone
  HangRule hang_rule = HangRule::None;
  int interrupted_by = 0;        // the signal that ended the run (Outcome::Interrupted)
  std::string launcher;          // "local", "mpirun", "srun"
  std::string backend;           // "NCCL 2.28.3 (/usr/lib/...), 2 GPUs", "Open MPI v4.1.4, 3 processes", ...
  std::string nccl_version;      // the NCCL the ranks loaded ("2.30.7"); "" for MPI
  std::string nccl_library;      // its file
  std::vector<int> gpu_of_rank;  // the GPU each rank ran on (NCCL)
  std::string placement;         // "GPU 0: ranks 0, 1"
  // "ranks 0 and 1 share GPU 0": ranks of one communicator shared a GPU (NCCL 2.30+); "" when every
  // communicator's ranks had GPUs of their own. Such a result is never one on separate GPUs.
  std::string shared_gpu;
  std::vector<std::string> notes;  // e.g. stream_progress = serialized has no NCCL switch
};

// Runs the plan with the backend options.backend names (Auto: by the scenario's profile).
ReplayReport replay(const ReplayPlan& plan, const ReplayOptions& options);
// Runs the plan on NCCL and GPUs (rank i on GPU i). Never leaves a process behind.
ReplayReport replay_nccl(const ReplayPlan& plan, const ReplayOptions& options);
// Runs the plan as MPI processes on CPUs (mpirun --oversubscribe, one process per rank); a hang is
// ended by killing the job. Never leaves a process behind.
ReplayReport replay_mpi(const ReplayPlan& plan, const ReplayOptions& options);

// Whether this build has the NCCL backend, and what the machine offers (for clear refusals).
bool nccl_backend_built();
// Asks a forked child which NCCL it loads and how many GPUs it sees: "" and `probe` filled, or why not.
std::string probe_machine(NcclProbe& probe);
// Before planning an NCCL replay: a scenario that sets no nccl_version is checked at the version of
// the NCCL the ranks load, so that the model and the hardware speak of the same release; one that
// sets another version keeps it, and the note says the two differ. Adds the note to world.notes
// (printed as what the model assumes); does nothing for MPI scenarios or when `loaded_version` is 0.
void model_loaded_nccl(model::World& world, int loaded_version);
std::string nccl_environment(int* gpus);  // "NCCL 2.28.3, 2 GPUs" or the reason there are none
// "" when mpirun and the rank program (collmc-mpi-rank) are found, else why not.
std::string mpi_unavailable();

// `collmc replay --calibrate DIR`: every scenario replayed, next to the model's verdict.
struct CalibrationRow {
  std::string scenario;
  std::string model;    // the model's verdict
  std::string outcome;  // the hardware's
  bool agrees = false;
  bool allowed = false;  // agrees through a difference the library allows (ReplayReport::allowed_difference)
  std::string summary;
  double seconds = 0;
  double hang_detect_seconds = -1;  // ReplayReport's, for confirmed hangs
  double hang_exit_seconds = -1;
  bool interrupted = false;  // a signal ended the calibration here
  std::string shared_gpu;    // ReplayReport's: ranks of one communicator shared a GPU
};
std::vector<CalibrationRow> calibrate(const std::vector<std::string>& files, const ReplayOptions& options,
                                      const checker::SearchOptions& search);
// A Markdown table and the closing line `N agree, N disagree`.
std::string calibration_table(const std::vector<CalibrationRow>& rows);

std::string text_report(const ReplayReport& report);
std::string json_report(const ReplayReport& report);

}  // namespace collmc::replay
