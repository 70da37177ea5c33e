// flight_recorder_watch.h: wait for every rank's dump, then import, check and write the review.
#include "collmc/watch/flight_recorder_watch.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/world.h"
#include "collmc/report/check_report.h"
#include "collmc/report/html_report.h"
#include "collmc/report/wait_for_dot.h"
#include "collmc/traces/trace.h"

namespace collmc::watch {

namespace fs = std::filesystem;

FlightRecorderScan scan_flight_recorder_dumps(const std::string& dir, const std::string& prefix, int world) {
  FlightRecorderScan scan;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || !e.is_regular_file(ec) || name.rfind(prefix, 0) != 0) continue;
    files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    scan.waiting_for = "no dump in " + dir + (prefix.empty() ? "" : " named " + prefix + "*") + " yet";
    return scan;
  }
  // A dump is whole once it reads on its own (torch writes it in one go; one being written does not parse).
  for (const auto& f : files) {
    try {
      std::ifstream in(f, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      traces::read_flight_recorder_buffer(f, bytes);
      scan.dumps.push_back(f);
    } catch (const traces::TraceInputError& e) {
      scan.waiting_for = f + " does not read yet (" + e.message() + ")";
    }
  }
  if (scan.dumps.empty()) return scan;
  try {
    const traces::Trace trace = traces::read_flight_recorder(scan.dumps);
    scan.world = std::max(world, trace.world_size);
    for (int r = 0; r < scan.world; ++r) {
      auto it = trace.ranks.find(r);
      if (it == trace.ranks.end() || !it->second.present) scan.missing.push_back(r);
    }
  } catch (const traces::TraceInputError& e) {
    scan.waiting_for = std::string("the dumps do not fit together yet (") + e.what() + ")";
  }
  return scan;
}

FlightRecorderReview review_flight_recorder_dumps(const std::vector<std::string>& dumps, const std::string& out_dir,
                                                  double check_time_limit_s) {
  FlightRecorderReview review;
  const traces::Trace trace = traces::read_flight_recorder(dumps, /*full_history=*/false);
  traces::EmitOptions emit;
  emit.name = "Flight Recorder dumps in " + fs::path(dumps.front()).parent_path().string();
  const std::string scenario = traces::emit_scenario(trace, emit);
  const fs::path dir = out_dir;
  const std::string cmc = (dir / "collmc-flight-recorder.cmc").string();
  model::World world = model::resolve(model::parse_string(scenario, cmc));
  checker::SearchOptions search;
  search.time_limit_s = check_time_limit_s;
  search.progress = checker::SearchOptions::Progress::Never;
  const checker::CheckResult result = checker::check(world, search);
  for (const auto& line : traces::import_summary(trace)) review.summary += line + "\n";
  review.summary += "\n" + report::text_report(result, false);
  const bool hung_unexplained = result.verdict == model::Verdict::Safe && world.observed &&
                                world.observed->outcome == model::ObservedOutcome::Hung;
  review.verdict_exit = hung_unexplained                                 ? 4
                        : result.verdict == model::Verdict::Safe         ? 0
                        : result.verdict == model::Verdict::Inconclusive ? 3
                                                                         : 1;
  if (hung_unexplained)
    review.summary +=
        "warning: the recorded run hung; the model finds no hang: the hang is outside what the dumps record "
        "(registrations, comm creation, host syncs: record the run with `collmc record`)\n";
  std::string svg;
  if (!result.wait_for.empty()) {
    try {
      svg = report::render_svg(report::wait_for_dot(world, result.wait_for, {}));
    } catch (const std::runtime_error&) {
      svg.clear();
    }
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto put = [&](const fs::path& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary);
    out << text;
    if (out) review.written.push_back(path.string());
  };
  put(cmc, scenario);
  put(dir / "collmc-summary.txt", review.summary);
  put(dir / "collmc-review.html", report::html_report(result, svg, {"collmc watch --flight-recorder", ""}));
  return review;
}

}  // namespace collmc::watch
