#include "collmc/checker/reduction.h"

#include <algorithm>

namespace collmc::checker {

void PersistentSetReduction::enabled(const State& s, std::vector<Step>& out, int first_rank) const {
  // Two threads of a rank on one NCCL comm: other ranks' steps change whether a call is a usage error
  // (IndependenceInfo::threads_share_a_comm), so every enabled step is explored.
  // Likewise for ranks that one process's host thread drives (IndependenceInfo::ranks_share_a_process).
  if (info_.threads_share_a_comm() || info_.ranks_share_a_process()) {
    inner_.enabled(s, out, first_rank);
    return;
  }
  const int ranks = info_.ranks();
  if (first_rank < 0 || first_rank >= ranks) first_rank = 0;
  std::vector<Step> host;
  std::vector<Step> completions;
  std::vector<Step> all;  // every step looked at, for when no persistent subset exists
  std::vector<char> live_enabled;
  std::vector<Step> best;
  int since_best = 0;  // ranks looked at after the first qualifying rank
  for (int i = 0; i < ranks; ++i) {
    // A qualifying rank with several steps is a persistent set already; a singleton is only looked
    // for among the next kSingletonLookahead ranks, so that a world where every rank sits at a choice
    // costs O(1) ranks per state, not O(W) (docs/REDUCTION.md).
    if (!best.empty() && ++since_best > kSingletonLookahead) break;
    const int r = (first_rank + i) % ranks;
    host.clear();
    completions.clear();
    info_.enabled_of_rank(s, r, host, completions);
    // One completion no member can interfere with.
    for (const Step& c : completions) {
      auto members = info_.completion_ranks(c);
      if (std::none_of(members.begin(), members.end(), [&](int m) { return info_.may_read_device(s, m); })) {
        out.push_back(c);
        return;
      }
    }
    if (best.empty()) {  // `all` is used only when no rank qualifies
      all.insert(all.end(), host.begin(), host.end());
      all.insert(all.end(), completions.begin(), completions.end());
    }
    if (host.empty()) continue;
    // A receive from any rank (MatchAny) may also take a send that another rank has yet to issue: its
    // rank's steps are no persistent set; the other ranks' steps commute with it (a later match still can).
    if (std::any_of(host.begin(), host.end(), [](const Step& h) { return h.kind == StepKind::MatchAny; })) continue;
    // An any_order whose remaining children commute and cannot block its thread: one child, in the
    // order the semantics lists them (docs/REDUCTION.md, "Orders left open").
    if (host.size() > 1 && host.front().kind == StepKind::Choose && info_.commuting_choice(s, r, host.front().thread))
      host.resize(1);
    // All steps of the rank: persistent when no live thread is blocked (its later steps would lie
    // outside the set) and none reads device work the rank still has pending.
    live_enabled.assign(static_cast<size_t>(info_.threads(r)), 0);
    bool reads_device = false;
    for (const Step& h : host) {
      live_enabled[h.thread] = 1;
      reads_device = reads_device || info_.step_reads_device(h);
    }
    bool all_live_enabled = true;
    for (int t = 0; t < info_.threads(r); ++t)
      if (!live_enabled[static_cast<size_t>(t)] && info_.thread_live(s, r, t)) all_live_enabled = false;
    if (!all_live_enabled || (reads_device && info_.has_pending_device_work(s, r))) continue;
    if (host.size() == 1) {
      out.push_back(host.front());
      return;
    }
    if (best.empty() || host.size() < best.size()) best = host;
  }
  const std::vector<Step>& chosen = best.empty() ? all : best;
  out.insert(out.end(), chosen.begin(), chosen.end());
}

}  // namespace collmc::checker
