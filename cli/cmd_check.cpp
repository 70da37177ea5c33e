// collmc check: search each scenario and report the verdict, schedule and wait-for graph.
#include <iostream>

#include "cli_common.h"
#include "collmc/checker/check.h"
#include "collmc/model/world.h"
#include "collmc/report/check_report.h"
#include "collmc/report/html_report.h"
#include "collmc/report/wait_for_dot.h"
#include "commands.h"

namespace collmc::cli {

using model::Verdict;

namespace {

// The model finds no hang, but the scenario was imported from a run that hung (`observed hung`): the hang
// lies outside what the source recorded (docs/TRACES.md, "When the model finds no hang in a hung run").
constexpr int kExitUnexplainedHang = 4;

void write_graph_outputs(const po::variables_map& vm, const checker::CheckResult& result) {
  const bool graph_files = vm.count("dot") || vm.count("svg");
  if (!graph_files && !vm.count("html")) return;
  // The DOT and its SVG are made once, for whichever of --dot, --svg and --html asked.
  std::string dot, svg;
  if (!result.wait_for.empty()) {
    report::DotOptions dot_options;
    dot_options.full_graph = vm.count("full-graph") > 0;
    dot = report::wait_for_dot(*result.world, result.wait_for, dot_options);
    if (vm.count("svg") || vm.count("html")) svg = report::render_svg(dot);
  } else if (graph_files) {
    std::cerr << "note: no wait-for graph (the verdict is " << model::verdict_name(result.verdict)
              << "); --dot/--svg not written\n";
  }
  if (vm.count("html")) write_file(vm["html"].as<std::string>(), report::html_report(result, svg));
  if (dot.empty()) return;
  if (vm.count("dot")) write_file(vm["dot"].as<std::string>(), dot);
  if (vm.count("svg")) write_file(vm["svg"].as<std::string>(), svg);
}

}  // namespace

int cmd_check(const std::vector<std::string>& args) {
  po::options_description d = search_options();
  d.add_options()("json", po::value<std::string>(), "write the JSON result to OUT")(
      "dot", po::value<std::string>(), "write the wait-for graph (deadlocks) as Graphviz DOT to OUT")(
      "svg", po::value<std::string>(), "render the wait-for graph (deadlocks) to SVG with Graphviz")(
      "full-graph", "draw every rank (default: the ranks on or next to a cycle, same roles folded)")(
      "html", po::value<std::string>(), "write a self-contained HTML report for design review")(
      "quiet", "print only the verdict line")("expect", "compare each file's verdict with its expect line")(
      "file", po::value<std::vector<std::string>>(), "scenario");
  const auto [vm, files] = parse_with_positional(args, d, "file", "check needs a scenario file");
  const bool quiet = vm.count("quiet") > 0;
  const bool expect = vm.count("expect") > 0;
  for (const char* single : {"json", "dot", "svg", "html"})
    if (vm.count(single) && files.size() != 1) throw po::error(std::string("--") + single + " takes one scenario file");
  const auto options = to_search(vm);
  int worst = kExitSafe;
  bool all_agree = true;
  for (const auto& file : files) {
    try {
      model::World world = model::load_world(file);
      for (const auto& p : world.usage_problems)
        if (!quiet) std::cerr << p.loc.str() << ": warning: " << p.message << "\n";
      auto result = checker::check(world, options);
      const bool unexplained_hang =
          result.verdict == Verdict::Safe && world.observed && world.observed->outcome == model::ObservedOutcome::Hung;
      if (quiet) {
        std::cout << file << ": " << model::verdict_name(result.verdict)
                  << (unexplained_hang ? " (model only; the recorded run hung)" : "") << "\n";
      } else {
        std::cout << report::text_report(result, false);
      }
      if (vm.count("json")) write_file(vm["json"].as<std::string>(), report::json_report(result));
      write_graph_outputs(vm, result);
      if (expect) {
        bool agree = result.agrees_with_expect();
        if (!world.expect) std::cout << file << ": no 'expect' line\n";
        all_agree = all_agree && agree;
      }
      int code = unexplained_hang ? kExitUnexplainedHang : exit_code(result.verdict);
      if (code == kExitViolation || (code == kExitUnexplainedHang && worst != kExitViolation) ||
          (code == kExitInconclusive && worst == kExitSafe))
        worst = code;
    } catch (const model::InputError& e) {
      std::cerr << e.what() << "\n";
      worst = kExitBadInput;
      all_agree = false;
    }
  }
  if (expect) return all_agree ? kExitSafe : (worst == kExitBadInput ? kExitBadInput : kExitViolation);
  return worst;
}

}  // namespace collmc::cli
