#include "collmc/report/suite_table.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "collmc/model/operations.h"

namespace collmc::report {

std::string suite_table(const std::vector<checker::SuiteRow>& rows) {
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

}  // namespace collmc::report
