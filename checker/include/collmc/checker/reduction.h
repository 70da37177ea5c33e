// Partial-order reduction as a layer over the next-state interface (as LTSmin's pins2pins-por):
// in each state it returns a persistent subset of the enabled steps, so that only one order of
// independent steps is explored. It preserves every reachable deadlock and every reachable
// violation verdict (the steps of SEMANTICS.md are acyclic, so no cycle proviso is needed).
//
// Why these sets are persistent (docs/REDUCTION.md has the argument):
// - steps of different ranks commute and never disable each other: they touch their own rank's state
//   and the arrival records of slots, which only grow and are kept independent of arrival order;
// - a device completion commutes with every host step except those that read the pending work of a
//   member rank (free, cuda_free, deregister, abort).
// So {one completion} is persistent when no member rank can still reach such a step, and {all steps
// of rank r} is persistent when every live thread of r is enabled (no future step of r lies outside
// the set) and, if one of them reads device work, r has none pending.
//
// The layer asks the semantics for the enabled steps one rank at a time, starting at the rank that
// acted last, and stops at the first persistent set of one step: in a program whose orders are fixed
// that is almost always the next rank it looks at, so a state costs O(1) ranks, not O(W).
#pragma once

#include "collmc/checker/independence.h"
#include "collmc/checker/next_state.h"

namespace collmc::checker {

class PersistentSetReduction final : public NextState {
 public:
  PersistentSetReduction(const NextState& inner, const IndependenceInfo& info) : inner_(inner), info_(info) {}

  State initial() const override { return inner_.initial(); }
  void enabled(const State& s, std::vector<Step>& out, int first_rank = 0) const override;
  std::optional<Violation> apply(State& s, const Step& step) const override { return inner_.apply(s, step); }
  bool is_final(const State& s) const override { return inner_.is_final(s); }

  // Past the first rank whose steps form a persistent set, how many more ranks are looked at for
  // one whose set is a single step (worlds of up to this many + 1 ranks look at every rank).
  static constexpr int kSingletonLookahead = 64;

 private:
  const NextState& inner_;
  const IndependenceInfo& info_;
};

}  // namespace collmc::checker
