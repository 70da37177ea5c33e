// Rank lists written compactly for notes and summaries: "0,2,4..7".
#pragma once

#include <string>
#include <vector>

#include "collmc/model/world.h"

namespace collmc::traces {

// `ranks` sorted ascending; runs of three or more become "a..b".
inline std::string rank_list(const std::vector<int>& ranks) { return model::rank_ranges_text(ranks, ","); }

}  // namespace collmc::traces
