#include "cli_common.h"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace collmc::cli {

using model::Verdict;

po::options_description search_options() {
  po::options_description d("search");
  d.add_options()("shortest", "breadth-first: a shortest schedule (exact with --no-reduction)")(
      "no-reduction", "explore every interleaving (no partial-order reduction)")(
      "max-states", po::value<uint64_t>()->default_value(0), "stop after N states (0: no limit)")(
      "time-limit", po::value<double>()->default_value(0), "stop after S seconds (0: no limit)")(
      "max-memory", po::value<uint64_t>()->default_value(0), "stop past MiB of search memory (0: no limit)");
  return d;
}

checker::SearchOptions to_search(const po::variables_map& vm) {
  checker::SearchOptions o;
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

namespace {

bool is_help(const std::string& arg) { return arg == "--help" || arg == "-h"; }

// The options of `d` but the positional ones, in two groups: the command's own and the search
// options every searching command shares; then --help.
std::string options_text(const po::options_description& d, const po::positional_options_description& pos) {
  std::set<std::string> positional;
  for (unsigned i = 0; i < pos.max_total_count() && i < 64; ++i) positional.insert(pos.name_for_position(i));
  const po::options_description shared = search_options();
  po::options_description own("options"), searching("search options");
  for (const auto& option : d.options()) {
    if (positional.count(option->long_name())) continue;
    (shared.find_nothrow(option->long_name(), false) ? searching : own).add(option);
  }
  own.add_options()("help,h", "print this help and exit");
  std::ostringstream out;
  out << own;
  if (!searching.options().empty()) out << "\n" << searching;
  return out.str();
}

}  // namespace

po::variables_map parse_options(const std::vector<std::string>& args, const po::options_description& d,
                                const po::positional_options_description& pos) {
  if (std::any_of(args.begin(), args.end(), is_help)) {
    // Help wins over every other argument, as in git and cmake: `collmc check --help` needs no file.
    throw HelpRequested{options_text(d, pos)};
  }
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
  po::notify(vm);
  return vm;
}

std::pair<po::variables_map, std::vector<std::string>> parse_with_positional(const std::vector<std::string>& args,
                                                                             const po::options_description& d,
                                                                             const char* positional,
                                                                             const std::string& missing) {
  po::positional_options_description pos;
  pos.add(positional, -1);
  po::variables_map vm = parse_options(args, d, pos);
  if (!vm.count(positional)) throw po::error(missing);
  auto values = vm[positional].as<std::vector<std::string>>();
  return {std::move(vm), std::move(values)};
}

std::pair<po::variables_map, std::vector<std::string>> parse_before_program(const std::vector<std::string>& args,
                                                                            const po::options_description& d,
                                                                            const std::string& missing) {
  size_t i = 0;
  while (i < args.size() && args[i] != "--" && args[i].size() > 1 && args[i][0] == '-') {
    // An option that takes a value and does not carry it (`--out DIR`, `-o DIR`) consumes the next one.
    const std::string& arg = args[i++];
    if (arg.find('=') != std::string::npos || (arg[1] != '-' && arg.size() > 2)) continue;
    // Boost names a short option by its dash ("-o"), a long one without them ("out").
    const po::option_description* option = d.find_nothrow(arg[1] == '-' ? arg.substr(2) : arg, false);
    if (option != nullptr && option->semantic()->max_tokens() > 0 && i < args.size()) ++i;
  }
  const std::vector<std::string> options(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i));
  po::variables_map vm = parse_options(options, d);
  if (i < args.size() && args[i] == "--") ++i;
  if (i >= args.size()) throw po::error(missing);
  return {std::move(vm), std::vector<std::string>(args.begin() + static_cast<std::ptrdiff_t>(i), args.end())};
}

}  // namespace collmc::cli
