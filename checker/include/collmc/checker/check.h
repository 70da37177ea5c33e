// Checking a world: the search plus everything a report needs, as plain data (rendered by report/).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collmc/checker/search.h"
#include "collmc/checker/semantics.h"
#include "collmc/checker/wait_for_graph.h"
#include "collmc/model/world.h"

namespace collmc::checker {

// One step of the schedule, in the scenario's words.
struct ScheduleStep {
  Step step;  // the raw step, as the next-state function names it
  StepKind kind = StepKind::Issue;
  int rank = 0;
  int thread = 0;
  std::vector<int> calls;  // Issue: one; IssueGroup: the group's calls
  int comm = -1;           // Complete, CompletePair
  int slot = -1;
  int peer = -1;
  std::string text;
};

// One search of a check: the progress model it ran under and what it found.
struct ProgressRun {
  model::MpiProgress progress = model::MpiProgress::Sync;
  model::Verdict verdict = model::Verdict::Safe;
};

struct CheckResult {
  const model::World* world = nullptr;
  model::Verdict verdict = model::Verdict::Safe;
  std::optional<Violation> violation;
  std::vector<ScheduleStep> schedule;
  std::vector<BlockedCall> blocked;  // where every rank stands at the end of the schedule
  WaitForGraph wait_for;             // for deadlocks: who waits for whom, and the cycles
  // The linearized program each thread executed along the schedule: [rank][thread] -> call ids.
  std::vector<std::vector<std::vector<int>>> executed;
  SearchStats stats;
  std::string limit;
  SearchOptions options;
  // The progress model the verdict, schedule, blocked calls and graph come from (sync, strong or weak):
  // a Semantics built with it (Semantics(world, mpi_progress)) replays the schedule.
  model::MpiProgress mpi_progress = model::MpiProgress::Sync;
  // Whether the world has a call whose effect depends on the progress model (has_progress_dependent_calls).
  bool progress_matters = false;
  // The searches the check ran, in order (progress_models): one when the scenario sets mpi_progress or
  // nothing depends on it; for the default (`portable`) sync, strong, weak, stopping at the first that
  // finds a violation. `stats` adds up their work (states, transitions, expanded, seconds).
  std::vector<ProgressRun> progress_runs;

  bool agrees_with_expect() const { return world && world->expect && *world->expect == verdict; }
};

// Explores every progress model progress_models(world) names (SEMANTICS_NOTES.md, "MPI progress"): the
// first violation any finds is the verdict; else `inconclusive` if one search was, else `safe`. A time
// limit is for the whole check (each later search gets what is left); max_states and max_memory_mib are
// per search.
CheckResult check(const model::World& world, const SearchOptions& options);

}  // namespace collmc::checker
