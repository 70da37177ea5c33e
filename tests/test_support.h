// Helpers shared by the tests: scenarios from inline text, verdicts, paths of the bundled files.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/world.h"

namespace collmc::testing {

model::World world_from(const std::string& text);
checker::CheckResult check_text(const std::string& text, const checker::SearchOptions& options = {});
model::Verdict verdict_of(const std::string& text, const checker::SearchOptions& options = {});
std::string verdict_str(const std::string& text);  // verdict_name of verdict_of

// The checkout, and the calibration sets in it (tests/calibration-2gpu/PROVENANCE.md).
std::string source_dir();
std::string gpu_calibration_dir();  // NCCL 2.28.3 on two H200s
std::string mpi_calibration_dir();  // Open MPI 4.1.4 on CPUs
std::string collmc_binary();

// A fresh directory `name` under this test process's scratch directory (removed when the process
// exits); with `create` false only its parent exists, for tools that must create it themselves.
std::string fresh_scratch_dir(const std::string& name, bool create = true);

// Runs a shell command; returns its exit status and fills `output` with stdout+stderr.
int run_command(const std::string& command, std::string* output);

// One run of the collmc under test with `args` (shell words), stdout and stderr kept apart.
struct CollmcRun {
  int status = -1;
  std::string out;  // stdout only
  std::string all;  // stdout, then stderr
};
CollmcRun run_collmc(const std::string& args);

// Whether some line holds `text` (importer notes, summaries).
inline bool contains(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return l.find(text) != std::string::npos; });
}

// The lines, each ended by a newline (for failure messages).
inline std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace collmc::testing
