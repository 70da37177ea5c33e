// SVG through Graphviz's library (report::render_svg): a clear error for DOT that Graphviz cannot read.
#include <gtest/gtest.h>

#include <stdexcept>

#include "collmc/report/wait_for_dot.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

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
