// Rank lists written compactly for notes and summaries: "0,2,4..7", "7..1015 step 8".
#pragma once

#include <string>
#include <vector>

#include "collmc/model/world.h"

namespace collmc::traces {

// `ranks` sorted ascending, as every report writes a rank set (model::rank_ranges_text), joined by ",".
inline std::string rank_list(const std::vector<int>& ranks) { return model::rank_ranges_text(ranks, ","); }

}  // namespace collmc::traces
