// The replay engine, the same for every backend: the shared block, the watchdog that declares a
// hang (every rank where the model predicts it blocks and quiet for confirm_after_s; or no progress
// at all for hang_after_s), the abort or the kill, the snapshot of where every thread stands, the
// comparison with the model, and a clean end on SIGINT/SIGTERM/SIGHUP. A backend only starts and
// stops the rank processes.
#include <chrono>
#include <thread>

#include "backend.h"
#include "cleanup.h"
#include "collmc/replay/replay.h"
#include "signals.h"

namespace collmc::replay {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Confirmed:
      return "CONFIRMED";
    case Outcome::Completed:
      return "COMPLETED";
    case Outcome::NotReproduced:
      return "NOT REPRODUCED";
    case Outcome::Different:
      return "DIFFERENT";
    case Outcome::Crashed:
      return "CRASHED";
    case Outcome::Refused:
      return "REFUSED";
    case Outcome::Interrupted:
      return "INTERRUPTED";
  }
  return "?";
}

const char* thread_state_name(ThreadState s) {
  switch (s) {
    case ThreadState::NotStarted:
      return "not started";
    case ThreadState::InCall:
      return "in call";
    case ThreadState::BetweenCalls:
      return "between calls";
    case ThreadState::Finished:
      return "finished";
  }
  return "?";
}

const char* rank_outcome_name(RankOutcome o) {
  switch (o) {
    case RankOutcome::Finished:
      return "finished";
    case RankOutcome::Error:
      return "error";
    case RankOutcome::HungAborted:
      return "hung (aborted)";
    case RankOutcome::HungKilled:
      return "hung (killed)";
    case RankOutcome::HungKilledAfterAbort:
      return "hung (killed after the abort)";
    case RankOutcome::Killed:
      return "killed";
    case RankOutcome::NeverStarted:
      return "never started";
  }
  return "?";
}

const char* launcher_name(LauncherKind kind) {
  switch (kind) {
    case LauncherKind::Local:
      return "local";
    case LauncherKind::Mpirun:
      return "mpirun";
    case LauncherKind::Srun:
      return "srun";
  }
  return "?";
}

namespace {

using Clock = std::chrono::steady_clock;

// How long the ranks may take to start (to attach to the shared block) before the run is given up.
constexpr double kStartLimitSeconds = 60;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Limits of the shared block; "" when the plan fits.
std::string exceeds_limits(const ReplayPlan& plan) {
  const model::World& w = *plan.world;
  if (w.ranks > kMaxRanks) return "more than " + std::to_string(kMaxRanks) + " ranks";
  if (w.keys.size() > static_cast<size_t>(kMaxStoreKeys))
    return "more than " + std::to_string(kMaxStoreKeys) + " store keys";
  if (w.comms.size() > static_cast<size_t>(kMaxComms))
    return "more than " + std::to_string(kMaxComms) + " communicators";
  for (const auto& threads : plan.ranks)
    if (threads.size() > static_cast<size_t>(kMaxThreads))
      return "more than " + std::to_string(kMaxThreads) + " threads in a rank";
  return "";
}

std::vector<RankReport> snapshot(const ReplayPlan& plan, const SharedBlock& shared) {
  std::vector<RankReport> ranks;
  for (int r = 0; r < plan.world->ranks; ++r) {
    RankReport rr;
    rr.rank = r;
    for (size_t t = 0; t < plan.ranks[static_cast<size_t>(r)].size(); ++t) {
      ThreadReport tr;
      tr.name = plan.ranks[static_cast<size_t>(r)][t].name;
      const auto& slot = shared.ranks[r].threads[t];
      tr.call = slot.call.load();
      switch (slot.phase.load()) {
        case kPhaseNotStarted:
          tr.state = ThreadState::NotStarted;
          tr.call = -1;
          break;
        case kPhaseEntered:
          tr.state = ThreadState::InCall;
          break;
        case kPhaseReturned:
          tr.state = ThreadState::BetweenCalls;
          break;
        default:
          tr.state = ThreadState::Finished;
          break;
      }
      rr.threads.push_back(tr);
    }
    ranks.push_back(rr);
  }
  return ranks;
}

// Status, error, note and timings of every rank, after the run.
void fill_ranks(const SharedBlock& shared, bool hung, bool aborted_first, const std::vector<int>& killed,
                ReplayReport& report) {
  for (auto& rr : report.ranks) {
    const auto& slot = shared.ranks[rr.rank];
    const int status = slot.status.load();
    rr.outcome = status == kFinishedOk ? RankOutcome::Finished
                 : status == kError    ? RankOutcome::Error
                 : status == kAborted  ? RankOutcome::HungAborted
                                       : RankOutcome::Killed;
    if (std::find(killed.begin(), killed.end(), rr.rank) != killed.end() && status != kFinishedOk && status != kError)
      rr.outcome = !hung           ? RankOutcome::Killed
                   : aborted_first ? RankOutcome::HungKilledAfterAbort
                                   : RankOutcome::HungKilled;
    if (status == kRunning && !slot.attached.load()) rr.outcome = RankOutcome::NeverStarted;
    if (status == kError) rr.error = slot.error;
    rr.note = slot.note;
    rr.setup_seconds = slot.setup_seconds;
    const int n = std::min(slot.timings.load(), kMaxTimings);
    for (int i = 0; i < n; ++i) rr.calls.push_back(CallTiming{slot.timing_call[i], slot.timing_seconds[i]});
  }
}

}  // namespace

