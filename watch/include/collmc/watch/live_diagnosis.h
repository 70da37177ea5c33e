// The live watch's question (docs/TRACES.md, "Watching a job"): do the calls in flight already hold a
// hang that no continuation of the job can break? Asked of the importer and the checker: the calls so far
// become the scenario they would be if the job stopped now (the calls in flight last), the checker finds a
// stuck state of it, and certain_hang (checker/certain_hang.h) keeps the ranks that wait for each other
// through waits no implementation can skip and that cannot call anything else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collmc/traces/trace.h"

namespace collmc::watch {

struct LiveOptions {
  double check_time_limit_s = 10;  // each check of the calls so far (a limit reached: nothing named)
  uint64_t max_states = 5'000'000;
  bool html = false;  // also render the review page (Graphviz)
  std::string name = "calls so far of a running job";
  // The file the scenario is written to, which the report's file:line name (the watcher's hang.cmc).
  std::string scenario_path = "<calls so far>";
};

struct LiveDiagnosis {
  enum class Kind { None, Deadlock, Mismatch };
  Kind kind = Kind::None;
  std::vector<int> ranks;  // the ranks whose calls can never return (deadlock) or disagree (mismatch)
  std::string headline;    // one line: what is certain and why
  std::vector<std::string> reasons;
  std::string report;    // the check's report of the scenario (the cycle-first diagnosis `check` prints)
  std::string scenario;  // the scenario of the calls so far
  std::string html;      // the review page (LiveOptions::html)
  // The newest entry time (t_wall_ns) of the named ranks' calls in flight; 0 when the trace has none.
  uint64_t last_entry_wall_ns = 0;
  std::string why_not;  // Kind::None: why nothing was named (the verdict, a limit, who may still call)
  double seconds = 0;   // import, emit, check and analysis together
};

// Whether each rank of `trace` may still call anything (a thread whose last call returned, or whose last
// call has no statement, or no trace at all): [world rank].
std::vector<bool> ranks_that_may_still_call(const traces::Trace& trace);

LiveDiagnosis diagnose_calls_so_far(const traces::Trace& trace, const LiveOptions& options = {});

}  // namespace collmc::watch
