// The whole report path (check -> wait-for graph -> DOT -> SVG through libgvc -> HTML) for every
// generator family at the sizes users have, up to W = 1024 (the graph folded). Graphviz 2.43 once
// corrupted the heap here at W = 32..256 (report/src/wait_for_dot.cpp says why): these cases run in
// the sanitizer build of scripts/test.sh too, so that class of bug cannot come back unseen.
#include <gtest/gtest.h>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <functional>
#include <sstream>
#include <string>

#include "collmc/gen/generators.h"
#include "collmc/report/html_report.h"
#include "collmc/report/wait_for_dot.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

struct RenderCase {
  std::string name;
  std::function<std::string()> scenario;
  bool full_graph = false;  // also draw every rank (small sizes only: a 1024-rank hairball says nothing)
};

void PrintTo(const RenderCase& c, std::ostream* out) { *out << c.name; }

std::string megatron(int world) {
  gen::MegatronConfig c;
  c.world = world;
  c.tp = 2;
  c.cp = 2;
  c.ep = 4;
  c.dist_opt_instances = 2;
  c.order = gen::RegistrationOrder::PerRank;
  c.late_segments = gen::LateSegments::All;
  return gen::megatron_scenario(c);
}

std::string pytorch_pool(int world) {
  gen::PytorchPoolConfig c;
  c.world = world;
  c.groups = {"dp:all", "tp:consecutive:2"};
  c.order = gen::RegistrationOrder::PerRank;
  return gen::pytorch_pool_scenario(c);
}

std::vector<RenderCase> render_cases() {
  std::vector<RenderCase> cases;
  // A ring's cycle runs through every rank, so its graph cannot fold: 1024 ranks take 10 s of layout.
  for (int n : {3, 64, 256})
    cases.push_back({"ring_" + std::to_string(n), [n] { return gen::ring_scenario(n, false); }, n <= 64});
  // W = 32, 40, 56, 64 and 256 are the sizes that crashed; 1024 is the largest the issue asks for.
  for (int w : {16, 32, 40, 56, 64, 256, 1024})
    cases.push_back({"megatron_" + std::to_string(w), [w] { return megatron(w); }, w <= 64});
  for (int w : {4, 64, 1024})
    cases.push_back(
        {"hook_fanout_" + std::to_string(w), [w] { return gen::hook_fanout_scenario(w, 2, false); }, w <= 64});
  for (int w : {4, 64, 1024})
    cases.push_back({"pytorch_pool_" + std::to_string(w), [w] { return pytorch_pool(w); }, w <= 64});
  return cases;
}

// Parses `xml` (throws boost::property_tree::xml_parser_error when it is not well-formed).
void parse_xml(const std::string& xml) {
  std::istringstream in(xml);
  boost::property_tree::ptree tree;
  boost::property_tree::read_xml(in, tree);
}

std::string html_escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else if (c == '\'')
      out += "&#39;";
    else
      out += c;
  }
  return out;
}

class ReportRender : public ::testing::TestWithParam<RenderCase> {};

TEST_P(ReportRender, DotSvgAndHtmlAreWellFormed) {
  const model::World w = world_from(GetParam().scenario());
  const auto r = checker::check(w, {});
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock) << GetParam().name;
  ASSERT_FALSE(r.wait_for.cycles.empty());
  for (const bool full : {false, true}) {
    if (full && !GetParam().full_graph) continue;
    SCOPED_TRACE(full ? "full graph" : "folded graph");
    report::DotOptions options;
    options.full_graph = full;
    const std::string dot = report::wait_for_dot(w, r.wait_for, options);
    ASSERT_EQ(dot.rfind("digraph waitfor {", 0), 0u);
    // Edge texts are xlabels: a labelled flat edge is what corrupted Graphviz 2.43's heap.
    EXPECT_EQ(dot.find(" [label="), std::string::npos);
    EXPECT_EQ(dot.find(", label=\"waits"), std::string::npos);
    const std::string svg = report::render_svg(dot);
    ASSERT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NO_THROW(parse_xml(svg)) << svg.substr(0, 500);
    // Every node of the first cycle is drawn with its call, and its rank's cluster title; no node
    // carries an internal id as its SVG title (the browser's tooltip).
    for (int n : r.wait_for.cycles.front()) {
      const auto& node = r.wait_for.nodes[static_cast<size_t>(n)];
      EXPECT_NE(svg.find(">" + html_escaped(w.calls[static_cast<size_t>(node.call)].text) + "</text>"),
                std::string::npos)
          << node.label;
      EXPECT_NE(svg.find(">rank " + std::to_string(node.rank) + "</text>"), std::string::npos) << node.label;
    }
    EXPECT_EQ(svg.find("<title>n0</title>"), std::string::npos);
    if (!full) {
      // Folded: the ranks off the cycle in one role are one node, so the drawing grows with the cycle,
      // not with the world (46 nodes for Megatron at W = 256 and at W = 1024).
      size_t nodes = 0;
      for (size_t at = dot.find("\n    \"rank "); at != std::string::npos; at = dot.find("\n    \"rank ", at + 1))
        ++nodes;
      size_t cycle_nodes = 0;
      for (const auto& n : r.wait_for.nodes) cycle_nodes += n.on_cycle ? 1 : 0;
      EXPECT_LE(nodes, cycle_nodes + 48) << "not folded: " << nodes << " nodes for a cycle of " << cycle_nodes;
    }
    const std::string html = report::html_report(r, svg, {"collmc check test.cmc --html r.html", "0.1.0 (git test)"});
    ASSERT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_NE(html.find("</body>\n</html>\n"), std::string::npos);
    size_t opened = 0, closed = 0;
    for (size_t at = html.find("<section"); at != std::string::npos; at = html.find("<section", at + 1)) ++opened;
    for (size_t at = html.find("</section>"); at != std::string::npos; at = html.find("</section>", at + 1)) ++closed;
    EXPECT_EQ(opened, closed);
    // The embedded picture is the SVG, whole; the cycle is written out hop by hop, every rank on it
    // marked; the footer says how to reproduce the page.
    EXPECT_NE(html.find(svg), std::string::npos);
    EXPECT_NE(html.find("<p class=\"cycle-line\">"), std::string::npos);
    for (int n : r.wait_for.cycles.front()) {
      const int rank = r.wait_for.nodes[static_cast<size_t>(n)].rank;
      EXPECT_NE(html.find("<span class=\"r\">" + std::to_string(rank)), std::string::npos) << rank;
      EXPECT_NE(html.find("id=\"lane-" + std::to_string(rank) + "\" data-rank=\"" + std::to_string(rank) +
                          "\" data-cycle=\"1\""),
                std::string::npos)
          << rank;
    }
    EXPECT_NE(html.find("Reproduce with: <code class=\"command\">collmc check test.cmc --html r.html</code>"),
              std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, ReportRender, ::testing::ValuesIn(render_cases()),
                         [](const ::testing::TestParamInfo<RenderCase>& param) { return param.param.name; });

}  // namespace
}  // namespace collmc::testing
