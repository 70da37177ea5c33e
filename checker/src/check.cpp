#include "collmc/checker/check.h"

#include "collmc/checker/reduction.h"

namespace collmc::checker {

CheckResult check(const model::World& world, const SearchOptions& options) {
  Semantics semantics(world);
  PersistentSetReduction reduced(semantics, semantics);
  SearchResult found = explore(options.reduction ? static_cast<const NextState&>(reduced) : semantics, options);
  CheckResult r;
  r.world = &world;
  r.verdict = found.verdict;
  r.violation = found.violation;
  r.stats = found.stats;
  r.limit = found.limit;
  r.options = options;
  r.executed.resize(static_cast<size_t>(world.ranks));
  for (int rank = 0; rank < world.ranks; ++rank)
    r.executed[static_cast<size_t>(rank)].resize(world.programs[static_cast<size_t>(rank)].threads.size());
  for (const Step& step : found.schedule) {
    ScheduleStep s;
    s.step = step;
    s.kind = step.kind;
    s.rank = step.rank;
    s.thread = step.thread;
    s.calls = semantics.step_calls(step);
    if (step.kind == StepKind::Complete || step.kind == StepKind::CompletePair) {
      s.comm = step.comm;
      s.slot = static_cast<int>(step.slot);
      if (step.kind == StepKind::CompletePair) s.peer = step.peer;
    }
    if (step.kind == StepKind::MatchAny) {
      s.comm = step.comm;
      s.slot = static_cast<int>(step.slot);
      s.peer = step.peer;
    }
    s.text = semantics.describe_step(step);
    for (int c : s.calls) r.executed[step.rank][step.thread].push_back(c);
    r.schedule.push_back(std::move(s));
  }
  if (found.verdict != model::Verdict::Safe && found.verdict != model::Verdict::Inconclusive)
    r.blocked = semantics.blocked(found.end_state);
  if (found.verdict == model::Verdict::Deadlock) r.wait_for = build_wait_for_graph(semantics, found.end_state);
  if (found.violation && found.violation->thread >= 0)
    for (auto& b : r.blocked)
      if (b.rank == found.violation->rank && b.thread == found.violation->thread) {
        b.call = found.violation->call;
        b.reason = std::string(model::verdict_name(found.violation->verdict)) + " when it issues this call";
      }
  return r;
}

}  // namespace collmc::checker
