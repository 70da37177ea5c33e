// collmc test: check every scenario under the paths against its expect line.
#include <iostream>

#include "cli_common.h"
#include "collmc/checker/suite.h"
#include "collmc/report/suite_table.h"
#include "commands.h"

namespace collmc::cli {

using model::Verdict;

int cmd_test(const std::vector<std::string>& args) {
  po::options_description d = search_options();
  d.add_options()("path", po::value<std::vector<std::string>>(), "file or directory");
  const auto [vm, paths] = parse_with_positional(args, d, "path", "test needs a file or directory");
  const auto options = to_search(vm);
  std::vector<checker::SuiteRow> rows;
  for (const auto& f : checker::collect_scenarios(paths)) rows.push_back(checker::run_scenario(f, options));
  std::cout << report::suite_table(rows);
  bool ok = !rows.empty() && std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.passed(); });
  return ok ? 0 : 1;
}

}  // namespace collmc::cli
