// The table of a scenario suite (`collmc test`, `collmc check --expect`).
#pragma once

#include <string>
#include <vector>

#include "collmc/checker/suite.h"

namespace collmc::report {

// The table and the closing line `N passed, N failed`.
std::string suite_table(const std::vector<checker::SuiteRow>& rows);

// The same rows as a JUnit XML report (`collmc test --junit FILE`), the format CI systems read: one <testsuite>
// "collmc", one <testcase> per scenario (classname: its directory), a <failure> when its verdict disagrees with
// its `expect` line (or it has none), an <error> when it does not load.
std::string suite_junit(const std::vector<checker::SuiteRow>& rows);

}  // namespace collmc::report
