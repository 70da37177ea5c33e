// Text and JSON renderings of a CheckResult.
#pragma once

#include <string>

#include "collmc/checker/check.h"

namespace collmc::report {

// Human-readable report; `verbose` adds choices and every step.
std::string text_report(const checker::CheckResult& result, bool verbose = true);
// The JSON result (docs/RESULT_FORMAT.md), pretty-printed.
std::string json_report(const checker::CheckResult& result);

}  // namespace collmc::report
