#include "collmc/checker/suite.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "collmc/checker/check.h"
#include "collmc/model/world.h"

namespace collmc::checker {

std::vector<std::string> collect_scenarios(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, ec); it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        if (ec) break;
        if (it->is_regular_file(ec) && it->path().extension() == ".cmc") out.push_back(it->path().string());
      }
    } else {
      out.push_back(p);  // a missing file is reported by run_scenario
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

SuiteRow run_scenario(const std::string& path, const SearchOptions& options) {
  SuiteRow row;
  row.path = path;
  try {
    model::World world = model::load_world(path);
    row.expected = world.expect;
    CheckResult r = check(world, options);
    row.verdict = r.verdict;
    row.states = r.stats.states;
    row.seconds = r.stats.seconds;
    if (!row.expected) row.error = "no 'expect' line";
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  return row;
}

std::string suite_table(const std::vector<SuiteRow>& rows) {
  std::ostringstream out;
  size_t width = 8;
  for (const auto& r : rows) width = std::max(width, r.path.size());
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-6s  %-20s  %-20s  %10s  %9s\n", static_cast<int>(width), "scenario",
                "result", "verdict", "expected", "states", "seconds");
  out << line;
  int passed = 0, failed = 0;
  for (const auto& r : rows) {
    std::string verdict = r.verdict ? std::string(model::verdict_name(*r.verdict)) : "error";
    std::string expected = r.expected ? std::string(model::verdict_name(*r.expected)) : "-";
    std::snprintf(line, sizeof line, "%-*s  %-6s  %-20s  %-20s  %10llu  %9.3f\n", static_cast<int>(width),
                  r.path.c_str(), r.passed() ? "ok" : "FAIL", verdict.c_str(), expected.c_str(),
                  static_cast<unsigned long long>(r.states), r.seconds);
    out << line;
    if (!r.error.empty()) out << "    " << r.error << "\n";
    (r.passed() ? passed : failed)++;
  }
  out << passed << " passed, " << failed << " failed\n";
  return out.str();
}

}  // namespace collmc::checker
