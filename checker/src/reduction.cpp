#include "collmc/checker/reduction.h"

#include <algorithm>

namespace collmc::checker {

namespace {
bool is_completion(const Step& s) { return s.kind == StepKind::Complete || s.kind == StepKind::CompletePair; }
}  // namespace

void PersistentSetReduction::successors(const State& s, std::vector<Transition>& out) const {
  std::vector<Transition> all;
  inner_.successors(s, all);
  if (all.size() <= 1 ||
      std::any_of(all.begin(), all.end(), [](const Transition& t) { return t.violation.has_value(); })) {
    for (auto& t : all) out.push_back(std::move(t));
    return;
  }
  // One completion no member can interfere with.
  for (auto& t : all) {
    if (!is_completion(t.step)) continue;
    auto members = info_.completion_ranks(t.step);
    if (std::none_of(members.begin(), members.end(), [&](int m) { return info_.may_read_device(s, m); })) {
      out.push_back(std::move(t));
      return;
    }
  }
  // The rank with the fewest enabled steps among those whose steps form a persistent set.
  const int ranks = info_.ranks();
  std::vector<int> count(static_cast<size_t>(ranks), 0);
  std::vector<char> reads_device(static_cast<size_t>(ranks), 0);
  std::vector<std::vector<char>> enabled(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) enabled[static_cast<size_t>(r)].assign(static_cast<size_t>(info_.threads(r)), 0);
  // A receive from any rank (MatchAny) may also take a send that another rank has yet to issue: its
  // rank's steps are no persistent set; the other ranks' steps commute with it (a later match still can).
  std::vector<char> matches_any(static_cast<size_t>(ranks), 0);
  for (const auto& t : all) {
    if (is_completion(t.step)) continue;
    if (t.step.kind == StepKind::MatchAny) matches_any[t.step.rank] = 1;
    ++count[t.step.rank];
    enabled[t.step.rank][t.step.thread] = 1;
    if (info_.step_reads_device(t.step)) reads_device[t.step.rank] = 1;
  }
  int best = -1;
  for (int r = 0; r < ranks; ++r) {
    const auto ru = static_cast<size_t>(r);
    if (count[ru] == 0 || matches_any[ru]) continue;
    bool all_live_enabled = true;
    for (int t = 0; t < info_.threads(r); ++t)
      if (info_.thread_live(s, r, t) && !enabled[ru][static_cast<size_t>(t)]) all_live_enabled = false;
    if (!all_live_enabled) continue;
    if (reads_device[ru] && info_.has_pending_device_work(s, r)) continue;
    if (best < 0 || count[ru] < count[static_cast<size_t>(best)]) best = r;
    if (count[ru] == 1) break;
  }
  if (best < 0) {
    for (auto& t : all) out.push_back(std::move(t));
    return;
  }
  for (auto& t : all)
    if (!is_completion(t.step) && t.step.rank == best) out.push_back(std::move(t));
}

}  // namespace collmc::checker
