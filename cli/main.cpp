// collmc: thin command-line front end. Parses options, calls the libraries, prints.
#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>

#include "collmc/checker/check.h"
#include "collmc/checker/html_report.h"
#include "collmc/checker/suite.h"
#include "collmc/gen/generators.h"
#include "collmc/model/world.h"
#include "collmc/replay/plan.h"
#include "collmc/replay/replay.h"

namespace po = boost::program_options;
using collmc::model::Verdict;

namespace {

constexpr int kExitSafe = 0;
constexpr int kExitViolation = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInconclusive = 3;

void usage(std::ostream& out) {
  out << "usage: collmc check FILE... [--json OUT] [--dot OUT] [--svg OUT] [--html OUT] [--full-graph] [--shortest]\n"
         "                          [--no-reduction] [--max-states N] [--time-limit S] [--max-memory MiB]\n"
         "                          [--quiet] [--expect]\n"
         "       collmc test PATH... [--max-states N] [--time-limit S] [--max-memory MiB]\n"
         "       collmc replay RESULT.json|FILE.cmc [--hang-after S] [--json OUT]\n"
         "       collmc gen ring --comms N [--agreed] [--profile mpi] [-o FILE]\n"
         "       collmc gen megatron --world W [--tp N --cp N --pp N --ep N --etp N] [--dist-opt-instances N]\n"
         "                  [--ubr-groups dense,expert,outer] [--order list|per-rank|sorted]\n"
         "                  [--late-segments none|some|all] [--collectives] [-o FILE]\n"
         "       collmc gen pytorch-pool --ranks W --groups SPEC... [--order ...] [--late-segments ...] [-o FILE]\n"
         "       collmc gen hook-fanout --ranks W --comms K [--sorted] [-o FILE]\n"
         "       collmc replay --calibrate DIR... [--hang-after S] [--table OUT.md]\n"
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
  const bool graph_files = vm.count("dot") || vm.count("svg");
  if (!graph_files && !vm.count("html")) return;
  // The DOT and its SVG are made once, for whichever of --dot, --svg and --html asked.
  std::string dot, svg;
  if (!result.wait_for.empty()) {
    collmc::checker::DotOptions dot_options;
    dot_options.full_graph = vm.count("full-graph") > 0;
    dot = collmc::checker::wait_for_dot(*result.world, result.wait_for, dot_options);
    if (vm.count("svg") || vm.count("html")) svg = collmc::checker::render_svg(dot);
  } else if (graph_files) {
    std::cerr << "note: no wait-for graph (the verdict is " << collmc::model::verdict_name(result.verdict)
              << "); --dot/--svg not written\n";
  }
  if (vm.count("html")) write_file(vm["html"].as<std::string>(), collmc::checker::html_report(result, svg));
  if (dot.empty()) return;
  if (vm.count("dot")) write_file(vm["dot"].as<std::string>(), dot);
  if (vm.count("svg")) write_file(vm["svg"].as<std::string>(), svg);
}

// Options plus positional arguments named `positional`; throws when none is given.
std::pair<po::variables_map, std::vector<std::string>> parse_with_positional(const std::vector<std::string>& args,
                                                                             const po::options_description& d,
                                                                             const char* positional,
                                                                             const std::string& missing) {
  po::positional_options_description pos;
  pos.add(positional, -1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
  po::notify(vm);
  if (!vm.count(positional)) throw po::error(missing);
  auto values = vm[positional].as<std::vector<std::string>>();
  return {std::move(vm), std::move(values)};
}

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
  const auto [vm, paths] = parse_with_positional(args, d, "path", "test needs a file or directory");
  const auto options = to_search(vm);
  std::vector<collmc::checker::SuiteRow> rows;
  for (const auto& f : collmc::checker::collect_scenarios(paths))
    rows.push_back(collmc::checker::run_scenario(f, options));
  std::cout << collmc::checker::suite_table(rows);
  bool ok = !rows.empty() && std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.passed(); });
  return ok ? 0 : 1;
}

int cmd_replay(const std::vector<std::string>& args) {
  po::options_description d = search_options();
  d.add_options()("hang-after", po::value<double>()->default_value(5), "no progress for S seconds is a hang")(
      "json", po::value<std::string>(), "write the replay report as JSON")(
      "free", "do not enforce the schedule's order (an experiment)")(
      "calibrate", "replay every scenario under the given directories and print the agreement table")(
      "table", po::value<std::string>(), "with --calibrate: also write the table (Markdown) to OUT")(
      "input", po::value<std::vector<std::string>>(), "result or scenario");
  const auto [vm, inputs] =
      parse_with_positional(args, d, "input", "replay needs a result (.json) or a scenario (.cmc)");
  collmc::replay::ReplayOptions options;
  options.hang_after_s = vm["hang-after"].as<double>();
  options.free_running = vm.count("free") > 0;
  const auto search = to_search(vm);
  if (vm.count("calibrate")) {
    auto rows = collmc::replay::calibrate(collmc::checker::collect_scenarios(inputs), options, search);
    std::string table = collmc::replay::calibration_table(rows);
    std::cout << table;
    if (vm.count("table")) write_file(vm["table"].as<std::string>(), table);
    bool all = !rows.empty() && std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.agrees; });
    return all ? 0 : 1;
  }
  if (inputs.size() != 1) throw po::error("replay takes one result or scenario (or --calibrate DIR...)");
  collmc::model::World world;
  collmc::replay::ReplayPlan plan;
  const std::string& input = inputs.front();
  if (input.size() > 5 && input.substr(input.size() - 5) == ".json") {
    plan = collmc::replay::plan_from_json(input, world);
  } else {
    world = collmc::model::load_world(input);
    plan = collmc::replay::plan_for_scenario(world, search);
  }
  plan.world = &world;
  auto report = collmc::replay::replay_nccl(plan, options);
  std::cout << collmc::replay::text_report(report);
  if (vm.count("json")) write_file(vm["json"].as<std::string>(), collmc::replay::json_report(report));
  if (report.outcome == collmc::replay::Outcome::Refused) return kExitBadInput;
  return report.agrees ? 0 : 1;
}

