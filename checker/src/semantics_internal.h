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

// mpi_progress = weak: the rank left host slot `slot` of `comm` early and has not entered MPI since.
inline bool left_early(const RankState& rs, int comm, uint32_t slot) {
  const std::pair<int32_t, uint32_t> entry(comm, slot);
  return std::binary_search(rs.left_early.begin(), rs.left_early.end(), entry);
}

// A rank's pair counters with `peer` on `comm` for `tag`, or null when it has none yet.
inline const P2pState* find_p2p(const RankState& rs, int comm, int peer, uint32_t tag = 0) {
  for (const auto& p : rs.p2p)
    if (p.comm == comm && p.peer == peer && p.tag == tag) return &p;
  return nullptr;
}

// The rank's point-to-point record with `peer` on `comm` for messages of `tag` (mpi; nccl uses tag 0),
// made when missing (kept sorted by comm, peer, tag).
inline P2pState& p2p_record(RankState& rs, int comm, int peer, uint32_t tag = 0) {
  P2pState key{};
  key.comm = comm;
  key.peer = peer;
  key.tag = tag;
  auto less = [](const P2pState& a, const P2pState& b) {
    return std::tie(a.comm, a.peer, a.tag) < std::tie(b.comm, b.peer, b.tag);
  };
  auto it = std::lower_bound(rs.p2p.begin(), rs.p2p.end(), key, less);
  if (it == rs.p2p.end() || it->comm != key.comm || it->peer != key.peer || it->tag != key.tag)
    it = rs.p2p.insert(it, key);
  return *it;
}

// A call's tag as a wait holds it (`tag=any`: kWaitAnyTag).
inline uint32_t wait_tag(const model::Call& c) {
  return c.tag == model::kAnyTag ? kWaitAnyTag : static_cast<uint32_t>(c.tag);
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
