#include "collmc/report/suite_table.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "collmc/model/operations.h"
#include "markup.h"

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

namespace {

// Text for an XML attribute or element: the control characters XML 1.0 forbids become '?', then the markup.
std::string xml_text(const std::string& in) {
  std::string clean = in;
  for (char& c : clean)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') c = '?';
  return escape_markup(clean);
}

}  // namespace

std::string suite_junit(const std::vector<checker::SuiteRow>& rows) {
  size_t failures = 0, errors = 0;
  double seconds = 0;
  for (const auto& r : rows) {
    if (!r.verdict)
      ++errors;
    else if (!r.passed())
      ++failures;
    seconds += r.seconds;
  }
  std::ostringstream out;
  char time[64];
  std::snprintf(time, sizeof time, "%.3f", seconds);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites tests=\"" << rows.size() << "\" failures=\"" << failures << "\" errors=\"" << errors
      << "\" time=\"" << time << "\">\n"
      << "  <testsuite name=\"collmc\" tests=\"" << rows.size() << "\" failures=\"" << failures << "\" errors=\""
      << errors << "\" skipped=\"0\" time=\"" << time << "\">\n";
  for (const auto& r : rows) {
    const size_t slash = r.path.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "." : r.path.substr(0, slash);
    std::snprintf(time, sizeof time, "%.3f", r.seconds);
    out << "    <testcase classname=\"" << xml_text(dir) << "\" name=\"" << xml_text(r.path) << "\" time=\"" << time
        << "\"";
    const std::string verdict = r.verdict ? std::string(model::verdict_name(*r.verdict)) : "";
    const std::string expected = r.expected ? std::string(model::verdict_name(*r.expected)) : "";
    if (!r.verdict) {
      out << ">\n      <error message=\"" << xml_text(r.error) << "\" type=\"bad input\"/>\n    </testcase>\n";
    } else if (!r.passed()) {
      const std::string message = r.expected ? "verdict " + verdict + ", expected " + expected
                                             : "verdict " + verdict + ", and the scenario has no expect line";
      out << ">\n      <failure message=\"" << xml_text(message) << "\" type=\"" << xml_text(verdict) << "\">"
          << xml_text(r.path + ": " + message + " (" + std::to_string(r.states) + " states)")
          << "</failure>\n    </testcase>\n";
    } else {
      out << "/>\n";
    }
  }
  out << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

}  // namespace collmc::report
