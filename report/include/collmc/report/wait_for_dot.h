// The wait-for graph (checker/wait_for_graph.h) as DOT, and DOT rendered to SVG by Graphviz, for
// design review.
#pragma once

#include <string>

#include "collmc/checker/wait_for_graph.h"
#include "collmc/model/world.h"

namespace collmc::report {

struct DotOptions {
  bool full_graph = false;  // false: only ranks on or next to a cycle; ranks in the same role folded
};

std::string wait_for_dot(const model::World& world, const checker::WaitForGraph& graph, const DotOptions& options = {});

// Renders DOT to SVG with Graphviz; throws std::runtime_error if rendering fails.
std::string render_svg(const std::string& dot);

}  // namespace collmc::report
