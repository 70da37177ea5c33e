// collmc test: check every scenario under the paths against its expect line.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli_common.h"
#include "collmc/checker/suite.h"
#include "collmc/report/suite_table.h"
#include "commands.h"

namespace collmc::cli {

using model::Verdict;

int cmd_test(const std::vector<std::string>& args) {
  po::options_description d = search_options();
  d.add_options()("path", po::value<std::vector<std::string>>(), "file or directory")(
      "junit", po::value<std::string>()->value_name("FILE"),
      "also write the results as a JUnit XML report to FILE ('-': standard output, instead of the table), for CI");
  const auto [vm, paths] = parse_with_positional(args, d, "path", "test needs a file or directory");
  auto options = to_search(vm);
  const std::string junit = vm.count("junit") ? vm["junit"].as<std::string>() : "";
  if (!junit.empty()) check_writable(junit);  // before the checks, as check does for its outputs
  // A path that is not there is bad input (exit 2), not a failing scenario: say so before any work.
  for (const auto& p : paths) {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0) throw std::runtime_error("cannot read " + p + ": " + std::strerror(errno));
  }
  const std::vector<std::string> files = checker::collect_scenarios(paths);
  if (files.empty()) {
    std::string where;
    for (const auto& p : paths) where += (where.empty() ? "" : ", ") + p;
    throw std::runtime_error("no .cmc files under " + where);
  }
  std::vector<checker::SuiteRow> rows;
  for (const auto& f : files) rows.push_back(checker::run_scenario(f, options));
  if (junit.empty() || !is_stdout(junit)) std::cout << report::suite_table(rows);
  if (!junit.empty()) write_file(junit, report::suite_junit(rows));
  // Bad input (a file that does not load) outranks a disagreement, as in `check`.
  const bool bad = std::any_of(rows.begin(), rows.end(), [](const auto& r) { return !r.verdict; });
  const bool ok = std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.passed(); });
  return bad ? kExitBadInput : ok ? kExitSafe : kExitViolation;
}

}  // namespace collmc::cli
