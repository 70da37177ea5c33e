// What the three parts of the semantics (call_effects.cpp, step_relation.cpp, diagnosis.cpp) share
// and nothing else needs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "collmc/checker/semantics.h"

namespace collmc::checker {

// The rank has device work not yet completed on `comm`.
inline bool has_part(const RankState& rs, int comm) {
  for (const auto& st : rs.streams)
    for (const auto& e : st)
      for (const auto& p : e.parts)
        if (!p.done && p.comm == comm) return true;
  return false;
}

inline bool streams_empty(const RankState& rs) {
  return std::all_of(rs.streams.begin(), rs.streams.end(), [](const auto& st) { return st.empty(); });
}

// The effects of `calls` issued together by `thread` of `rank` (one call, or a group's calls) on
// `next`, which already has the thread at its new control node: slots taken, device work queued,
// the waits the thread now blocks on. Returns the violation the calls hit, if any (`next` is then
// not a state to explore).
std::optional<Violation> apply_calls(const Semantics& semantics, State& next, int rank, int thread,
                                     const std::vector<int32_t>& calls);

}  // namespace collmc::checker
