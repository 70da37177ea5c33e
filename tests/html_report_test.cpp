// The HTML report: the string itself for a safe and a use_after_deregister scenario, and two deadlocks
// rendered by headless Chromium, whose DOM (--dump-dom) is checked section by section.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collmc/report/check_report.h"
#include "collmc/report/html_report.h"
#include "collmc/report/wait_for_dot.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

// The outer HTML of the element whose id is `id`, found by counting its tag's opens and closes; "" if
// there is none.
std::string element_by_id(const std::string& html, const std::string& id) {
  const size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return {};
  const size_t start = html.rfind('<', at);
  const size_t name_end = html.find_first_of(" \t\n/>", start + 1);
  const std::string tag = html.substr(start + 1, name_end - start - 1);
  int depth = 0;
  size_t pos = start;
  while (pos < html.size()) {
    size_t open = html.find("<" + tag, pos);
    while (open != std::string::npos && open + tag.size() + 1 < html.size() &&
           std::string(" \t\n/>").find(html[open + tag.size() + 1]) == std::string::npos)
      open = html.find("<" + tag, open + 1);
    const size_t close = html.find("</" + tag + ">", pos);
    if (close == std::string::npos) return {};
    if (open != std::string::npos && open < close) {
      ++depth;
      pos = open + 1;
    } else {
      --depth;
      pos = close + tag.size() + 3;
      if (depth == 0) return html.substr(start, pos - start);
    }
  }
  return {};
}

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos; at = haystack.find(needle, at + needle.size())) ++n;
  return n;
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
    else
      out += c;
  }
  return out;
}

// "0, 1", "0..3, 5": how the report lists ranks (runs of three or more as ranges).
std::string member_list(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0, j = 0; i < ranks.size(); i = j + 1) {
    for (j = i; j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1;) ++j;
    out += (out.empty() ? "" : ", ") + std::to_string(ranks[i]);
    if (j >= i + 2)
      out += ".." + std::to_string(ranks[j]);
    else
      j = i;
  }
  return out;
}

// Nothing the page would fetch: no links, scripts, images, fonts or imports.
void expect_self_contained(const std::string& html) {
  for (const char* bad : {"<link", "<script", "<img", "<iframe", "src=", "url(", "@import", "@font-face", "href="})
    EXPECT_EQ(html.find(bad), std::string::npos) << "external resource marker " << bad;
}

