// What a run means next to the model's verdict: CONFIRMED, COMPLETED, NOT REPRODUCED, DIFFERENT or
// CRASHED, and whether that agrees. One rule for every backend; the MPI profile adds one allowance:
// MPI_Bcast and MPI_Reduce may return early on some ranks (eager protocol), which the model, assuming
// they synchronize, does not (SEMANTICS.md §6). Such a run agrees, and the report says why.
#include <string>

#include "backend.h"

namespace collmc::replay {

namespace {

using model::OpKind;
using model::Verdict;

// The index of the step that holds `call` in the thread's plan, or -1.
int step_index(const ThreadPlan& thread, int call) {
  for (size_t i = 0; i < thread.steps.size(); ++i)
    for (int c : thread.steps[i].calls)
      if (c == call) return static_cast<int>(i);
  return -1;
}

bool may_return_early(const ReplayPlan& plan, int call) {
  // Under mpi_progress = strong or weak the model already lets the early ranks leave.
  if (plan.world->knobs.profile != model::Profile::Mpi || call < 0 || plan.mpi_progress != model::MpiProgress::Sync)
    return false;
  const OpKind k = plan.world->calls[static_cast<size_t>(call)].kind;
  return k == OpKind::Broadcast || k == OpKind::Reduce;
}

struct Positions {
  bool match = true;  // every thread where the model predicted, or past an early return
  std::string early;  // the calls some thread got past although the model said it blocks
};

// Whether the hardware stopped where the model said: every thread in the predicted call (or
// finished), comparing a group by its first call.
Positions compare_positions(const ReplayPlan& plan, const std::vector<RankReport>& ranks) {
  Positions out;
  for (size_t r = 0; r < plan.expected_position.size(); ++r)
    for (size_t t = 0; t < plan.expected_position[r].size(); ++t) {
      const ThreadPlan& thread = plan.ranks[r][t];
      const int expected = plan.expected_position[r][t];
      const ThreadReport& actual = ranks[r].threads[t];
      if (expected == kFinished) {
        out.match = out.match && actual.state == ThreadState::Finished;
        continue;
      }
      if (expected == kNotStarted) {
        out.match = out.match && actual.state == ThreadState::NotStarted;
        continue;
      }
      const int want = step_index(thread, expected);
      if (want < 0) {
        out.match = out.match && actual.state == ThreadState::InCall && actual.call == expected;
        continue;
      }
      const int got = actual.state == ThreadState::Finished ? static_cast<int>(thread.steps.size())
                      : actual.state == ThreadState::InCall ? step_index(thread, actual.call)
                                                            : -2;
      if (got == want) continue;
      if (may_return_early(plan, expected) && got > want) {
        out.early +=
            "rank " + std::to_string(r) + " got past `" + plan.world->calls[static_cast<size_t>(expected)].text + "`; ";
        continue;
      }
      out.match = false;
    }
  return out;
}

// The calls the model predicts blocked that a real MPI may let return early.
std::string early_candidates(const ReplayPlan& plan) {
  std::string out;
  for (const auto& rank : plan.expected_position)
    for (int call : rank)
      if (may_return_early(plan, call))
        out += (out.empty() ? "`" : ", `") + plan.world->calls[static_cast<size_t>(call)].text + "`";
  return out;
}

const char* kEarlyNote =
    "the model assumes MPI_Bcast/MPI_Reduce synchronize every member; the MPI standard allows a rank to "
    "leave them early (Open MPI does for small messages: eager protocol), so this run may legitimately not "
    "hang where the model's does. The program is still erroneous: it hangs on an MPI (or a message size) "
    "that synchronizes.";

// The default (`portable`) found the violation under strong or weak progress, after sync found none
// (check() explores sync first and stops at the first violation): a synchronizing MPI completes the
// program, so a run that completes shows the library was not that model, not that the model is wrong.
bool hang_needs_progress_model(const ReplayPlan& plan) {
  return plan.progress_matters && plan.world->knobs.mpi_progress == model::MpiProgress::Portable &&
         plan.mpi_progress != model::MpiProgress::Sync;
}

}  // namespace

bool predicts_blocking(const ReplayPlan& plan) {
  const Verdict v = plan.verdict;
  if (v != Verdict::Deadlock && v != Verdict::Mismatch && v != Verdict::DivergentKernel) return false;
  for (const auto& rank : plan.expected_position)
    for (int pos : rank)
      if (pos >= 0) return true;
  return false;
}

bool stands_where_predicted(const ReplayPlan& plan, const std::vector<RankReport>& ranks) {
  if (ranks.size() != plan.expected_position.size()) return false;
  const Positions p = compare_positions(plan, ranks);
  return p.match && p.early.empty();
}

void classify(const ReplayPlan& plan, bool hung, const char* backend, ReplayReport& report) {
  const Verdict v = plan.verdict;
  std::string error;
  std::string split_note;
  std::string died;
  for (const auto& r : report.ranks) {
    if (!r.error.empty() && error.empty()) error = "rank " + std::to_string(r.rank) + ": " + r.error;
    if (!r.note.empty()) split_note += "rank " + std::to_string(r.rank) + ": " + r.note;
    if (!hung && r.outcome != RankOutcome::Finished) died += (died.empty() ? "" : ", ") + std::to_string(r.rank);
  }
  if (error.empty() && !died.empty()) error = "rank(s) " + died + " ended before finishing their program";
  if (!error.empty()) {
    report.outcome = Outcome::Crashed;
    report.agrees = v == Verdict::UseAfterDeregister || v == Verdict::UseAfterFree || v == Verdict::UsageError;
    report.summary = error;
    return;
  }
  if (hung) {
    if (v == Verdict::Deadlock) {
      const Positions p = compare_positions(plan, report.ranks);
      report.outcome = p.match ? Outcome::Confirmed : Outcome::Different;
      report.agrees = p.match;
      report.summary = p.match ? "hang, every rank blocked in the call the model predicted"
                               : "hang, but not where the model predicted";
      if (p.match && !p.early.empty()) {
        report.summary = "hang; " + p.early + "every other rank blocked in the call the model predicted";
        report.allowed_difference = true;
        report.notes.push_back(kEarlyNote);
      }
    } else if (v == Verdict::DivergentKernel || v == Verdict::Mismatch) {
      report.outcome = Outcome::Confirmed;
      report.agrees = true;
      report.summary = std::string("hang, as a ") + std::string(model::verdict_name(v)) + " does on " + backend;
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
  } else if (const std::string early = early_candidates(plan);
             (v == Verdict::Deadlock || v == Verdict::Mismatch) && !early.empty()) {
    report.outcome = Outcome::NotReproduced;
    report.agrees = true;
    report.allowed_difference = true;
    report.summary = "every rank completed: " + early +
                     " returned early on some rank, which MPI allows (the model assumes it synchronizes)";
    report.notes.push_back(kEarlyNote);
  } else if (hang_needs_progress_model(plan)) {
    const std::string name(model::mpi_progress_name(plan.mpi_progress));
    report.outcome = Outcome::NotReproduced;
    report.agrees = true;
    report.allowed_difference = true;
    report.summary = "every rank completed: the model's " + std::string(model::verdict_name(v)) +
                     " needs mpi_progress = " + name + " (sync finds none), which this MPI did not show";
    report.notes.push_back(
        "the default checks every progress model MPI allows (MPI 4.1 sec. 2.9, 6.14); one run of "
        "one MPI shows one of them. The program is not portable: it hangs on an MPI with " +
        name + " progress (SEMANTICS_NOTES.md, \"MPI progress\")");
  } else {
    report.outcome = Outcome::NotReproduced;
    report.agrees = false;
    report.summary = "every rank completed; the model predicted " + std::string(model::verdict_name(v));
  }
}

}  // namespace collmc::replay
