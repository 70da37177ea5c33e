// One process per rank (as nccl-tests lays them out), the sequencer's shared turn, the watchdog,
// and the comparison with the model. Nothing outlives replay_nccl: the shared block is an anonymous
// mapping, every child dies with the launcher (PR_SET_PDEATHSIG) and is killed and reaped at the end.
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <thread>

#include "collmc/replay/replay.h"
#include "rank_body.h"

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

bool nccl_backend_built() {
#ifdef COLLMC_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

namespace {

using Clock = std::chrono::steady_clock;

struct Mapping {
  SharedBlock* block = nullptr;
  Mapping() {
    void* p = mmap(nullptr, sizeof(SharedBlock), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap of the shared block failed");
    std::memset(p, 0, sizeof(SharedBlock));
    block = new (p) SharedBlock;
  }
  ~Mapping() { munmap(block, sizeof(SharedBlock)); }
};

// Forks `body` as a child that dies with this process; returns its pid.
template <class Body>
pid_t spawn(Body body) {
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(9);
    int code = 1;
    try {
      code = body();
    } catch (...) {
      code = 1;
    }
    _exit(code);
  }
  return pid;
}

[[maybe_unused]] void kill_and_reap(std::vector<pid_t>& pids) {
  for (pid_t p : pids)
    if (p > 0) kill(p, SIGKILL);
  for (pid_t& p : pids)
    if (p > 0) {
      waitpid(p, nullptr, 0);
      p = -1;
    }
}

}  // namespace

std::string nccl_environment(int* gpus) {
  *gpus = 0;
  if (!nccl_backend_built()) return "error: this collmc was built without CUDA and NCCL (see docs/REPLAY.md)";
#ifdef COLLMC_HAVE_NCCL
  // CUDA must not be initialized in the launcher (the ranks are forked), so a child asks.
  Mapping m;
  char* text = m.block->ranks[0].error;
  std::vector<pid_t> pids{spawn([&] {
    probe_nccl(text, sizeof m.block->ranks[0].error);
    return 0;
  })};
  auto start = Clock::now();
  int status = 0;
  while (waitpid(pids[0], &status, WNOHANG) == 0) {
    if (Clock::now() - start > std::chrono::seconds(60)) {
      kill_and_reap(pids);
      return "error: probing the GPUs did not finish within 60 s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string out = text;
  if (out.empty()) return "error: probing the GPUs failed (NCCL or the CUDA driver could not be loaded)";
  if (out.rfind("error", 0) == 0) return out;
  *gpus = std::atoi(out.c_str());
  return out.substr(out.find(' ') + 1) + ", " + std::to_string(*gpus) + " GPU(s)";
#else
  return "";
#endif
}

namespace {

// Whether the hardware stopped where the model said: every thread in the predicted call (or
// finished), comparing a group by its first call.
[[maybe_unused]] bool positions_match(const ReplayPlan& plan, const ReplayReport& report) {
  auto step_head = [&](int rank, int thread, int call) {
    for (const auto& s : plan.ranks[static_cast<size_t>(rank)][static_cast<size_t>(thread)].steps)
      for (int c : s.calls)
        if (c == call) return s.calls.front();
    return call;
  };
  for (size_t r = 0; r < plan.expected_position.size(); ++r)
    for (size_t t = 0; t < plan.expected_position[r].size(); ++t) {
      const int expected = plan.expected_position[r][t];
      const ThreadReport& actual = report.ranks[r].threads[t];
      if (expected == kFinished && actual.state != "finished") return false;
      if (expected == kNotStarted && actual.state != "not started") return false;
      if (expected >= 0 &&
          (actual.state != "in call" || actual.call != step_head(static_cast<int>(r), static_cast<int>(t), expected)))
        return false;
    }
  return true;
}

[[maybe_unused]] void classify(const ReplayPlan& plan, bool hung, ReplayReport& report) {
  using model::Verdict;
  const Verdict v = plan.verdict;
  std::string error;
  std::string split_note;
  for (const auto& r : report.ranks) {
    if (!r.error.empty() && error.empty()) error = "rank " + std::to_string(r.rank) + ": " + r.error;
    if (!r.note.empty()) split_note += "rank " + std::to_string(r.rank) + ": " + r.note;
  }
  if (!error.empty()) {
    report.outcome = Outcome::Crashed;
    report.agrees = v == Verdict::UseAfterDeregister || v == Verdict::UseAfterFree || v == Verdict::UsageError;
    report.summary = error;
    return;
  }
  if (hung) {
    const bool same = positions_match(plan, report);
    if (v == Verdict::Deadlock) {
      report.outcome = same ? Outcome::Confirmed : Outcome::Different;
      report.agrees = same;
      report.summary =
          same ? "hang, every rank blocked in the call the model predicted" : "hang, but not where the model predicted";
    } else if (v == Verdict::DivergentKernel || v == Verdict::Mismatch) {
      report.outcome = Outcome::Confirmed;
      report.agrees = true;
      report.summary = std::string("hang, as a ") + std::string(model::verdict_name(v)) + " does on NCCL";
    } else {
      report.outcome = Outcome::Different;
      report.agrees = false;
      report.summary = "hang where the model predicted " + std::string(model::verdict_name(v));
    }
    return;
  }
  if (v == Verdict::Safe) {
    report.outcome = Outcome::Completed;
    report.agrees = true;
    report.summary = "every rank completed";
  } else if (v == Verdict::Mismatch && !split_note.empty()) {
    report.outcome = Outcome::Confirmed;
    report.agrees = true;
    report.summary = "completed, but split paired the wrong calls: " + split_note;
  } else {
    report.outcome = Outcome::NotReproduced;
    report.agrees = false;
    report.summary = "every rank completed; the model predicted " + std::string(model::verdict_name(v));
  }
}

}  // namespace

ReplayReport replay_nccl(const ReplayPlan& plan, const ReplayOptions& options) {
  const model::World& w = *plan.world;
  ReplayReport report;
  report.scenario = plan.scenario;
  report.predicted = plan.verdict;
  if (w.knobs.stream_progress == model::StreamProgress::Serialized)
    report.notes.push_back("stream_progress = serialized has no NCCL switch: the run used independent streams");
  if (options.free_running)
    report.notes.push_back("free running: the schedule's order was not enforced (an experiment, not a replay)");
  if (w.knobs.profile == model::Profile::Mpi) {
    report.outcome = Outcome::Refused;
    report.summary = "an mpi-profile scenario: the NCCL backend does not run it";
    return report;
  }
  int gpus = 0;
  std::string env = nccl_environment(&gpus);
  report.backend = env;
  if (env.rfind("error", 0) == 0) {
    report.outcome = Outcome::Refused;
    report.summary = env.substr(7);
    return report;
  }
  if (w.ranks > gpus || w.ranks > kMaxRanks) {
    report.outcome = Outcome::Refused;
    report.summary = std::to_string(w.ranks) + " ranks need " + std::to_string(w.ranks) +
                     " GPUs (NCCL rejects two ranks on one GPU); this machine has " + std::to_string(gpus) +
                     " (shrink the scenario: collmc shrink --max-ranks " + std::to_string(gpus) + ")";
    return report;
  }
  if (w.comms.size() > static_cast<size_t>(kMaxComms)) {
    report.outcome = Outcome::Refused;
    report.summary = "more than " + std::to_string(kMaxComms) + " communicators";
    return report;
  }
  for (const auto& threads : plan.ranks)
    if (threads.size() > static_cast<size_t>(kMaxThreads)) {
      report.outcome = Outcome::Refused;
      report.summary = "more than " + std::to_string(kMaxThreads) + " threads in a rank";
      return report;
    }
#ifdef COLLMC_HAVE_NCCL
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast stays off on the lent machines
  setenv("NCCL_RUNTIME_CONNECT", w.knobs.runtime_connect ? "1" : "0", 1);
  Mapping m;
  SharedBlock* shared = m.block;
  const auto start = Clock::now();
  std::vector<pid_t> pids;
  for (int r = 0; r < w.ranks; ++r)
    pids.push_back(spawn([&, r] { return run_nccl_rank(plan, r, shared, options.free_running); }));
  uint64_t last_progress = shared->progress.load();
  auto last_change = Clock::now();
  bool hung = false;
  std::vector<ThreadReport> frozen;  // positions when the hang was declared
  int alive = w.ranks;
  auto reap = [&]() {
    for (pid_t& p : pids)
      if (p > 0 && waitpid(p, nullptr, WNOHANG) == p) {
        p = -1;
        --alive;
      }
  };
  auto snapshot = [&]() {
    report.ranks.clear();
    for (int r = 0; r < w.ranks; ++r) {
      RankReport rr;
      rr.rank = r;
      for (size_t t = 0; t < plan.ranks[static_cast<size_t>(r)].size(); ++t) {
        ThreadReport tr;
        tr.name = plan.ranks[static_cast<size_t>(r)][t].name;
        const auto& slot = shared->ranks[r].threads[t];
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
      report.ranks.push_back(rr);
    }
  };
  while (alive > 0) {
    reap();
    if (alive == 0) break;
    bool all_done = true;
    for (int r = 0; r < w.ranks; ++r) all_done = all_done && shared->ranks[r].status.load() != kRunning;
    if (all_done) shared->release.store(1);
    const uint64_t p = shared->progress.load();
    if (p != last_progress) {
      last_progress = p;
      last_change = Clock::now();
    }
    const double idle = std::chrono::duration<double>(Clock::now() - last_change).count();
    if (idle > options.hang_after_s) {
      hung = true;
      report.hang_detect_seconds = idle;
      snapshot();
      shared->abort.store(1);
      const auto abort_start = Clock::now();
      while (alive > 0 && std::chrono::duration<double>(Clock::now() - abort_start).count() < options.grace_s) {
        reap();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::vector<std::string> killed;
  for (size_t r = 0; r < pids.size(); ++r)
    if (pids[r] > 0) killed.push_back(std::to_string(r));
  kill_and_reap(pids);
  if (!hung) snapshot();
  report.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (int r = 0; r < w.ranks; ++r) {
    auto& rr = report.ranks[static_cast<size_t>(r)];
    const auto& slot = shared->ranks[r];
    const int status = slot.status.load();
    rr.status = status == kFinishedOk ? "finished"
                : status == kError    ? "error"
                : status == kAborted  ? "hung (aborted)"
                                      : "killed";
    if (std::find(killed.begin(), killed.end(), std::to_string(r)) != killed.end() && status != kFinishedOk)
      rr.status = hung ? "hung (killed after the abort)" : "killed";
    if (status == kError) rr.error = slot.error;
    rr.note = slot.note;
    rr.setup_seconds = slot.setup_seconds;
    const int n = std::min(slot.timings.load(), kMaxTimings);
    for (int i = 0; i < n; ++i) rr.calls.push_back(CallTiming{slot.timing_call[i], slot.timing_seconds[i]});
  }
  classify(plan, hung, report);
#endif
  return report;
}

}  // namespace collmc::replay
