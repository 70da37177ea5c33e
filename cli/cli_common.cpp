#include "cli_common.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "collmc/model/source.h"

namespace collmc::cli {

using model::Verdict;

namespace {

// A value the validators refuse: "invalid value '-5' for '--max-states': expected ...". Boost fills in
// the option's name as it stores the value.
class BadValue : public po::error_with_option_name {
 public:
  BadValue(const std::string& token, const std::string& expected)
      : po::error_with_option_name("invalid value '" + token + "' for '%canonical_option%': expected " + expected) {}
};

const std::string& single_token(const std::vector<std::string>& tokens) {
  if (tokens.size() != 1) throw po::validation_error(po::validation_error::multiple_values_not_allowed);
  return tokens.front();
}

}  // namespace

int most_severe(int a, int b) {
  auto rank = [](int code) {
    switch (code) {
      case kExitSafe:
        return 0;
      case kExitInconclusive:
        return 1;
      case kExitUnexplainedHang:
        return 2;
      case kExitViolation:
        return 3;
      case kExitBadInput:
        return 4;
      default:
        return 5;  // an interrupt
    }
  };
  return rank(a) >= rank(b) ? a : b;
}

void validate(boost::any& out, const std::vector<std::string>& tokens, Count*, long) {
  const std::string& s = single_token(tokens);
  uint64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) throw BadValue(s, "a whole number, 0 or more");
  out = Count{v};
}

void validate(boost::any& out, const std::vector<std::string>& tokens, Seconds*, long) {
  const std::string& s = single_token(tokens);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v) || v < 0)
    throw BadValue(s, "a number of seconds, 0 or more");
  out = Seconds{v};
}

std::ostream& operator<<(std::ostream& out, const Count& c) { return out << c.value; }
std::ostream& operator<<(std::ostream& out, const Seconds& s) { return out << s.value; }

po::options_description search_options() {
  po::options_description d("search");
  d.add_options()("shortest", "breadth-first: a shortest schedule (exact with --no-reduction)")(
      "no-reduction", "explore every interleaving (no partial-order reduction)")(
      "max-states", po::value<Count>()->default_value(Count{0})->value_name("N"), "stop after N states (0: no limit)")(
      "time-limit", po::value<Seconds>()->default_value(Seconds{0})->value_name("S"),
      "stop after S seconds (0: no limit)")("max-memory",
                                            po::value<Count>()->default_value(Count{0})->value_name("MiB"),
                                            "stop past MiB of search memory (0: no limit)")(
      "progress", "a live progress line on stderr once a search runs past 1 s (default: when stderr is a terminal)")(
      "no-progress", "no progress line");
  return d;
}

checker::SearchOptions to_search(const po::variables_map& vm) {
  checker::SearchOptions o;
  o.shortest = vm.count("shortest") > 0;
  o.reduction = vm.count("no-reduction") == 0;
  o.max_states = vm["max-states"].as<Count>().value;
  o.time_limit_s = vm["time-limit"].as<Seconds>().value;
  o.max_memory_mib = vm["max-memory"].as<Count>().value;
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

void check_writable(const std::string& path) {
  if (is_stdout(path)) return;
  auto fail = [&](int error) { throw std::runtime_error("cannot write " + path + ": " + std::strerror(error)); };
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(EISDIR);
    if (access(path.c_str(), W_OK) != 0) fail(errno);
    return;
  }
  if (errno != ENOENT) fail(errno);
  // A new file: its directory must exist and take files.
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (stat(dir.c_str(), &st) != 0) fail(errno);
  if (!S_ISDIR(st.st_mode)) fail(ENOTDIR);
  if (access(dir.c_str(), W_OK | X_OK) != 0) fail(errno);
}

void write_file(const std::string& path, const std::string& text) {
  if (is_stdout(path)) {
    std::cout << text << std::flush;
    if (!std::cout) throw std::runtime_error("cannot write to standard output");
    return;
  }
  check_writable(path);  // for the reason, which ofstream does not give
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  if (!out || !(out << text) || !out.flush())
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno != 0 ? errno : EIO));
}

bool colour_on(FILE* stream) {
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour != nullptr && *no_colour != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fileno(stream)) != 0;
}

namespace {
std::string paint(const std::string& text, const char* sgr, bool on) {
  return on ? std::string("\033[") + sgr + "m" + text + "\033[0m" : text;
}
}  // namespace

std::string red(const std::string& text, bool on) { return paint(text, "1;31", on); }
std::string green(const std::string& text, bool on) { return paint(text, "1;32", on); }
std::string yellow(const std::string& text, bool on) { return paint(text, "1;33", on); }

namespace {

bool is_help(const std::string& arg) { return arg == "--help" || arg == "-h"; }

// The options of `d` but the positional ones, in two groups: the command's own and the search
// options every searching command shares; then --help.
std::string options_text(const po::options_description& d, const po::positional_options_description& pos) {
  std::set<std::string> positional;
  for (unsigned i = 0; i < pos.max_total_count() && i < 64; ++i) positional.insert(pos.name_for_position(i));
  const po::options_description shared = search_options();
  // Wide enough that no example in a description is cut inside a word (Boost breaks a line inside a
  // word when the last space is in its first half).
  constexpr unsigned kWidth = 110;
  po::options_description own("options", kWidth, kWidth / 2), searching("search options", kWidth, kWidth / 2);
  for (const auto& option : d.options()) {
    if (positional.count(option->long_name())) continue;
    // A search option by name and meaning: record's own --time-limit (stop the program) is not one.
    const po::option_description* same = shared.find_nothrow(option->long_name(), false);
    const bool is_search = same != nullptr && same->description() == option->description();
    (is_search ? searching : own).add(option);
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
  try {
    po::store(po::command_line_parser(args).options(d).positional(pos).run(), vm);
  } catch (const po::unknown_option& e) {
    // "did you mean": against every long option of the command, as cargo and git do.
    std::string given = e.get_option_name();
    const std::string bare = given.rfind("--", 0) == 0 ? given.substr(2) : given;
    std::vector<std::string> names;
    for (const auto& option : d.options())
      if (!option->long_name().empty()) names.push_back(option->long_name());
    if (auto guess = model::closest_spelling(bare, names))
      throw po::error("unrecognised option '" + given + "'; did you mean '--" + *guess + "'?");
    throw;
  } catch (const po::too_many_positional_options_error&) {
    throw po::error(
        "too many arguments: an option takes one word as its value (a list is written without spaces: "
        "--ubr-groups dense,expert)");
  }
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
