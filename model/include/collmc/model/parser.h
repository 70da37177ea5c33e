// Parsing a `.cmc` scenario (LANGUAGE.md). Every error is an InputError with file:line:col.
#pragma once

#include <memory>
#include <string>

#include "collmc/model/ast.h"

namespace collmc::model {

// The largest world a scenario may declare (`ranks N`), and so the largest `collmc gen` writes: the two
// agree. 2^18 = 262,144 ranks: the checker names ranks, comms and buffers with 32-bit ids, so the bound is
// memory and time, not the ids (docs/PERFORMANCE.md, "Issue 37": a sorted Megatron-FSDP layout at
// W = 262,144 is `safe`). The resolver's call limit grows with it (resolve.cpp, kMaxCallsPerRank).
inline constexpr int kMaxWorldRanks = 1 << 18;

Scenario parse_scenario(const std::shared_ptr<const SourceFile>& file);
Scenario parse_file(const std::string& path);
Scenario parse_string(const std::string& text, const std::string& file_name = "<string>");

}  // namespace collmc::model
