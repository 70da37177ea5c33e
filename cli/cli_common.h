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

// Options plus positional arguments named `positional`; throws po::error(missing) when none is given.
std::pair<po::variables_map, std::vector<std::string>> parse_with_positional(const std::vector<std::string>& args,
                                                                             const po::options_description& d,
                                                                             const char* positional,
                                                                             const std::string& missing);

}  // namespace collmc::cli