TEST(HtmlReport, SafeScenario) {
  const auto r = check_text(R"(ranks 2
name "same order <b>& fine</b>"
expect safe
comm A = [0, 1]
comm B = [0, 1] nonblocking
rank * {
  alloc wa
  alloc wb
  register A wa
  register B wb
}
)");
  ASSERT_EQ(r.verdict, model::Verdict::Safe);
  const std::string html = report::html_report(r, "");
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  expect_self_contained(html);
  EXPECT_EQ(html.find("<b>& fine"), std::string::npos) << "the scenario name is not escaped";

  const std::string verdict = element_by_id(html, "verdict");
  EXPECT_NE(verdict.find("verdict-safe"), std::string::npos);
  EXPECT_NE(verdict.find(">safe<"), std::string::npos);
  EXPECT_NE(verdict.find("same order &lt;b&gt;&amp; fine&lt;/b&gt;"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("(agrees)"), std::string::npos);
  EXPECT_NE(verdict.find("test.cmc"), std::string::npos);

  const std::string comms = element_by_id(html, "comms");
  EXPECT_NE(comms.find("<td class=\"comm-name\">A</td><td class=\"members\">0, 1</td><td class=\"mode\">blocking"),
            std::string::npos)
      << comms;
  EXPECT_NE(comms.find("<td class=\"comm-name\">B</td><td class=\"members\">0, 1</td><td class=\"mode\">nonblocking"),
            std::string::npos);

  // A safe result has no bad schedule: one line says so, with no empty time line, no "0 steps" and no
  // legend for marks that are not there.
  const std::string timeline = element_by_id(html, "timeline");
  EXPECT_NE(timeline.find("No bad schedule: every ordering and interleaving ends with every rank (2) finished."),
            std::string::npos)
      << timeline;
  EXPECT_EQ(timeline.find("0 steps"), std::string::npos) << timeline;
  EXPECT_EQ(count(timeline, "class=\"lane\""), 0u);
  EXPECT_EQ(timeline.find("class=\"legend\""), std::string::npos);
  EXPECT_EQ(count(timeline, "class=\"marker blocked"), 0u);

  const std::string graph = element_by_id(html, "graph");
  EXPECT_NE(graph.find("There is no wait-for graph"), std::string::npos);
  EXPECT_EQ(graph.find("<svg"), std::string::npos);

  const std::string stats = element_by_id(html, "stats");
  EXPECT_NE(stats.find("states"), std::string::npos);
  EXPECT_NE(stats.find("persistent sets"), std::string::npos);
  EXPECT_NE(stats.find("depth-first"), std::string::npos);
}

TEST(HtmlReport, UseAfterDeregister) {
  const auto r = check_text(R"(ranks 2
name "deregister while the collective may still run"
expect use_after_deregister
comm A = [0, 1]
rank * {
  alloc wa
  all_reduce A plain
  sync main
  register A wa
  all_reduce A wa
  deregister A wa
}
)");
  ASSERT_EQ(r.verdict, model::Verdict::UseAfterDeregister) << report::text_report(r);
  ASSERT_TRUE(r.violation);
  const std::string html = report::html_report(r, "");
  expect_self_contained(html);

  const std::string verdict = element_by_id(html, "verdict");
  EXPECT_NE(verdict.find("verdict-use_after_deregister"), std::string::npos);
  EXPECT_NE(verdict.find("(agrees)"), std::string::npos);
  EXPECT_NE(verdict.find("class=\"violation\""), std::string::npos);
  EXPECT_NE(verdict.find("is deregistered while"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("&#39;wa&#39;"), std::string::npos) << "quotes in the message are escaped";
  EXPECT_NE(verdict.find(r.world->calls[static_cast<size_t>(r.violation->call)].loc.str()), std::string::npos);

  // The violating rank's lane ends with the violating call; its device op is stuck at the stream head.
  const std::string timeline = element_by_id(html, "timeline");
  EXPECT_EQ(count(timeline, "class=\"lane\""), 2u);
  const std::string lane = element_by_id(timeline, "lane-" + std::to_string(r.violation->rank));
  EXPECT_NE(lane.find("class=\"marker violation\""), std::string::npos) << lane;
  EXPECT_NE(lane.find("deregister A wa</div>"), std::string::npos);
  EXPECT_NE(lane.find("class=\"marker blocked stream\""), std::string::npos);
  EXPECT_NE(lane.find("class=\"call violating\""), std::string::npos);
  // The warm-up all_reduce completes on both ranks: a connector piece with a dot in each lane.
  EXPECT_EQ(count(timeline, "class=\"conn\""), 2u);
  EXPECT_EQ(count(timeline, "class=\"dot\""), 2u);

  const std::string graph = element_by_id(html, "graph");
  EXPECT_NE(graph.find("There is no wait-for graph"), std::string::npos);
  EXPECT_NE(graph.find("use_after_deregister"), std::string::npos);
  EXPECT_EQ(graph.find("<svg"), std::string::npos);
  EXPECT_FALSE(element_by_id(html, "stats").empty());
}

TEST(HtmlReport, ConnectorSpansNonMembers) {
  // c = [0, 2]: the completion joins lanes 0 and 2 and passes lane 1 without a dot; then 0 and 2
  // register on A and B in opposite orders, and rank 1 finishes.
  const auto r = check_text(R"(ranks 3
comm c = [0, 2]
comm A = [0, 2]
comm B = [0, 2]
comm W = [0..2]
rank 0 {
  alloc w
  all_reduce c plain
  sync main
  register A w
  register B w
}
rank 2 {
  alloc w
  all_reduce c plain
  sync main
  register B w
  register A w
}
rank 1 { alloc x }
)");
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock) << report::text_report(r);
  const std::string html = report::html_report(r, "");
  const std::string timeline = element_by_id(html, "timeline");
  const std::string lane0 = element_by_id(timeline, "lane-0");
  const std::string lane1 = element_by_id(timeline, "lane-1");
  const std::string lane2 = element_by_id(timeline, "lane-2");
  EXPECT_NE(lane0.find("<span class=\"seg down\"></span><span class=\"dot\"></span><span class=\"cap\">c #0</span>"),
            std::string::npos)
      << lane0;
  EXPECT_NE(lane1.find("class=\"conn pass\""), std::string::npos) << lane1;
  EXPECT_NE(lane1.find("<span class=\"seg full\"></span></div>"), std::string::npos) << lane1;
  EXPECT_EQ(lane1.find("class=\"dot"), std::string::npos);
  EXPECT_NE(lane2.find("<span class=\"seg up\"></span><span class=\"dot\"></span></div>"), std::string::npos) << lane2;
  EXPECT_NE(lane1.find("class=\"marker finished\""), std::string::npos);
  // Ranks 0 and 2 are on the cycle: their markers and lanes say so; rank 1 is not.
  EXPECT_EQ(count(timeline, "class=\"marker blocked cycle\""), 2u);
  EXPECT_NE(lane0.find("data-cycle=\"1\""), std::string::npos) << lane0;
  EXPECT_NE(lane2.find("data-cycle=\"1\""), std::string::npos) << lane2;
  EXPECT_EQ(lane1.find("data-cycle"), std::string::npos) << lane1;
  // The verdict says the cycle hop by hop, with the comm of each hop, and where each rank stands.
  const std::string verdict = element_by_id(html, "verdict");
  EXPECT_NE(verdict.find("class=\"cycle-line\""), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("<code>A</code>"), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("<code>B</code>"), std::string::npos) << verdict;
  EXPECT_EQ(count(verdict, "<tr class=\"on-cycle\">"), 2u) << verdict;
  EXPECT_NE(verdict.find("<td>rank 1</td><td><span class=\"state finished\">finished</span>"), std::string::npos)
      << verdict;
  EXPECT_NE(element_by_id(html, "comms").find("<td class=\"comm-name\">W</td><td class=\"members\">0..2</td>"),
            std::string::npos);
  // Without a rendered graph the cycle is still explained.
  const std::string graph = element_by_id(html, "graph");
  EXPECT_EQ(graph.find("<svg"), std::string::npos);
  EXPECT_NE(graph.find("class=\"explanations\""), std::string::npos);
}

class HtmlReportBrowser : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run_command("command -v chromium", nullptr) == 0) return;
    const char* skip = std::getenv("COLLMC_SKIP_BROWSER");
    if (skip && std::string(skip) == "1") GTEST_SKIP() << "chromium is not installed (COLLMC_SKIP_BROWSER=1)";
    FAIL() << "chromium is not installed: the HTML report test renders the report in headless Chromium. Install it "
              "(apt-get install -y chromium, as scripts/setup.sh does) or set COLLMC_SKIP_BROWSER=1 to skip.";
  }

  // Writes the report, loads it in headless Chromium and returns the DOM it built.
  std::string render(const std::string& html) {
    char tmpl[] = "/tmp/collmc-html-XXXXXX";
    const char* dir = mkdtemp(tmpl);
    if (!dir) {
      ADD_FAILURE() << "mkdtemp failed";
      return {};
    }
    const std::filesystem::path root(dir);
    {
      std::ofstream f(root / "report.html");
      f << html;
    }
    const std::string cmd =
        "timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
        "--disable-background-networking --disable-component-update --disable-sync --user-data-dir='" +
        (root / "profile").string() + "' --dump-dom 'file://" + (root / "report.html").string() + "' > '" +
        (root / "dom.html").string() + "' 2> '" + (root / "chromium.log").string() + "'";
    const int rc = run_command(cmd, nullptr);
    std::stringstream dom, log;
    dom << std::ifstream(root / "dom.html").rdbuf();
    log << std::ifstream(root / "chromium.log").rdbuf();
    EXPECT_EQ(rc, 0) << "chromium failed:\n" << log.str();
    std::filesystem::remove_all(root);
    return dom.str();
  }

  void check_deadlock(const std::string& path) {
    model::World world = model::load_world(path);
    const checker::CheckResult r = checker::check(world, {});
    ASSERT_EQ(r.verdict, model::Verdict::Deadlock) << path;
    ASSERT_FALSE(r.wait_for.cycles.empty()) << path;
    const std::string svg = report::render_svg(report::wait_for_dot(world, r.wait_for));
    const std::string dom = render(report::html_report(r, svg));
    ASSERT_NE(dom.find("</html>"), std::string::npos) << "no DOM from chromium for " << path;

    const std::string verdict = element_by_id(dom, "verdict");
    ASSERT_FALSE(verdict.empty()) << dom.substr(0, 2000);
    EXPECT_NE(verdict.find("verdict-deadlock"), std::string::npos);
    EXPECT_NE(verdict.find("<span class=\"verdict-name\">deadlock</span>"), std::string::npos) << verdict;
    EXPECT_NE(verdict.find(html_escaped(world.name)), std::string::npos);
    EXPECT_NE(verdict.find(path), std::string::npos);
    EXPECT_NE(verdict.find("(agrees)"), std::string::npos);

    const std::string comms = element_by_id(dom, "comms");
    EXPECT_EQ(count(comms, "<td class=\"comm-name\">"), world.comms.size());
    for (const auto& c : world.comms) {
      EXPECT_NE(comms.find("<td class=\"comm-name\">" + html_escaped(c.name) + "</td><td class=\"members\">" +
                           member_list(c.members) + "</td>"),
                std::string::npos)
          << c.name << " in " << comms;
    }

    // One lane per rank; each ends with a red blocked marker naming the call it is stuck in, whose
    // tooltip is the reason; that call's box in the lane is marked too.
    const std::string timeline = element_by_id(dom, "timeline");
    EXPECT_EQ(count(timeline, "class=\"lane\""), static_cast<size_t>(world.ranks));
    EXPECT_EQ(count(timeline, "class=\"marker blocked"), r.blocked.size());
    for (const auto& b : r.blocked) {
      ASSERT_GE(b.call, 0);
      const auto& call = world.calls[static_cast<size_t>(b.call)];
      const std::string lane = element_by_id(timeline, "lane-" + std::to_string(b.rank));
      ASSERT_FALSE(lane.empty()) << "no lane for rank " << b.rank;
      bool on_cycle = false;
      for (const auto& n : r.wait_for.nodes) on_cycle = on_cycle || (n.on_cycle && n.rank == b.rank);
      const std::string marker = std::string("<span class=\"mk\">") + (on_cycle ? "on the cycle" : "blocked") +
                                 "</span>" + html_escaped(call.text) + "</div>";
      EXPECT_NE(lane.find(marker), std::string::npos) << lane;
      EXPECT_NE(lane.find(html_escaped(b.reason)), std::string::npos) << "the reason is the marker's tooltip";
      EXPECT_NE(lane.find("class=\"call stuck\""), std::string::npos) << lane;
      // Each host call of the rank in the schedule has a box with its file:line as tooltip.
      for (const auto& s : r.schedule)
        if (s.rank == b.rank && s.kind == checker::StepKind::Issue) {
          const auto& c = world.calls[static_cast<size_t>(s.calls.front())];
          EXPECT_NE(lane.find("title=\"" + c.loc.file_name() + ":" + std::to_string(c.loc.line) + "\">" +
                              html_escaped(c.text) + "</div>"),
                    std::string::npos)
              << c.text;
        }
    }

    // The wait-for graph is an inline SVG drawing every node of the cycle, and the cycle is explained.
    const std::string graph = element_by_id(dom, "graph");
    const size_t svg_at = graph.find("<svg");
    ASSERT_NE(svg_at, std::string::npos) << graph.substr(0, 2000);
    const std::string drawn = graph.substr(svg_at, graph.find("</svg>") - svg_at);
    for (int n : r.wait_for.cycles.front()) {
      const auto& node = r.wait_for.nodes[static_cast<size_t>(n)];
      EXPECT_NE(drawn.find(">" + html_escaped(world.calls[static_cast<size_t>(node.call)].text) + "</text>"),
                std::string::npos)
          << node.label;
      EXPECT_NE(drawn.find(">rank " + std::to_string(node.rank) + "</text>"), std::string::npos) << node.label;
    }
    for (const auto& e : r.wait_for.explanations)
      EXPECT_NE(graph.find("<li>" + html_escaped(e) + "</li>"), std::string::npos) << e;

    const std::string stats = element_by_id(dom, "stats");
    EXPECT_NE(stats.find("<td>states</td><td class=\"mono\">" + std::to_string(r.stats.states) + "</td>"),
              std::string::npos)
        << stats;
  }
};

TEST_F(HtmlReportBrowser, RegCrossOrder) { check_deadlock(gpu_calibration_dir() + "/reg_cross_order.cmc"); }

TEST_F(HtmlReportBrowser, NcclThreeCommRing) { check_deadlock(source_dir() + "/examples/nccl_three_comm_ring.cmc"); }

}  // namespace
}  // namespace collmc::testing
