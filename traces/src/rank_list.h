// Rank lists written compactly for notes and summaries: "0, 2, 4..7".
#pragma once

#include <string>
#include <vector>

namespace collmc::traces {

// `ranks` sorted ascending; runs of three or more become "a..b".
inline std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    if (j >= i + 2) {
      out += std::to_string(ranks[i]) + ".." + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      out += std::to_string(ranks[i]);
      ++i;
    }
  }
  return out;
}

}  // namespace collmc::traces
