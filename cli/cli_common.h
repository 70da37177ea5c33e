// Helpers shared by the collmc subcommands: exit codes, search options, output files.
#pragma once
#include <boost/program_options.hpp>
#include <string>
#include <utility>
#include <vector>

#include "collmc/checker/search.h"
#include "collmc/model/operations.h"

namespace collmc::cli {

namespace po = boost::program_options;

constexpr int kExitSafe = 0;
constexpr int kExitViolation = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInconclusive = 3;

// The --shortest/--no-reduction/--max-* options every searching command takes.
po::options_description search_options();
checker::SearchOptions to_search(const po::variables_map& vm);

// 0 safe, 1 violation, 3 inconclusive.
int exit_code(model::Verdict v);

// Writes `text` to `path`; throws std::runtime_error when it cannot.
void write_file(const std::string& path, const std::string& text);

// `collmc CMD --help` (or -h): thrown by the parse helpers below; main prints the command's usage
// line, what it does and `options`, and exits 0.
struct HelpRequested {
  std::string options;  // every option of `d`, as Boost.ProgramOptions prints their descriptions
};

// Parses `args` against `d` plus --help/-h (throws HelpRequested when asked). Positional arguments go
// to the options `pos` names; those are left out of the help.
po::variables_map parse_options(const std::vector<std::string>& args, const po::options_description& d,
                                const po::positional_options_description& pos = {});

// Options plus positional arguments named `positional`; throws po::error(missing) when none is given.
std::pair<po::variables_map, std::vector<std::string>> parse_with_positional(const std::vector<std::string>& args,
                                                                             const po::options_description& d,
                                                                             const char* positional,
                                                                             const std::string& missing);

// `collmc record [options] [--] PROGRAM ARGS...`: the options before the program (the first argument
// that is neither an option nor an option's value, or whatever follows `--`), and the program with
// its arguments, untouched. Throws po::error(missing) when there is no program.
std::pair<po::variables_map, std::vector<std::string>> parse_before_program(const std::vector<std::string>& args,
                                                                            const po::options_description& d,
                                                                            const std::string& missing);

}  // namespace collmc::cli
