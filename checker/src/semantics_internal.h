// What the three parts of the semantics (call_effects.cpp, step_relation.cpp, diagnosis.cpp) share
// and nothing else needs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <tuple>
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

// The rank has device work not yet completed on any comm (its GPU is not idle).
inline bool has_any_part(const RankState& rs) {
  for (const auto& st : rs.streams)
    for (const auto& e : st)
      for (const auto& p : e.parts)
        if (!p.done) return true;
  return false;
}

// The rank's point-to-point record with `peer` on `comm`, made when missing (kept sorted by comm, peer).
inline P2pState& p2p_record(RankState& rs, int comm, int peer) {
  P2pState key{};
  key.comm = static_cast<uint16_t>(comm);
  key.peer = static_cast<uint16_t>(peer);
  auto less = [](const P2pState& a, const P2pState& b) { return std::tie(a.comm, a.peer) < std::tie(b.comm, b.peer); };
  auto it = std::lower_bound(rs.p2p.begin(), rs.p2p.end(), key, less);
  if (it == rs.p2p.end() || it->comm != key.comm || it->peer != key.peer) it = rs.p2p.insert(it, key);
  return *it;
}

inline bool streams_empty(const RankState& rs) {
  return std::all_of(rs.streams.begin(), rs.streams.end(), [](const auto& st) { return st.empty(); });
}

// The effects of `calls` issued together by `thread` of `rank` (one call, or a group's calls) on
// `next`, which already has the thread at its new control node: slots taken, device work queued,
// the waits the thread now blocks on. Returns the violation the calls hit, if any (`next` is then
// not a state to explore).
std::optional<Violation> apply_calls(const Semantics& semantics, State& next, int rank, int thread,
                                     std::span<const int32_t> calls);

}  // namespace collmc::checker