int cmd_gen(const std::vector<std::string>& args) {
  if (args.empty()) throw po::error("gen needs a family: ring, megatron, pytorch-pool or hook-fanout");
  const std::string family = args.front();
  po::options_description d("gen");
  d.add_options()("output,o", po::value<std::string>(), "write the scenario to FILE (default: stdout)")(
      "comms", po::value<int>()->default_value(3), "ring, hook-fanout: number of comms")(
      "agreed", "ring: one agreed order (safe)")("profile", po::value<std::string>()->default_value("nccl"),
                                                 "ring: nccl or mpi")(
      "ranks", po::value<int>()->default_value(4), "hook-fanout: world size")("sorted", "hook-fanout: sorted order")(
      "world", po::value<int>()->default_value(8), "megatron: world size")(
      "tp", po::value<int>()->default_value(1), "")("cp", po::value<int>()->default_value(1), "")(
      "pp", po::value<int>()->default_value(1), "")("ep", po::value<int>()->default_value(1), "")(
      "etp", po::value<int>()->default_value(1), "")("dist-opt-instances", po::value<int>()->default_value(1), "")(
      "ubr-groups", po::value<std::string>()->default_value("dense,expert,outer"), "")(
      "order", po::value<std::string>()->default_value("list"), "list, per-rank or sorted")(
      "late-segments", po::value<std::string>()->default_value("none"), "none, some or all")(
      "collectives", "megatron: a training step's collectives after registration")(
      "groups", po::value<std::vector<std::string>>()->multitoken(),
      "pytorch-pool: NAME:all, NAME:consecutive:K or NAME:strided:K ...");
  po::variables_map vm;
  po::store(po::command_line_parser(std::vector<std::string>(args.begin() + 1, args.end())).options(d).run(), vm);
  po::notify(vm);
  auto order_of = [&]() {
    const std::string order = vm["order"].as<std::string>();
    if (order == "list") return collmc::gen::RegistrationOrder::List;
    if (order == "per-rank") return collmc::gen::RegistrationOrder::PerRank;
    if (order == "sorted") return collmc::gen::RegistrationOrder::Sorted;
    throw po::error("--order takes list, per-rank or sorted");
  };
  auto late_of = [&]() {
    const std::string late = vm["late-segments"].as<std::string>();
    if (late == "none") return collmc::gen::LateSegments::None;
    if (late == "some") return collmc::gen::LateSegments::Some;
    if (late == "all") return collmc::gen::LateSegments::All;
    throw po::error("--late-segments takes none, some or all");
  };
  std::string text;
  if (family == "pytorch-pool") {
    collmc::gen::PytorchPoolConfig c;
    c.world = vm["ranks"].as<int>();
    if (vm.count("groups")) c.groups = vm["groups"].as<std::vector<std::string>>();
    c.order = order_of();
    c.late_segments = vm["late-segments"].defaulted() ? collmc::gen::LateSegments::All : late_of();
    text = collmc::gen::pytorch_pool_scenario(c);
  } else if (family == "ring") {
    const std::string profile = vm["profile"].as<std::string>();
    if (profile != "nccl" && profile != "mpi") throw po::error("--profile takes nccl or mpi");
    text = collmc::gen::ring_scenario(vm["comms"].as<int>(), vm.count("agreed") > 0, profile == "mpi");
  } else if (family == "hook-fanout") {
    text = collmc::gen::hook_fanout_scenario(vm["ranks"].as<int>(), vm["comms"].as<int>(), vm.count("sorted") > 0);
  } else if (family == "megatron") {
    collmc::gen::MegatronConfig c;
    c.world = vm["world"].as<int>();
    c.tp = vm["tp"].as<int>();
    c.cp = vm["cp"].as<int>();
    c.pp = vm["pp"].as<int>();
    c.ep = vm["ep"].as<int>();
    c.etp = vm["etp"].as<int>();
    c.dist_opt_instances = vm["dist-opt-instances"].as<int>();
    c.ubr_groups.clear();
    std::string groups = vm["ubr-groups"].as<std::string>();
    for (size_t start = 0; start <= groups.size();) {
      size_t comma = groups.find(',', start);
      if (comma == std::string::npos) comma = groups.size();
      if (comma > start) c.ubr_groups.push_back(groups.substr(start, comma - start));
      start = comma + 1;
    }
    c.order = order_of();
    c.late_segments = late_of();
    c.collectives = vm.count("collectives") > 0;
    text = collmc::gen::megatron_scenario(c);
  } else {
    throw po::error("unknown family '" + family + "': expected ring, megatron, pytorch-pool or hook-fanout");
  }
  if (vm.count("output"))
    write_file(vm["output"].as<std::string>(), text);
  else
    std::cout << text;
  return 0;
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
    if (cmd == "replay") return cmd_replay(args);
    if (cmd == "gen") return cmd_gen(args);
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
