#include "collmc/checker/check.h"

#include <algorithm>
#include <chrono>

#include "collmc/checker/reduction.h"

namespace collmc::checker {

namespace {

CheckResult check_under(const model::World& world, const SearchOptions& options, model::MpiProgress progress) {
  Semantics semantics(world, progress);
  PersistentSetReduction reduced(semantics, semantics);
  SearchResult found = explore(options.reduction ? static_cast<const NextState&>(reduced) : semantics, options);
  CheckResult r;
  r.world = &world;
  r.verdict = found.verdict;
  r.violation = found.violation;
  r.stats = found.stats;
  r.limit = found.limit;
  r.options = options;
  r.mpi_progress = semantics.mpi_progress();
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

bool is_violation(model::Verdict v) { return v != model::Verdict::Safe && v != model::Verdict::Inconclusive; }

}  // namespace

CheckResult check(const model::World& world, const SearchOptions& options) {
  const std::vector<model::MpiProgress> models = progress_models(world);
  const auto start = std::chrono::steady_clock::now();
  std::vector<ProgressRun> runs;
  SearchStats total;
  std::optional<CheckResult> chosen;      // the first violation, else the first inconclusive search
  std::optional<CheckResult> first_safe;  // else the first search (safe): sync, what a replay's plan of a
                                          // complete run follows (an MPI that synchronizes runs it as planned)
  for (const model::MpiProgress progress : models) {
    SearchOptions o = options;
    if (options.time_limit_s > 0 && !runs.empty()) {
      const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      o.time_limit_s = std::max(options.time_limit_s - spent, 1e-3);
    }
    CheckResult r = check_under(world, o, progress);
    runs.push_back(ProgressRun{.progress = progress, .verdict = r.verdict});
    total.states += r.stats.states;
    total.transitions += r.stats.transitions;
    total.expanded += r.stats.expanded;
    total.seconds += r.stats.seconds;
    total.max_depth = std::max(total.max_depth, r.stats.max_depth);
    if (r.stats.memory_bytes >= total.memory_bytes) {
      total.memory_bytes = r.stats.memory_bytes;
      total.stored = r.stats.stored;
    }
    total.peak_rss_bytes = std::max(total.peak_rss_bytes, r.stats.peak_rss_bytes);
    const bool violation = is_violation(r.verdict);
    if (violation || (r.verdict == model::Verdict::Inconclusive && !chosen))
      chosen = std::move(r);
    else if (!first_safe)
      first_safe = std::move(r);
    if (violation) break;
  }
  CheckResult out = chosen ? std::move(*chosen) : std::move(*first_safe);
  out.options = options;
  out.stats = total;
  out.progress_matters = has_progress_dependent_calls(world);
  out.progress_runs = std::move(runs);
  return out;
}

}  // namespace collmc::checker
