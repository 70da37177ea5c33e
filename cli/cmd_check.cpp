// collmc check: search each scenario and report the verdict, schedule and wait-for graph.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "cli_common.h"
#include "collmc/checker/check.h"
#include "collmc/model/world.h"
#include "collmc/report/check_report.h"
#include "collmc/report/html_report.h"
#include "collmc/report/wait_for_dot.h"
#include "collmc/shrink/shrink.h"
#include "commands.h"
#include "version.h"

namespace collmc::cli {

using model::Verdict;

namespace {

// The outputs of one scenario; --json also takes several (one array of results).
constexpr const char* kOutputOptions[] = {"json", "dot", "svg", "html"};
constexpr const char* kSingleFileOutputs[] = {"dot", "svg", "html"};

// --shortest keeps every state of the breadth-first frontier and visited set: without --max-memory it
// stops here (MiB of search memory), well inside a laptop's memory, instead of growing until the
// machine runs out.
constexpr uint64_t kShortestDefaultMemoryMib = 2048;
// Above this many ranks, with choices left open, a breadth-first search is told to be hopeless up front.
constexpr int kShortestHopelessRanks = 64;

// The first Ctrl-C stops the search (polled by the search through SearchOptions::stop); the handler
// is installed with SA_RESETHAND, so a second Ctrl-C kills collmc as usual.
std::atomic<bool> interrupted{false};

extern "C" void on_sigint(int) { interrupted.store(true, std::memory_order_relaxed); }

void stop_on_first_sigint() {
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &sa, nullptr);
}

void wrote(const po::variables_map& vm, const char* option, bool quiet) {
  const std::string& path = vm[option].as<std::string>();
  if (!quiet && !is_stdout(path)) std::cerr << "wrote " << path << "\n";
}

// The command line that reproduces a report, shell-quoted where needed, for the HTML report's footer.
std::string command_line(const std::vector<std::string>& args) {
  std::string line = "collmc check";
  for (const auto& a : args) {
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789-_=./,:@+%") == std::string::npos;
    std::string quoted = "'";
    for (char c : a) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += " " + (plain ? a : quoted + "'");
  }
  return line;
}

// Returns false when the graph could not be rendered (the error is printed; the other outputs are
// still written, the HTML report without its picture).
bool write_graph_outputs(const po::variables_map& vm, const checker::CheckResult& result,
                         const report::HtmlProvenance& provenance, bool quiet) {
  const bool graph_files = vm.count("dot") || vm.count("svg");
  if (!graph_files && !vm.count("html")) return true;
  // The DOT and its SVG are made once, for whichever of --dot, --svg and --html asked.
  std::string dot, svg;
  bool rendered = true;
  if (!result.wait_for.empty()) {
    report::DotOptions dot_options;
    dot_options.full_graph = vm.count("full-graph") > 0;
    dot = report::wait_for_dot(*result.world, result.wait_for, dot_options);
    if (vm.count("svg") || vm.count("html")) {
      try {
        svg = report::render_svg(dot);
      } catch (const std::runtime_error& e) {
        std::cerr << "error: cannot render the wait-for graph: " << e.what() << "\n";
        rendered = false;
      }
    }
  } else if (graph_files) {
    std::cerr << "note: no wait-for graph (the verdict is " << model::verdict_name(result.verdict)
              << "); --dot/--svg not written\n";
  }
  if (vm.count("html")) {
    write_file(vm["html"].as<std::string>(), report::html_report(result, svg, provenance));
    wrote(vm, "html", quiet);
  }
  if (dot.empty()) return rendered;
  if (vm.count("dot")) {
    write_file(vm["dot"].as<std::string>(), dot);
    wrote(vm, "dot", quiet);
  }
  if (vm.count("svg") && rendered) {
    write_file(vm["svg"].as<std::string>(), svg);
    wrote(vm, "svg", quiet);
  }
  return rendered;
}

// "FILE: VERDICT" for --quiet, with what --expect found when it is not agreement.
std::string quiet_line(const std::string& file, const checker::CheckResult& result, bool stopped, bool expect,
                       bool colour) {
  std::string line = file + ": ";
  const std::string verdict(model::verdict_name(result.verdict));
  line += result.verdict == Verdict::Safe           ? green(verdict, colour)
          : result.verdict == Verdict::Inconclusive ? yellow(verdict, colour)
                                                    : red(verdict, colour);
  if (stopped) line += " (interrupted)";
  if (expect && result.world->expect && !result.agrees_with_expect()) {
    const std::string expected(model::verdict_name(*result.world->expect));
    line += result.verdict == Verdict::Inconclusive ? " (expected " + expected + ": not proven)"
                                                    : " (expected " + expected + ": " + red("DISAGREES", colour) + ")";
  }
  return line;
}

// `check A B --json OUT`: one array, a result per file in the order given.
void write_json_array(const po::variables_map& vm, const std::vector<std::string>& results, bool quiet) {
  write_file(vm["json"].as<std::string>(), report::json_array(results));
  wrote(vm, "json", quiet);
}

// Whether some rank has an order left open (any_order, either, maybe): what makes a breadth-first
// search grow with the number of interleavings rather than with the program.
bool has_choices(const model::World& world) { return shrink::size_of(world).choices > 0; }

}  // namespace

