// Rank lists written compactly for notes and summaries: "0,2,4..7", "7..1015 step 8".
#pragma once

#include <string>
#include <vector>

namespace collmc::traces {

// `ranks` sorted ascending: runs of three or more consecutive ranks become "a..b", runs of four or more
// with one stride "a..b step s" (the ranks of a data-parallel group), the rest one by one, joined by ",".
inline std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    if (j >= i + 2) {
      out += std::to_string(ranks[i]) + ".." + std::to_string(ranks[j]);
      i = j + 1;
      continue;
    }
    if (i + 1 < ranks.size()) {
      const int step = ranks[i + 1] - ranks[i];
      size_t k = i + 1;
      while (k + 1 < ranks.size() && ranks[k + 1] - ranks[k] == step) ++k;
      if (k >= i + 3) {
        out += std::to_string(ranks[i]) + ".." + std::to_string(ranks[k]) + " step " + std::to_string(step);
        i = k + 1;
        continue;
      }
    }
    out += std::to_string(ranks[i]);
    ++i;
  }
  return out;
}

}  // namespace collmc::traces
