// A self-contained HTML report of a CheckResult: verdict, communicators, the schedule as a time line
// with one lane per rank, the wait-for graph and the statistics. One file, no external resources.
#pragma once

#include <string>

#include "collmc/checker/check.h"

namespace collmc::report {

// What reproduces a report, for its footer: the command line and the collmc version (git hash) that
// made it; the date and the search limits come from the report itself. Empty fields are left out.
struct HtmlProvenance {
  std::string command_line;
  std::string version;
};

// `graph_svg`: the wait-for graph already rendered (render_svg(wait_for_dot(...))), embedded inline;
// empty when there is none. Sections carry stable ids: verdict, comms, timeline, graph, stats.
std::string html_report(const checker::CheckResult& result, const std::string& graph_svg,
                        const HtmlProvenance& provenance = {});

}  // namespace collmc::report
