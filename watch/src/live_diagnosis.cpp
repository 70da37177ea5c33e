// live_diagnosis.h: the calls so far, imported, emitted, checked, and the stuck ranks kept that are certain.
#include "collmc/watch/live_diagnosis.h"

#include <chrono>

#include "collmc/checker/certain_hang.h"
#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/world.h"
#include "collmc/report/check_report.h"
#include "collmc/report/html_report.h"
#include "collmc/report/wait_for_dot.h"

namespace collmc::watch {

using traces::CallKind;
using traces::CallState;

std::vector<bool> ranks_that_may_still_call(const traces::Trace& trace) {
  std::vector<bool> may(static_cast<size_t>(std::max(trace.world_size, 0)), true);
  for (const auto& [rank, rt] : trace.ranks) {
    if (rank < 0 || rank >= trace.world_size || !rt.present || rt.threads.empty()) continue;
    bool all_in_flight = true;
    for (const auto& t : rt.threads) {
      // In flight: its last call was entered and has not returned, and the scenario holds it as a statement
      // (a call the language has no statement for, such as MPI_Finalize, leaves the model's thread ended).
      const bool in_flight = !t.calls.empty() && t.calls.back().state == CallState::Started &&
                             t.calls.back().kind != CallKind::Other && t.calls.back().kind != CallKind::GroupStart;
      all_in_flight = all_in_flight && in_flight;
    }
    may[static_cast<size_t>(rank)] = !all_in_flight;
  }
  return may;
}

namespace {

std::string rank_set(const std::vector<int>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + model::rank_ranges_text(ranks, ",");
}

// The newest t_wall_ns of the calls in flight of `ranks`.
uint64_t newest_entry(const traces::Trace& trace, const std::vector<int>& ranks) {
  uint64_t newest = 0;
  for (int r : ranks) {
    auto it = trace.ranks.find(r);
    if (it == trace.ranks.end()) continue;
    for (const auto& t : it->second.threads)
      if (!t.calls.empty()) newest = std::max(newest, t.calls.back().time_ns);
  }
  return newest;
}

bool is_slot_call(model::OpKind k) {
  return k != model::OpKind::Send && k != model::OpKind::Recv && k != model::OpKind::Probe;
}

}  // namespace

LiveDiagnosis diagnose_calls_so_far(const traces::Trace& trace, const LiveOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  LiveDiagnosis out;
  auto done = [&]() -> LiveDiagnosis& {
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
  };
  const std::vector<bool> may = ranks_that_may_still_call(trace);
  if (std::all_of(may.begin(), may.end(), [](bool m) { return m; })) {
    out.why_not = "every rank may still call";
    return done();
  }
  traces::EmitOptions emit;
  emit.name = options.name;
  out.scenario = traces::emit_scenario(trace, emit);
  model::World world = model::resolve(model::parse_string(out.scenario, options.scenario_path));
  checker::SearchOptions search;
  search.time_limit_s = options.check_time_limit_s;
  search.max_states = options.max_states;
  search.progress = checker::SearchOptions::Progress::Never;
  const checker::CheckResult result = checker::check(world, search);
  if (result.verdict == model::Verdict::Mismatch && result.violation && result.violation->call >= 0 &&
      is_slot_call(world.calls[static_cast<size_t>(result.violation->call)].kind)) {
    // Two members' calls in one slot of a communicator disagree: the slot is the rank's n-th call on the
    // comm in program order, the same in every schedule, and both calls were made.
    out.kind = LiveDiagnosis::Kind::Mismatch;
    out.ranks = {result.violation->rank};
    out.headline = "mismatch: " + result.violation->message;
  } else if (result.verdict == model::Verdict::Deadlock) {
    checker::Semantics semantics(world, result.mpi_progress);  // the schedule is one of that model's
    checker::State state = semantics.initial();
    for (const auto& step : result.schedule) semantics.apply(state, step.step);
    const checker::CertainHang hang = checker::certain_hang(semantics, state, may);
    if (!hang.found) {
      out.why_not = "the model's stuck state holds no wait the other ranks cannot release";
      return done();
    }
    out.kind = LiveDiagnosis::Kind::Deadlock;
    out.ranks = hang.ranks;
    out.reasons = hang.reasons;
    out.headline = "deadlock: " + rank_set(hang.ranks) +
                   " are in calls that wait for each other; none can return, whatever the other ranks do";
  } else {
    out.why_not = "the calls so far check " + std::string(model::verdict_name(result.verdict)) +
                  (result.limit.empty() ? "" : " (" + result.limit + ")");
    return done();
  }
  out.last_entry_wall_ns = newest_entry(trace, out.ranks);
  out.report = report::text_report(result, false);
  if (options.html) {
    std::string svg;
    if (!result.wait_for.empty()) {
      try {
        svg = report::render_svg(report::wait_for_dot(world, result.wait_for, {}));
      } catch (const std::runtime_error&) {
        svg.clear();  // the page without its picture
      }
    }
    out.html = report::html_report(result, svg, {"collmc watch", ""});
  }
  return done();
}

}  // namespace collmc::watch
