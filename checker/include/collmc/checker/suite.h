// Running many scenario files against their `expect` lines (`collmc test`, `collmc check --expect`).
// report/ renders the table.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collmc/checker/search.h"
#include "collmc/model/operations.h"

namespace collmc::checker {

struct SuiteRow {
  std::string path;
  std::optional<model::Verdict> verdict;  // empty: the file did not load
  std::optional<model::Verdict> expected;
  std::string error;  // the load error, if any
  uint64_t states = 0;
  double seconds = 0;
  bool passed() const { return verdict && expected && *verdict == *expected; }
};

// Every `.cmc` file under the given files and directories (recursively), sorted.
std::vector<std::string> collect_scenarios(const std::vector<std::string>& paths);

SuiteRow run_scenario(const std::string& path, const SearchOptions& options);

}  // namespace collmc::checker
