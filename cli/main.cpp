// collmc: thin command-line front end. Parses options, calls the libraries, prints.
#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>

#include "collmc/checker/check.h"
#include "collmc/checker/suite.h"
#include "collmc/model/world.h"

namespace po = boost::program_options;
using collmc::model::Verdict;

namespace {

constexpr int kExitSafe = 0;
constexpr int kExitViolation = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInconclusive = 3;

void usage(std::ostream& out) {
  out << "usage: collmc check FILE... [--json OUT] [--dot OUT] [--svg OUT] [--full-graph] [--shortest]\n"
         "                          [--no-reduction] [--max-states N] [--time-limit S] [--max-memory MiB]\n"
         "                          [--quiet] [--expect]\n"
         "       collmc test PATH... [--max-states N] [--time-limit S] [--max-memory MiB]\n"
         "exit: 0 safe, 1 violation, 2 bad input, 3 inconclusive\n";
}

po::options_description search_options() {
  po::options_description d("search");
  d.add_options()("shortest", "breadth-first: a shortest schedule (exact with --no-reduction)")(
      "no-reduction", "explore every interleaving (no partial-order reduction)")(
      "max-states", po::value<uint64_t>()->default_value(0), "stop after N states (0: no limit)")(
      "time-limit", po::value<double>()->default_value(0), "stop after S seconds (0: no limit)")(
      "max-memory", po::value<uint64_t>()->default_value(0), "stop past MiB of search memory (0: no limit)");
  return d;
}

collmc::checker::SearchOptions to_search(const po::variables_map& vm) {
  collmc::checker::SearchOptions o;
  o.shortest = vm.count("shortest") > 0;
  o.reduction = vm.count("no-reduction") == 0;
  o.max_states = vm["max-states"].as<uint64_t>();
  o.time_limit_s = vm["time-limit"].as<double>();
  o.max_memory_mib = vm["max-memory"].as<uint64_t>();
  return o;
}

int exit_code(Verdict v) {
  if (v == Verdict::Safe) return kExitSafe;
  if (v == Verdict::Inconclusive) return kExitInconclusive;
  return kExitViolation;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out || !(out << text)) throw std::runtime_error("cannot write " + path);
}

void write_graph_outputs(const po::variables_map& vm, const collmc::checker::CheckResult& result) {
  if (!vm.count("dot") && !vm.count("svg")) return;
  if (result.wait_for.empty()) {
    std::cerr << "note: no wait-for graph (the verdict is " << collmc::model::verdict_name(result.verdict)
              << "); --dot/--svg not written\n";
    return;
  }
  collmc::checker::DotOptions dot_options;
  dot_options.full_graph = vm.count("full-graph") > 0;
  const std::string dot = collmc::checker::wait_for_dot(*result.world, result.wait_for, dot_options);
  if (vm.count("dot")) write_file(vm["dot"].as<std::string>(), dot);
  if (vm.count("svg")) write_file(vm["svg"].as<std::string>(), collmc::checker::render_svg(dot));
}

int cmd_check(const std::vector<std::string>& args) {
  po::options_description d = search_options();
  d.add_options()("json", po::value<std::string>(), "write the JSON result to OUT")(
      "dot", po::value<std::string>(), "write the wait-for graph (deadlocks) as Graphviz DOT to OUT")(
      "svg", po::value<std::string>(), "render the wait-for graph (deadlocks) to SVG with Graphviz")(
      "full-graph", "draw every rank (default: the ranks on or next to a cycle, same roles folded)")(
      "quiet", "print only the verdict line")("expect", "compare each file's verdict with its expect line")(
      "file", po::value<std::vector<std::string>>(), "scenario");
  po::positional_options_description pos;
  pos.add("file", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
  po::notify(vm);
  if (!vm.count("file")) throw po::error("check needs a scenario file");
  const auto files = vm["file"].as<std::vector<std::string>>();
  const bool quiet = vm.count("quiet") > 0;
  const bool expect = vm.count("expect") > 0;
  for (const char* single : {"json", "dot", "svg"})
    if (vm.count(single) && files.size() != 1) throw po::error(std::string("--") + single + " takes one scenario file");
  const auto options = to_search(vm);
  int worst = kExitSafe;
  bool all_agree = true;
  for (const auto& file : files) {
    try {
      collmc::model::World world = collmc::model::load_world(file);
      for (const auto& p : world.usage_problems)
        if (!quiet) std::cerr << p.loc.str() << ": warning: " << p.message << "\n";
      auto result = collmc::checker::check(world, options);
      if (quiet) {
        std::cout << file << ": " << collmc::model::verdict_name(result.verdict) << "\n";
      } else {
        std::cout << collmc::checker::text_report(result, false);
      }
      if (vm.count("json")) write_file(vm["json"].as<std::string>(), collmc::checker::json_report(result));
      write_graph_outputs(vm, result);
      if (expect) {
        bool agree = result.agrees_with_expect();
        if (!world.expect) std::cout << file << ": no 'expect' line\n";
        all_agree = all_agree && agree;
      }
      int code = exit_code(result.verdict);
      if (code == kExitViolation || (code == kExitInconclusive && worst == kExitSafe)) worst = code;
    } catch (const collmc::model::InputError& e) {
      std::cerr << e.what() << "\n";
      worst = kExitBadInput;
      all_agree = false;
    }
  }
  if (expect) return all_agree ? kExitSafe : (worst == kExitBadInput ? kExitBadInput : kExitViolation);
  return worst;
}

int cmd_test(const std::vector<std::string>& args) {
  po::options_description d = search_options();
  d.add_options()("path", po::value<std::vector<std::string>>(), "file or directory");
  po::positional_options_description pos;
  pos.add("path", -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
  po::notify(vm);
  if (!vm.count("path")) throw po::error("test needs a file or directory");
  const auto options = to_search(vm);
  std::vector<collmc::checker::SuiteRow> rows;
  for (const auto& f : collmc::checker::collect_scenarios(vm["path"].as<std::vector<std::string>>()))
    rows.push_back(collmc::checker::run_scenario(f, options));
  std::cout << collmc::checker::suite_table(rows);
  bool ok = !rows.empty() && std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.passed(); });
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return kExitBadInput;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    if (cmd == "check") return cmd_check(args);
    if (cmd == "test") return cmd_test(args);
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      usage(std::cout);
      return 0;
    }
    std::cerr << "collmc: unknown command '" << cmd << "'\n";
    usage(std::cerr);
    return kExitBadInput;
  } catch (const po::error& e) {
    std::cerr << "collmc " << cmd << ": " << e.what() << "\n";
    usage(std::cerr);
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "collmc " << cmd << ": " << e.what() << "\n";
    return kExitBadInput;
  }
}
