#include "cli_common.h"

#include <fstream>
#include <stdexcept>

namespace collmc::cli {

using model::Verdict;

po::options_description search_options() {
  po::options_description d("search");
  d.add_options()("shortest", "breadth-first: a shortest schedule (exact with --no-reduction)")(
      "no-reduction", "explore every interleaving (no partial-order reduction)")(
      "max-states", po::value<uint64_t>()->default_value(0), "stop after N states (0: no limit)")(
      "time-limit", po::value<double>()->default_value(0), "stop after S seconds (0: no limit)")(
      "max-memory", po::value<uint64_t>()->default_value(0), "stop past MiB of search memory (0: no limit)")(
      "progress", "a live progress line on stderr once a search runs past 1 s (default: when stderr is a terminal)")(
      "no-progress", "no progress line");
  return d;
}

checker::SearchOptions to_search(const po::variables_map& vm) {
  checker::SearchOptions o;
  o.shortest = vm.count("shortest") > 0;
  o.reduction = vm.count("no-reduction") == 0;
  o.max_states = vm["max-states"].as<uint64_t>();
  o.time_limit_s = vm["time-limit"].as<double>();
  o.max_memory_mib = vm["max-memory"].as<uint64_t>();
  if (vm.count("progress") && vm.count("no-progress"))
    throw po::error("--progress and --no-progress exclude each other");
  if (vm.count("progress")) o.progress = checker::SearchOptions::Progress::Always;
  if (vm.count("no-progress")) o.progress = checker::SearchOptions::Progress::Never;
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

}  // namespace collmc::cli