ReplayReport run_replay(const ReplayPlan& plan, const ReplayOptions& options, Backend& backend) {
  const model::World& w = *plan.world;
  ReplayReport report;
  report.scenario = plan.scenario;
  report.predicted = plan.verdict;
  report.model_notes = w.notes;
  if (plan.progress_matters)
    report.model_notes.push_back(
        "the prediction is under mpi_progress = " + std::string(model::mpi_progress_name(plan.mpi_progress)) +
        (w.knobs.mpi_progress == model::MpiProgress::Portable
             ? " (the default explores sync, strong and weak in that order and stops at the first violation)"
             : " (set by the scenario)"));
  report.launcher = launcher_name(options.launcher);
  if (options.free_running)
    report.notes.push_back("free running: the schedule's order was not enforced (an experiment, not a replay)");
  std::string refusal;
  report.backend = backend.prepare(plan, refusal, report);
  if (refusal.empty()) refusal = exceeds_limits(plan);
  if (refusal.empty() && plan.world->mixed_profiles())
    refusal = "comms of both libraries (mpi and nccl): no backend runs MPI and NCCL in one job yet";
  if (refusal.empty() && !plan.world->processes.empty())
    refusal = "process " + plan.world->processes.front().name +
              " drives several ranks from one host thread: the replay runs one process per rank (a rank "
              "process driving several GPUs is not built yet)";
  if (refusal.empty() && !plan.world->keys.empty() && options.launcher != LauncherKind::Local)
    refusal =
        "the host store statements (store_set, store_wait, host_barrier) replay with --launcher local only: "
        "the TCP store does not mirror the scenario's store yet";
  if (!refusal.empty()) {
    report.outcome = Outcome::Refused;
    report.summary = refusal;
    return report;
  }
  for (const auto& left : remove_dead_runs_leftovers())
    report.notes.push_back("removed " + left + ", left by a replay whose collmc was killed");
  const InterruptGuard interrupts;
  RunDirectory run_directory;
  SharedMemory memory;
  SharedBlock* shared = memory.block();
  const auto start = Clock::now();
  backend.start(plan, memory, options, run_directory.path());
  uint64_t last_progress = shared->progress.load();
  auto last_change = Clock::now();
  bool hung = false;
  bool attached = false;
  int interrupted = 0;
  Clock::time_point verdict_time;
  const bool predicted = options.confirm_after_s > 0 && !options.free_running && predicts_blocking(plan);
  auto all = [&](auto pred) {
    for (int r = 0; r < w.ranks; ++r)
      if (!pred(shared->ranks[r])) return false;
    return true;
  };
  // Waits up to `seconds` for every rank process to exit (a signal cuts it short).
  auto wait_exit = [&](double seconds) {
    const auto t0 = Clock::now();
    while (backend.running() && since(t0) < seconds && (interrupted || !interrupts.signal()))
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };
  while (backend.running()) {
    if ((interrupted = interrupts.signal()) != 0) break;
    if (!attached && all([](const RankSlot& s) { return s.attached.load() != 0; })) {
      attached = true;
      memory.unlink();
      backend.ranks_attached();
      last_change = Clock::now();  // the watchdog's clock starts when every rank is there
    }
    if (!attached) {  // starting (mpirun, MPI_Init): not a hang, however slow; but not forever
      if (since(start) > kStartLimitSeconds) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    if (all([](const RankSlot& s) { return s.status.load() != kRunning; })) {
      shared->release.store(1);  // finished ranks may exit now
      wait_exit(options.grace_s);
      break;
    }
    const uint64_t p = shared->progress.load();
    if (p != last_progress) {
      last_progress = p;
      last_change = Clock::now();
    }
    const double idle = since(last_change);
    if (predicted && idle >= options.confirm_after_s) {
      std::vector<RankReport> now = snapshot(plan, *shared);
      if (stands_where_predicted(plan, now) && shared->progress.load() == last_progress) {
        hung = true;
        report.hang_rule = HangRule::Predicted;
        report.ranks = std::move(now);
      }
    }
    if (!hung && idle > options.hang_after_s) {
      hung = true;
      report.hang_rule = HangRule::NoProgress;
      report.ranks = snapshot(plan, *shared);
    }
    if (hung) {
      verdict_time = Clock::now();
      report.hang_detect_seconds = since(last_change);
      shared->abort.store(1);
      if (backend.can_abort()) wait_exit(options.grace_s);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!interrupted) interrupted = interrupts.signal();
  if (interrupted) {
    // Ranks that can abort their communicators get a moment (they _exit on their own timer); the
    // launcher's kill follows.
    shared->abort.store(1);
    if (backend.can_abort()) wait_exit(kAbortExitSeconds + 0.2);
  }
  const std::vector<int> killed = backend.stop(*shared);
  memory.unlink();
  if (hung) report.hang_exit_seconds = since(verdict_time);
  if (!hung) report.ranks = snapshot(plan, *shared);
  report.seconds = since(start);
  if (std::string lib = backend.library(*shared); !lib.empty()) report.backend = lib;
  fill_ranks(*shared, hung, backend.can_abort(), killed, report);
  if (interrupted) {
    report.outcome = Outcome::Interrupted;
    report.interrupted_by = interrupted;
    report.hang_rule = HangRule::None;
    report.hang_detect_seconds = report.hang_exit_seconds = -1;
    report.summary = std::string("interrupted by ") + signal_name(interrupted) +
                     ": every rank process ended, the run's shared memory removed";
    return report;
  }
  if (!attached && all([](const RankSlot& s) { return s.status.load() != kError; })) {
    report.outcome = Outcome::Refused;
    report.summary = "not every rank process started";
    if (std::string d = backend.diagnostics(); !d.empty()) report.summary += ": " + d;
    return report;
  }
  classify(plan, hung, backend.name(), report);
  if (report.outcome == Outcome::Crashed && !backend.diagnostics().empty() && options.verbose)
    report.notes.push_back("launcher output: " + backend.diagnostics());
  return report;
}

ReplayReport replay_nccl(const ReplayPlan& plan, const ReplayOptions& options) {
  return run_replay(plan, options, *make_nccl_backend(options));
}

ReplayReport replay_mpi(const ReplayPlan& plan, const ReplayOptions& options) {
  return run_replay(plan, options, *make_mpi_backend());
}

ReplayReport replay(const ReplayPlan& plan, const ReplayOptions& options) {
  BackendKind kind = options.backend;
  if (kind == BackendKind::Auto)
    kind = plan.world->knobs.profile == model::Profile::Mpi ? BackendKind::Mpi : BackendKind::Nccl;
  if (options.launcher != LauncherKind::Local) return run_replay(plan, options, *make_job_backend(kind, options));
  return kind == BackendKind::Mpi ? replay_mpi(plan, options) : replay_nccl(plan, options);
}

}  // namespace collmc::replay
