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

  bool agrees_with_expect() const { return world && world->expect && *world->expect == verdict; }
};

CheckResult check(const model::World& world, const SearchOptions& options);

}  // namespace collmc::checker
