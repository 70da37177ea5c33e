// Parsing a `.cmc` scenario (LANGUAGE.md). Every error is an InputError with file:line:col.
#pragma once

#include <memory>
#include <string>

#include "collmc/model/ast.h"

namespace collmc::model {

// The largest world a scenario may declare (`ranks N`), and so the largest `collmc gen` writes: the two
// agree. 2^16 = 65,536 ranks: the checker names ranks and comms with 16-bit ids (checker/next_state.h
// Step, checker/state.h Wait and Member); a larger world needs those widened first (docs/PERFORMANCE.md,
// "Issue 37": W = 131,072 was tried and stopped in the search).
inline constexpr int kMaxWorldRanks = 1 << 16;

Scenario parse_scenario(const std::shared_ptr<const SourceFile>& file);
Scenario parse_file(const std::string& path);
Scenario parse_string(const std::string& text, const std::string& file_name = "<string>");

}  // namespace collmc::model
