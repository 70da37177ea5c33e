// Text and JSON renderings of a CheckResult.
#pragma once

#include <string>
#include <vector>

#include "collmc/checker/check.h"
#include "collmc/model/source.h"

namespace collmc::report {

// Which progress models the verdict comes from, in one line without a trailing newline, "" when nothing
// in the scenario depends on mpi_progress: "portable (the default): sync safe, strong safe, weak
// deadlock; the deadlock needs mpi_progress = weak" or "weak (set by the scenario)". The text and HTML
// reports show it.
std::string progress_line(const checker::CheckResult& result);
// Human-readable report; `verbose` adds choices and every step.
std::string text_report(const checker::CheckResult& result, bool verbose = true);
// The JSON result (docs/RESULT_FORMAT.md), pretty-printed.
std::string json_report(const checker::CheckResult& result);
// The JSON result of a file that could not be checked (bad input): `verdict` null and an `error`
// {message, file, line, column}; an element of `check A B --json OUT`'s array.
std::string json_error_report(const std::string& file, const model::InputError& error);
// Several results (json_report's or json_error_report's texts) as one JSON array, in file order.
std::string json_array(const std::vector<std::string>& results);

}  // namespace collmc::report
