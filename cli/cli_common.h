// Helpers shared by the collmc subcommands: exit codes, search options, output files.
#pragma once
#include <boost/program_options.hpp>
#include <cstdint>
#include <cstdio>
#include <ostream>
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
// The model finds no hang, but the scenario was imported from a run that hung (`observed hung`): the
// hang lies outside what the source recorded (docs/TRACES.md, "When the model finds no hang in a hung run").
constexpr int kExitUnexplainedHang = 4;
// collmc record --watch, collmc watch: a hang was named while the job ran (the diagnosis and scenario written).
constexpr int kExitHangNamed = 5;
constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as the shell reports it

// The more severe of two exit statuses, whatever order the files came in: an interrupt (130), then bad
// input (2), then a violation (1), then inconclusive (3), then safe (0). rg and clang likewise let an
// error win over a finding.
int most_severe(int a, int b);

// Option values checked when the command line is read, so that `--max-states -5` or `--time-limit nan`
// is refused ("invalid value '-5' for '--max-states': expected ...") instead of meaning "no limit".
struct Count {  // a whole number, 0 or more
  uint64_t value = 0;
};
struct Seconds {  // a finite number of seconds, 0 or more
  double value = 0;
};
void validate(boost::any& out, const std::vector<std::string>& tokens, Count*, long);
void validate(boost::any& out, const std::vector<std::string>& tokens, Seconds*, long);
std::ostream& operator<<(std::ostream& out, const Count& c);
std::ostream& operator<<(std::ostream& out, const Seconds& s);

// The --shortest/--no-reduction/--max-* options every searching command takes.
po::options_description search_options();
checker::SearchOptions to_search(const po::variables_map& vm);

// 0 safe, 1 violation, 3 inconclusive.
int exit_code(model::Verdict v);

// "-" as an output path: standard output (as git, rg and clang read it).
inline bool is_stdout(const std::string& path) { return path == "-"; }

// Throws std::runtime_error("cannot write PATH: REASON", REASON from the system: "No such file or
// directory", "Is a directory", "Permission denied") when `path` cannot be written; checked before a
// long search, so that a typo in an output path does not throw the search away. "-" always passes.
void check_writable(const std::string& path);

// Writes `text` to `path` ("-": standard output); throws std::runtime_error with the system's reason
// when it cannot.
void write_file(const std::string& path, const std::string& text);

// Whether to colour what goes to `stream` (stdout or stderr): a terminal, and NO_COLOR unset
// (https://no-color.org).
bool colour_on(FILE* stream);
// `text` in bold red/green/yellow when `on`.
std::string red(const std::string& text, bool on);
std::string green(const std::string& text, bool on);
std::string yellow(const std::string& text, bool on);

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
