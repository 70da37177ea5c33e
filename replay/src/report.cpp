#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "collmc/replay/replay.h"

namespace collmc::replay {

std::string text_report(const ReplayReport& r) {
  std::ostringstream out;
  out << r.scenario << ": " << outcome_name(r.outcome)
      << (r.outcome == Outcome::Refused       ? ""
          : r.outcome == Outcome::Interrupted ? " (not compared with the model)"
          : r.allowed_difference              ? " (agrees with the model: a difference the library allows)"
          : r.agrees                          ? " (agrees with the model)"
                                              : " (DISAGREES with the model)")
      << (r.shared_gpu.empty() || r.outcome == Outcome::Refused ? "" : ", on a shared GPU: " + r.shared_gpu)
      << "\n  model: " << model::verdict_name(r.predicted) << "\n";
  for (const auto& n : r.model_notes) out << "  model assumes: " << n << "\n";
  out << "  hardware: " << r.summary << (r.allowed_difference ? " (allowed: see the note)" : "") << "\n";
  if (!r.backend.empty()) out << "  backend: " << r.backend << "\n";
  if (!r.placement.empty()) out << "  placement: " << r.placement << "\n";
  if (!r.launcher.empty() && r.launcher != launcher_name(LauncherKind::Local))
    out << "  launcher: " << r.launcher << "\n";
  for (const auto& n : r.notes) out << "  note: " << n << "\n";
  char buf[160];
  if (r.outcome != Outcome::Refused) {
    std::snprintf(buf, sizeof buf, "  run: %.2f s", r.seconds);
    out << buf;
    if (r.hang_detect_seconds >= 0) {
      std::snprintf(buf, sizeof buf, ", hang declared %.2f s after the last rank blocked (%s)", r.hang_detect_seconds,
                    r.hang_rule == HangRule::Predicted ? "every rank in the call the model predicts"
                                                       : "no progress for --hang-after");
      out << buf;
    }
    if (r.hang_exit_seconds >= 0) {
      std::snprintf(buf, sizeof buf, ", every rank process gone %.2f s later", r.hang_exit_seconds);
      out << buf;
    }
    out << "\n";
  }
  for (const auto& rank : r.ranks) {
    std::snprintf(buf, sizeof buf, "  rank %d: %s, communicators created in %.3f s", rank.rank,
                  rank_outcome_name(rank.outcome), rank.setup_seconds);
    out << buf << "\n";
    for (const auto& t : rank.threads) {
      out << "    " << t.name << ": " << thread_state_name(t.state);
      if (t.call >= 0 && t.state == ThreadState::InCall) out << " #" << t.call;
      out << "\n";
    }
    if (!rank.error.empty()) out << "    error: " << rank.error << "\n";
    if (!rank.note.empty()) out << "    note: " << rank.note << "\n";
  }
  return out.str();
}

std::string json_report(const ReplayReport& r) {
  using json = nlohmann::ordered_json;
  json j = {
      {"format", "collmc-replay"},
      {"version", 1},
      {"scenario", r.scenario},
      {"model_verdict", model::verdict_name(r.predicted)},
      {"outcome", outcome_name(r.outcome)},
      {"agrees", r.agrees},
      {"allowed_difference", r.allowed_difference},
      {"model_notes", r.model_notes},
      {"summary", r.summary},
      {"backend", r.backend},
      {"nccl", r.nccl_version.empty() ? json(nullptr) : json{{"version", r.nccl_version}, {"library", r.nccl_library}}},
      {"placement", r.gpu_of_rank.empty() ? json(nullptr)
                                          : json{{"gpu_of_rank", r.gpu_of_rank},
                                                 {"description", r.placement},
                                                 {"shared_gpu", !r.shared_gpu.empty()},
                                                 {"sharing", r.shared_gpu}}},
      {"notes", r.notes},
      {"seconds", r.seconds},
      {"launcher", r.launcher},
      {"hang_detect_seconds", r.hang_detect_seconds >= 0 ? json(r.hang_detect_seconds) : json(nullptr)},
      {"hang_exit_seconds", r.hang_exit_seconds >= 0 ? json(r.hang_exit_seconds) : json(nullptr)},
      {"hang_rule", r.hang_rule == HangRule::Predicted    ? json("predicted")
                    : r.hang_rule == HangRule::NoProgress ? json("no_progress")
                                                          : json(nullptr)},
      {"interrupted_by", r.interrupted_by ? json(r.interrupted_by) : json(nullptr)}};
  json ranks = json::array();
  for (const auto& rank : r.ranks) {
    json threads = json::array();
    for (const auto& t : rank.threads)
      threads.push_back({{"name", t.name},
                         {"state", thread_state_name(t.state)},
                         {"call", t.call >= 0 ? json(t.call) : json(nullptr)}});
    json calls = json::array();
    for (const auto& c : rank.calls) calls.push_back({{"call", c.call}, {"seconds", c.seconds}});
    ranks.push_back({{"rank", rank.rank},
                     {"status", rank_outcome_name(rank.outcome)},
                     {"error", rank.error},
                     {"note", rank.note},
                     {"setup_seconds", rank.setup_seconds},
                     {"threads", threads},
                     {"calls", calls}});
  }
  j["ranks"] = ranks;
  return j.dump(2) + "\n";
}

}  // namespace collmc::replay
