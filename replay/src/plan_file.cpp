// The plan a launcher hands to rank processes it does not fork (docs/REPLAY.md, MPI backend).
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "collmc/model/parser.h"
#include "collmc/replay/plan.h"

namespace collmc::replay {

using json = nlohmann::json;

std::string plan_to_json(const ReplayPlan& plan) {
  const model::World& w = *plan.world;
  if (!w.source || w.source->path.empty()) throw std::runtime_error("the plan's scenario has no file");
  json calls = json::array();
  for (const auto& c : w.calls) calls.push_back(c.text);
  json ranks = json::array();
  for (const auto& threads : plan.ranks) {
    json jt = json::array();
    for (const auto& t : threads) {
      json steps = json::array();
      for (const auto& s : t.steps)
        steps.push_back({{"calls", s.calls}, {"group", s.group}, {"spawn", s.spawn_thread}, {"turn", s.turn}});
      jt.push_back({{"name", t.name}, {"steps", steps}});
    }
    ranks.push_back(jt);
  }
  json j = {{"format", "collmc-replay-plan"},
            {"version", 1},
            {"scenario", std::filesystem::absolute(w.source->path).string()},
            // The text too: ranks on other nodes need not see the file (only an edit is detected).
            {"scenario_text", w.source->text},
            {"calls", calls},
            {"verdict", model::verdict_name(plan.verdict)},
            {"violation", plan.violation},
            {"turns", plan.turns},
            {"ranks", ranks},
            {"expected_position", plan.expected_position},
            {"mpi_progress", model::mpi_progress_name(plan.mpi_progress)},
            {"progress_matters", plan.progress_matters}};
  return j.dump();
}

ReplayPlan plan_from_file(const std::string& path, model::World& world) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the plan " + path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return plan_from_text(text, path, world);
}

ReplayPlan plan_from_text(const std::string& text, const std::string& path, model::World& world) {
  try {
    const json j = json::parse(text);
    if (j.at("format").get<std::string>() != "collmc-replay-plan" || j.at("version").get<int>() != 1)
      throw std::runtime_error(path + ": not a collmc replay plan, version 1");
    const std::string scenario = j.at("scenario").get<std::string>();
    world = j.contains("scenario_text")
                ? model::resolve(model::parse_string(j.at("scenario_text").get<std::string>(), scenario))
                : model::load_world(scenario);
    const auto& calls = j.at("calls");
    if (calls.size() != world.calls.size())
      throw std::runtime_error(path + ": the scenario has changed since the plan was written");
    for (size_t i = 0; i < calls.size(); ++i)
      if (calls[i].get<std::string>() != world.calls[i].text)
        throw std::runtime_error(path + ": call " + std::to_string(i) + " differs from the scenario");
    ReplayPlan plan;
    plan.world = &world;
    plan.scenario = world.source ? world.source->path : "";
    auto verdict = model::verdict_from_name(j.at("verdict").get<std::string>());
    if (!verdict) throw std::runtime_error(path + ": unknown verdict");
    plan.verdict = *verdict;
    plan.violation = j.at("violation").get<std::string>();
    plan.turns = j.at("turns").get<int>();
    for (const auto& jt : j.at("ranks")) {
      std::vector<ThreadPlan> threads;
      for (const auto& t : jt) {
        ThreadPlan tp{t.at("name").get<std::string>(), {}};
        for (const auto& s : t.at("steps")) {
          PlanStep step{s.at("calls").get<std::vector<int>>(), s.at("group").get<bool>(), s.at("spawn").get<int>(),
                        s.at("turn").get<int>()};
          for (int c : step.calls)
            if (c < 0 || static_cast<size_t>(c) >= world.calls.size())
              throw std::runtime_error(path + ": call " + std::to_string(c) + " is not in the scenario");
          if (step.calls.empty() && step.spawn_thread < 0) throw std::runtime_error(path + ": a step without calls");
          tp.steps.push_back(std::move(step));
        }
        threads.push_back(std::move(tp));
      }
      plan.ranks.push_back(std::move(threads));
    }
    plan.expected_position = j.at("expected_position").get<std::vector<std::vector<int>>>();
    const std::string progress = j.value("mpi_progress", std::string("sync"));
    for (const auto m : {model::MpiProgress::Sync, model::MpiProgress::Strong, model::MpiProgress::Weak})
      if (model::mpi_progress_name(m) == progress) plan.mpi_progress = m;
    plan.progress_matters = j.value("progress_matters", false);
    if (plan.ranks.size() != static_cast<size_t>(world.ranks))
      throw std::runtime_error(path + ": the plan has " + std::to_string(plan.ranks.size()) + " ranks, the scenario " +
                               std::to_string(world.ranks));
    return plan;
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": not a valid plan: " + e.what());
  }
}

}  // namespace collmc::replay
