#include "collmc/replay/plan.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "collmc/checker/semantics.h"

namespace collmc::replay {

namespace {

using checker::ControlEdge;
using checker::Semantics;
using checker::State;
using checker::Step;
using checker::StepKind;

// A host step is named by its thread and control edge, a device step by its slot (a JSON result
// carries exactly these).
bool same_step(const Step& a, const Step& b) {
  if (a.kind != b.kind) return false;
  if (a.kind == StepKind::Complete) return a.comm == b.comm && a.slot == b.slot;
  if (a.kind == StepKind::CompletePair)
    return a.comm == b.comm && a.slot == b.slot && a.rank == b.rank && a.peer == b.peer;
  return a.rank == b.rank && a.thread == b.thread && a.edge == b.edge;
}

// Applies `step` to `s` through the next-state function; returns the step as the function names it.
State apply(const Semantics& sem, const State& s, Step& step) {
  std::vector<checker::Transition> succ;
  sem.successors(s, succ);
  for (auto& t : succ)
    if (same_step(t.step, step)) {
      step = t.step;
      return std::move(t.next);
    }
  throw std::runtime_error("the schedule does not fit the scenario (step '" + sem.describe_step(step) +
                           "' is not enabled): was the scenario edited after the result was written?");
}

// A thread's remaining program from its position, taking the first edge of every choice.
void continue_from(const Semantics& sem, checker::ControlPosition at, ThreadPlan& plan) {
  const auto& control = sem.control();
  while (at.node >= 0 && control.edge_count(at) > 0) {
    const ControlEdge& e = control.edge_at(at, 0);
    PlanStep p;
    switch (e.kind) {
      case ControlEdge::Kind::Call:
        p.calls = {e.call};
        plan.steps.push_back(p);
        break;
      case ControlEdge::Kind::Group:
        p.calls = control.groups[static_cast<size_t>(e.group)];
        p.group = true;
        plan.steps.push_back(p);
        break;
      case ControlEdge::Kind::Spawn:
        p.spawn_thread = e.thread;
        plan.steps.push_back(p);
        break;
      case ControlEdge::Kind::Choice:
        break;
    }
    control.take(at, 0);
  }
}

ReplayPlan build(const Semantics& sem, const std::vector<Step>& schedule, model::Verdict verdict,
                 const std::string& violation) {
  const model::World& world = sem.world();
  ReplayPlan plan;
  plan.world = &world;
  plan.scenario = world.source ? world.source->path : "";
  plan.verdict = verdict;
  plan.violation = violation;
  plan.mpi_progress = sem.mpi_progress();
  plan.progress_matters = checker::has_progress_dependent_calls(world);
  plan.ranks.resize(static_cast<size_t>(world.ranks));
  for (int r = 0; r < world.ranks; ++r)
    for (const auto& t : world.programs[static_cast<size_t>(r)].threads)
      plan.ranks[static_cast<size_t>(r)].push_back(ThreadPlan{t.name, {}});
  State s = sem.initial();
  for (Step step : schedule) {
    s = apply(sem, s, step);
    auto& thread = plan.ranks[step.rank][step.thread];
    PlanStep p;
    switch (step.kind) {
      case StepKind::Issue:
      case StepKind::IssueGroup:
        p.calls = sem.step_calls(step);
        p.group = step.kind == StepKind::IssueGroup;
        p.turn = plan.turns++;
        thread.steps.push_back(p);
        break;
      case StepKind::Spawn:
        p.spawn_thread = step.spawned_thread;
        p.turn = plan.turns++;
        thread.steps.push_back(p);
        break;
      default:  // choices are already in the order of calls; completions are the device's
        break;
    }
  }
  // After the schedule: what is left of every thread (nothing for a thread blocked in a cycle; the
  // calls after a violating step, such as the sync that reports an illegal memory access).
  for (int r = 0; r < world.ranks; ++r)
    for (size_t t = 0; t < plan.ranks[static_cast<size_t>(r)].size(); ++t) {
      const auto& ts = s.ranks[static_cast<size_t>(r)].threads[t];
      if (ts.node >= 0) continue_from(sem, ts, plan.ranks[static_cast<size_t>(r)][t]);
    }
  // The model's prediction of where every thread ends.
  plan.expected_position.resize(static_cast<size_t>(world.ranks));
  for (int r = 0; r < world.ranks; ++r)
    plan.expected_position[static_cast<size_t>(r)].assign(plan.ranks[static_cast<size_t>(r)].size(), kFinished);
  if (verdict != model::Verdict::Safe) {
    for (const auto& b : sem.blocked(s)) {
      if (b.thread < 0) continue;
      int& pos = plan.expected_position[static_cast<size_t>(b.rank)][static_cast<size_t>(b.thread)];
      // A thread without a control node was never spawned (ThreadState::node; not its reason's text).
      if (s.ranks[static_cast<size_t>(b.rank)].threads[static_cast<size_t>(b.thread)].node < 0)
        pos = kNotStarted;
      else if (!b.finished && b.call >= 0)
        pos = b.call;
    }
  }
  return plan;
}

// The first complete run: always the first enabled step.
std::vector<Step> first_run(const Semantics& sem) {
  std::vector<Step> steps;
  State s = sem.initial();
  std::vector<checker::Transition> succ;
  while (true) {
    succ.clear();
    sem.successors(s, succ);
    if (succ.empty()) break;
    steps.push_back(succ.front().step);
    s = std::move(succ.front().next);
  }
  return steps;
}

}  // namespace

ReplayPlan plan_from_result(const model::World& world, const checker::CheckResult& result) {
  const Semantics sem(world, result.mpi_progress);  // the schedule is one of that model's
  std::vector<Step> steps;
  for (const auto& s : result.schedule) steps.push_back(s.step);
  if (result.verdict == model::Verdict::Safe) steps = first_run(sem);
  return build(sem, steps, result.verdict, result.violation ? result.violation->message : "");
}

ReplayPlan plan_for_scenario(const model::World& world, const checker::SearchOptions& options) {
  checker::CheckResult r = checker::check(world, options);
  if (r.verdict == model::Verdict::Inconclusive)
    throw std::runtime_error("the check was inconclusive (" + r.limit + "): nothing to replay");
  return plan_from_result(world, r);
}

ReplayPlan plan_from_json(const std::string& path, model::World& world) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not a JSON result: " + e.what());
  }
  if (j.value("format", "") != "collmc-result" || j.value("version", 0) != 1)
    throw std::runtime_error(path + ": not a collmc-result version 1");
  world = model::load_world(j.at("scenario").at("file").get<std::string>());
  const auto& calls = j.at("calls");
  if (calls.size() != world.calls.size())
    throw std::runtime_error(path + ": the scenario has changed since the result was written");
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].at("text").get<std::string>() != world.calls[i].text)
      throw std::runtime_error(path + ": call " + std::to_string(i) + " differs from the scenario");
  auto verdict = model::verdict_from_name(j.at("verdict").get<std::string>());
  if (!verdict || *verdict == model::Verdict::Inconclusive)
    throw std::runtime_error(path + ": an inconclusive result has no schedule to replay");
  std::vector<Step> steps;
  const std::map<std::string, StepKind> kinds = {
      {"choose", StepKind::Choose},    {"spawn", StepKind::Spawn},       {"issue", StepKind::Issue},
      {"group", StepKind::IssueGroup}, {"complete", StepKind::Complete}, {"complete_pair", StepKind::CompletePair}};
  for (const auto& js : j.at("schedule")) {
    Step st;
    st.kind = kinds.at(js.at("kind").get<std::string>());
    st.rank = js.at("rank").get<int32_t>();
    if (js.contains("thread")) st.thread = js.at("thread").get<int32_t>();
    if (js.contains("edge")) st.edge = js.at("edge").get<int32_t>();
    if (js.contains("comm")) st.comm = js.at("comm").get<int32_t>();
    if (js.contains("slot")) st.slot = js.at("slot").get<uint32_t>();
    if (js.contains("peer")) st.peer = js.at("peer").get<int32_t>();
    if (st.kind == StepKind::Issue) st.call = js.at("calls").at(0).get<int>();
    steps.push_back(st);
  }
  // The model the result's schedule is under (RESULT_FORMAT.md, `mpi_progress`); a result without the
  // field, or a safe one, is replayed under the scenario's setting.
  model::MpiProgress progress = world.knobs.mpi_progress;
  if (j.contains("mpi_progress") && j["mpi_progress"].is_object() && j["mpi_progress"].contains("verdict_under") &&
      j["mpi_progress"]["verdict_under"].is_string()) {
    const std::string under = j["mpi_progress"]["verdict_under"].get<std::string>();
    for (const auto m : {model::MpiProgress::Sync, model::MpiProgress::Strong, model::MpiProgress::Weak})
      if (model::mpi_progress_name(m) == under) progress = m;
  }
  const Semantics sem(world, progress);
  if (*verdict == model::Verdict::Safe) steps = first_run(sem);
  std::string message = j.at("violation").is_object() ? j["violation"].value("message", "") : "";
  return build(sem, steps, *verdict, message);
}

}  // namespace collmc::replay
