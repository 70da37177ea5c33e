#include "collmc/checker/suite.h"

#include <algorithm>
#include <filesystem>

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

}  // namespace collmc::checker
