// The replay engine, the same for every backend: the shared block, the watchdog that declares a
// hang (no progress for hang_after_s), the abort or the kill, the snapshot of where every thread
// stands, and the comparison with the model. A backend only starts and stops the rank processes.
#include <algorithm>
#include <chrono>
#include <thread>

#include "backend.h"
#include "collmc/replay/replay.h"

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
          tr.state = "not started";
          tr.call = -1;
          break;
        case kPhaseEntered:
          tr.state = "in call";
          break;
        case kPhaseReturned:
          tr.state = "between calls";
          break;
        default:
          tr.state = "finished";
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
    rr.status = status == kFinishedOk ? "finished"
                : status == kError    ? "error"
                : status == kAborted  ? "hung (aborted)"
                                      : "killed";
    if (std::find(killed.begin(), killed.end(), rr.rank) != killed.end() && status != kFinishedOk && status != kError)
      rr.status = !hung ? "killed" : aborted_first ? "hung (killed after the abort)" : "hung (killed)";
    if (status == kRunning && !slot.attached.load()) rr.status = "never started";
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
  if (options.free_running)
    report.notes.push_back("free running: the schedule's order was not enforced (an experiment, not a replay)");
  std::string refusal;
  report.backend = backend.prepare(plan, refusal, report.notes);
  if (refusal.empty()) refusal = exceeds_limits(plan);
  if (!refusal.empty()) {
    report.outcome = Outcome::Refused;
    report.summary = refusal;
    return report;
  }
  SharedMemory memory;
  SharedBlock* shared = memory.block();
  const auto start = Clock::now();
  backend.start(plan, memory, options);
  uint64_t last_progress = shared->progress.load();
  auto last_change = Clock::now();
  bool hung = false;
  bool attached = false;
  auto all = [&](auto pred) {
    for (int r = 0; r < w.ranks; ++r)
      if (!pred(shared->ranks[r])) return false;
    return true;
  };
  // Waits up to `seconds` for every rank process to exit.
  auto wait_exit = [&](double seconds) {
    const auto t0 = Clock::now();
    while (backend.running() && since(t0) < seconds) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  while (backend.running()) {
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
    if (idle > options.hang_after_s) {
      hung = true;
      report.hang_detect_seconds = idle;
      report.ranks = snapshot(plan, *shared);
      shared->abort.store(1);
      if (backend.can_abort()) wait_exit(options.grace_s);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::vector<int> killed = backend.stop(*shared);
  memory.unlink();
  if (!hung) report.ranks = snapshot(plan, *shared);
  report.seconds = since(start);
  if (std::string lib = backend.library(*shared); !lib.empty()) report.backend = lib;
  fill_ranks(*shared, hung, backend.can_abort(), killed, report);
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
  return run_replay(plan, options, *make_nccl_backend());
}

ReplayReport replay_mpi(const ReplayPlan& plan, const ReplayOptions& options) {
  return run_replay(plan, options, *make_mpi_backend());
}

ReplayReport replay(const ReplayPlan& plan, const ReplayOptions& options) {
  BackendKind kind = options.backend;
  if (kind == BackendKind::Auto)
    kind = plan.world->knobs.profile == model::Profile::Mpi ? BackendKind::Mpi : BackendKind::Nccl;
  return kind == BackendKind::Mpi ? replay_mpi(plan, options) : replay_nccl(plan, options);
}

}  // namespace collmc::replay
