#include <cstdio>
#include <filesystem>
#include <sstream>

#include "collmc/replay/replay.h"

namespace collmc::replay {

std::vector<CalibrationRow> calibrate(const std::vector<std::string>& files, const ReplayOptions& options,
                                      const checker::SearchOptions& search) {
  std::vector<CalibrationRow> rows;
  // The NCCL the ranks will load, asked once for the whole set (model_loaded_nccl).
  NcclProbe probe;
  bool probed = false;
  for (const auto& f : files) {
    CalibrationRow row;
    row.scenario = std::filesystem::path(f).stem().string();
    try {
      model::World world = model::load_world(f);
      if (options.backend != BackendKind::Mpi && world.knobs.profile == model::Profile::Nccl) {
        if (!probed) {
          probe_machine(probe);  // its failure is the replay's refusal below; here only the version counts
          probed = true;
        }
        model_loaded_nccl(world, probe.version);
      }
      ReplayPlan plan = plan_for_scenario(world, search);
      row.model = std::string(model::verdict_name(plan.verdict));
      ReplayReport report = replay(plan, options);
      row.outcome = outcome_name(report.outcome);
      row.agrees = report.agrees;
      row.allowed = report.allowed_difference;
      row.summary = report.summary;
      row.seconds = report.seconds;
      row.hang_detect_seconds = report.hang_detect_seconds;
      row.hang_exit_seconds = report.hang_exit_seconds;
      row.interrupted = report.outcome == Outcome::Interrupted;
      row.shared_gpu = report.shared_gpu;
    } catch (const std::exception& e) {
      row.outcome = "ERROR";
      row.summary = e.what();
    }
    char hang[64] = "";
    if (row.hang_detect_seconds >= 0)
      std::snprintf(hang, sizeof hang, "  hang declared %.2f s, gone %.2f s later", row.hang_detect_seconds,
                    row.hang_exit_seconds);
    std::fprintf(stderr, "%-45s %-20s %-15s %s%s%s\n", row.scenario.c_str(), row.model.c_str(), row.outcome.c_str(),
                 row.agrees ? "agree" : "DISAGREE", hang, row.shared_gpu.empty() ? "" : "  (shared GPU)");
    rows.push_back(row);
    if (row.interrupted) break;  // the user's signal ends the whole calibration
  }
  return rows;
}

std::string calibration_table(const std::vector<CalibrationRow>& rows) {
  std::ostringstream out;
  out << "| scenario | model verdict | hardware outcome | agree | what the hardware did | seconds | hang declared "
         "after the last block / all gone after (s) |\n"
      << "|---|---|---|---|---|---|---|\n";
  int agree = 0;
  for (const auto& r : rows) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.2f", r.seconds);
    // A shared-GPU result says so in its own cell: it must never read as one on separate GPUs.
    out << "| " << r.scenario << " | " << r.model << " | " << r.outcome
        << (r.shared_gpu.empty() ? "" : " (shared GPU: " + r.shared_gpu + ")") << " | "
        << (r.allowed  ? "yes (allowed)"
            : r.agrees ? "yes"
                       : "**no**")
        << " | " << r.summary << " | " << secs << " | ";
    if (r.hang_detect_seconds >= 0) {
      std::snprintf(secs, sizeof secs, "%.2f / %.2f", r.hang_detect_seconds, r.hang_exit_seconds);
      out << secs;
    }
    out << " |\n";
    agree += r.agrees ? 1 : 0;
  }
  out << "\n" << agree << " agree, " << rows.size() - static_cast<size_t>(agree) << " disagree\n";
  return out.str();
}

}  // namespace collmc::replay
