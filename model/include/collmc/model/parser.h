// Parsing a `.cmc` scenario (LANGUAGE.md). Every error is an InputError with file:line:col.
#pragma once

#include <memory>
#include <string>

#include "collmc/model/ast.h"

namespace collmc::model {

// The largest world a scenario may declare (`ranks N`), and so the largest `collmc gen` writes: the two
// agree. 2^18 = 262,144 ranks; the sorted Megatron-FSDP layout at W = 131,072 checks in a few seconds
// and at 2^18 within a few GB (docs/PERFORMANCE.md, "Issue 37").
inline constexpr int kMaxWorldRanks = 1 << 18;

Scenario parse_scenario(const std::shared_ptr<const SourceFile>& file);
Scenario parse_file(const std::string& path);
Scenario parse_string(const std::string& text, const std::string& file_name = "<string>");

}  // namespace collmc::model