int cmd_check(const std::vector<std::string>& args) {
  po::options_description d = search_options();
  d.add_options()("json", po::value<std::string>()->value_name("OUT"),
                  "write the JSON result to OUT ('-': standard output, and the report goes to stderr); with several "
                  "files, one array of results")(
      "dot", po::value<std::string>()->value_name("OUT"),
      "write the wait-for graph (deadlocks) as Graphviz DOT to OUT ('-': standard output)")(
      "svg", po::value<std::string>()->value_name("OUT"), "render the wait-for graph (deadlocks) to SVG in OUT")(
      "full-graph", "draw every rank (default: the ranks on or next to a cycle, same roles folded)")(
      "html", po::value<std::string>()->value_name("OUT"), "write a self-contained HTML report for design review")(
      "quiet", "print only the verdict line (and no progress line); warnings are still printed")(
      "expect", "compare each file's verdict with its expect line")("file", po::value<std::vector<std::string>>(),
                                                                    "scenario");
  const auto [vm, files] = parse_with_positional(args, d, "file", "check needs a scenario file ('-': standard input)");
  const bool quiet = vm.count("quiet") > 0;
  const bool expect = vm.count("expect") > 0;
  int to_stdout = 0;
  for (const char* single : kOutputOptions) {
    if (!vm.count(single)) continue;
    if (is_stdout(vm[single].as<std::string>())) ++to_stdout;
  }
  for (const char* single : kSingleFileOutputs)
    if (vm.count(single) && files.size() != 1)
      throw po::error(std::string("--") + single +
                      " takes one scenario file (--json takes several: one array of results)");
  const bool json_array = vm.count("json") && files.size() > 1;
  std::vector<std::string> json_results;
  if (to_stdout > 1) throw po::error("only one of --json, --dot, --svg and --html can write to standard output ('-')");
  if (std::count(files.begin(), files.end(), model::kStdinPath) > 1)
    throw po::error("standard input ('-') can be read once");
  // Before the search: a bad output path fails now, not after an hour of search.
  for (const char* single : kOutputOptions)
    if (vm.count(single)) check_writable(vm[single].as<std::string>());
  auto options = to_search(vm);
  if (options.shortest && vm["max-memory"].defaulted()) options.max_memory_mib = kShortestDefaultMemoryMib;
  if (quiet && !vm.count("progress")) options.progress = checker::SearchOptions::Progress::Never;
  options.stop = &interrupted;
  stop_on_first_sigint();
  // With an output on stdout, stdout carries only that output; the report goes to stderr.
  std::ostream& report_out = to_stdout ? std::cerr : std::cout;
  const bool colour = colour_on(to_stdout ? stderr : stdout);
  const bool error_colour = colour_on(stderr);
  int worst = kExitSafe;
  for (const auto& file : files) {
    try {
      model::World world = model::load_world(file);
      // Warnings are kept with --quiet (it quiets the report, not the diagnostics): a typo'd buffer
      // must not pass a CI gate in silence.
      for (const auto& p : world.usage_problems)
        std::cerr << p.loc.str() << ": " << yellow("warning", error_colour) << ": " << p.message << "\n";
      for (const auto& p : world.warnings)
        std::cerr << p.loc.str() << ": " << yellow("warning", error_colour) << ": " << p.message << "\n";
      if (options.shortest && world.ranks > kShortestHopelessRanks && has_choices(world))
        std::cerr << (world.source ? world.source->path : file) << ": " << yellow("warning", error_colour)
                  << ": --shortest keeps every state of every interleaving; at " << world.ranks
                  << " ranks with open orders it is likely to stop at its memory bound (" << options.max_memory_mib
                  << " MiB) before it ends\n"
                  << "help: shrink first, then look for the shortest schedule of the small scenario: collmc shrink "
                  << file << " -o small.cmc && collmc check --shortest small.cmc\n";
      auto result = checker::check(world, options);
      const bool stopped = result.verdict == Verdict::Inconclusive && interrupted.load();
      const bool unexplained_hang =
          result.verdict == Verdict::Safe && world.observed && world.observed->outcome == model::ObservedOutcome::Hung;
      if (quiet)
        report_out << quiet_line(world.source ? world.source->path : file, result, stopped, expect, colour)
                   << (unexplained_hang ? " (model only; the recorded run hung)" : "") << "\n";
      else
        report_out << report::text_report(result, false);
      if (expect && !world.expect) report_out << file << ": no 'expect' line\n";
      report_out << std::flush;
      if (json_array) {
        json_results.push_back(report::json_report(result));
      } else if (vm.count("json")) {
        write_file(vm["json"].as<std::string>(), report::json_report(result));
        wrote(vm, "json", quiet);
      }
      const bool rendered = write_graph_outputs(vm, result, {command_line(args), build_versions().collmc}, quiet);
      int code = unexplained_hang ? kExitUnexplainedHang : exit_code(result.verdict);
      if (expect && code != kExitInconclusive) code = result.agrees_with_expect() ? kExitSafe : kExitViolation;
      worst = most_severe(worst, code);
      if (!rendered) worst = most_severe(worst, kExitBadInput);  // the graph could not be drawn (printed)
      if (stopped) {
        std::cerr << "collmc check: interrupted: " << file << " is inconclusive (interrupted)"
                  << (&file != &files.back() ? "; the files after it were not checked" : "") << "\n";
        if (json_array) write_json_array(vm, json_results, quiet);
        return kExitInterrupted;
      }
    } catch (const model::InputError& e) {
      std::cerr << e.what() << "\n";
      std::error_code ec;
      if (std::filesystem::is_directory(file, ec))
        std::cerr << "help: to check every .cmc file under a directory: collmc test " << file << "\n";
      if (json_array) json_results.push_back(report::json_error_report(file, e));
      worst = most_severe(worst, kExitBadInput);
    }
  }
  if (json_array) write_json_array(vm, json_results, quiet);
  return worst;
}

}  // namespace collmc::cli
