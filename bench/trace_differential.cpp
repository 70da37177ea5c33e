// The import trim's differential at its large size (docs/TRACES.md, "What the import keeps"; issue 31):
// random recorded runs of every source (tests/trace_runs.h), each imported trimmed and with --full-history
// and both checked; any difference in verdict, waits or slot numbers is a failure (exit 1, the first case
// printed). The ctest runs the same at a small size (tests/trace_differential_test.cpp).
//
//   collmc_trace_differential [--runs N] [--seed S] [--source all|recorder|flight-recorder-json|
//                              flight-recorder-pickle|nccl-log|mpi-recorder] [--dir DIR]
#include <unistd.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "../tests/trace_runs.h"

using namespace collmc::testing;

int main(int argc, char** argv) {
  long runs = 10000;
  uint64_t seed = 1;
  std::string only = "all";
  std::string dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--runs") {
      runs = std::atol(v.c_str());
    } else if (a == "--seed") {
      seed = std::strtoull(v.c_str(), nullptr, 10);
    } else if (a == "--source") {
      only = v;
    } else if (a == "--dir") {
      dir = v;
    } else {
      std::fprintf(stderr, "collmc_trace_differential: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (dir.empty())
    dir = (std::filesystem::temp_directory_path() / ("collmc-trim-diff." + std::to_string(getpid()))).string();
  std::filesystem::create_directories(dir);
  int failed = 0;
  for (RunSource source : kRunSources) {
    if (only != "all" && only != run_source_name(source)) continue;
    const auto start = std::chrono::steady_clock::now();
    long trimmed = 0, disagree = 0, hung = 0;
    for (long i = 0; i < runs; ++i) {
      const uint64_t case_seed = seed + static_cast<uint64_t>(i);
      const RecordedRun run = generate_recorded_run(source, case_seed);
      const TrimComparison c = compare_trim(run, dir);
      trimmed += c.trimmed;
      hung += c.full_outcome.rfind("safe", 0) != 0;
      if (!c.agree && disagree++ == 0)
        std::printf("DISAGREES: %s seed %llu: %s\nfull:\n%strimmed:\n%s\nfull scenario:\n%s\ntrimmed scenario:\n%s\n",
                    run_source_name(source), static_cast<unsigned long long>(case_seed), run.story.c_str(),
                    c.full_outcome.c_str(), c.trimmed_outcome.c_str(), c.full_scenario.c_str(),
                    c.trimmed_scenario.c_str());
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%-24s runs %ld (seeds %llu..%llu)  trimmed %ld  not safe %ld  disagreements %ld  %.1f s\n",
                run_source_name(source), runs, static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(seed + static_cast<uint64_t>(runs) - 1), trimmed, hung, disagree, s);
    std::fflush(stdout);
    failed += disagree > 0;
  }
  std::filesystem::remove_all(dir);
  return failed ? 1 : 0;
}
