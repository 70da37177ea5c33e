// What each rank's threads run, in which order, and what the model predicts: the replay engine's
// input, derived from the checker's schedule (never from the semantics a second time).
#pragma once

#include <string>
#include <vector>

#include "collmc/checker/check.h"
#include "collmc/model/world.h"

namespace collmc::replay {

struct PlanStep {
  std::vector<int> calls;  // one call, or a group's calls
  bool group = false;
  int spawn_thread = -1;  // >= 0: start that thread instead of calling
  int turn = -1;          // >= 0: the sequencer's turn this step must wait for (the schedule's order)
};

struct ThreadPlan {
  std::string name;
  std::vector<PlanStep> steps;
};

// What the model says each thread is doing when the run ends: a call id, kFinished, or kNotStarted.
constexpr int kFinished = -1;
constexpr int kNotStarted = -2;

struct ReplayPlan {
  const model::World* world = nullptr;
  std::string scenario;  // file
  model::Verdict verdict = model::Verdict::Safe;
  std::string violation;                            // the model's message for violations
  std::vector<std::vector<ThreadPlan>> ranks;       // [rank][thread]
  std::vector<std::vector<int>> expected_position;  // [rank][thread]
  int turns = 0;
  // The progress model the prediction is under (CheckResult::mpi_progress), and whether the scenario has
  // a call it changes (a rooted MPI collective): a real MPI run behaves as one model.
  model::MpiProgress mpi_progress = model::MpiProgress::Sync;
  bool progress_matters = false;
};

// From a checker result: the schedule's host steps in order (each a sequencer turn), then every
// thread's remaining program with the first resolution of each choice.
ReplayPlan plan_from_result(const model::World& world, const checker::CheckResult& result);

// Checks the scenario, then plans its counterexample, or for a safe scenario its first complete run.
ReplayPlan plan_for_scenario(const model::World& world, const checker::SearchOptions& options);

// A JSON result (docs/RESULT_FORMAT.md): loads the scenario it names into `world` and plans its
// schedule. Throws std::runtime_error when the file does not match the scenario any more.
ReplayPlan plan_from_json(const std::string& path, model::World& world);

// A plan as a file, for rank processes another program starts (mpirun): the scenario's absolute
// path, its calls' text (to detect an edited scenario), the steps and the model's prediction.
std::string plan_to_json(const ReplayPlan& plan);
// Loads the scenario into `world` and the plan from `path`. Throws std::runtime_error.
ReplayPlan plan_from_file(const std::string& path, model::World& world);
// The same from the plan's text (`origin` names it in errors): a rank that got it from a TCP store.
// The scenario comes from the text the plan carries, not from its file.
ReplayPlan plan_from_text(const std::string& text, const std::string& origin, model::World& world);

}  // namespace collmc::replay
