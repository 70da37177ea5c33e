// SVG through Graphviz's library (report::render_svg): the same bytes as the `dot` program's
// `dot -Tsvg`, on every call of a long-lived process, and a clear error for DOT Graphviz cannot read.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "collmc/report/wait_for_dot.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

TEST(ReportSvg, SameAsTheDotProgram) {
  if (std::system("command -v dot >/dev/null 2>&1") != 0) GTEST_SKIP() << "no `dot` program to compare with";
  for (const char* example : {"reg_cross_order.cmc", "nccl_three_comm_ring.cmc", "megatron_hsdp_per_rank.cmc"}) {
    const model::World w = model::load_world(source_dir() + "/examples/" + example);
    const auto r = checker::check(w, {});
    ASSERT_FALSE(r.wait_for.empty()) << example;
    const std::string dot = report::wait_for_dot(w, r.wait_for);
    const std::string path = fresh_scratch_dir("report-svg") + "/graph.dot";
    std::ofstream(path) << dot;
    std::string by_program;
    ASSERT_EQ(run_command("(dot -Tsvg " + path + " 2>/dev/null)", &by_program), 0) << by_program;
    ASSERT_NE(by_program.find("<svg"), std::string::npos);
    // Twice: a long-lived process renders the same as a fresh `dot`, whatever it allocated and freed.
    EXPECT_EQ(report::render_svg(dot), by_program.substr(by_program.find("<svg"))) << example;
    EXPECT_EQ(report::render_svg(dot), by_program.substr(by_program.find("<svg"))) << example << ", again";
  }
}

TEST(ReportSvg, UnreadableDotIsAClearError) {
  try {
    report::render_svg("digraph g { a -> ; }");
    FAIL() << "rendered DOT with a syntax error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("Graphviz cannot read the DOT"), std::string::npos) << what;
    EXPECT_NE(what.find("syntax error"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace collmc::testing
