// The table of a scenario suite (`collmc test`, `collmc check --expect`).
#pragma once

#include <string>
#include <vector>

#include "collmc/checker/suite.h"

namespace collmc::report {

// The table and the closing line `N passed, N failed`.
std::string suite_table(const std::vector<checker::SuiteRow>& rows);

}  // namespace collmc::report
