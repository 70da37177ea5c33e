// The trim's differential (docs/TRACES.md, "What the import keeps"; issue 31): random recorded runs of every
// source (tests/trace_runs.h) imported trimmed and with --full-history check to the same verdict, the same
// waits and the same slot numbers. CI runs a small size; COLLMC_TRIM_DIFFERENTIAL_RUNS=N runs N of each
// source, and bench/trace_differential.cpp (collmc_trace_differential) runs 10,000 and more.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "test_support.h"
#include "trace_runs.h"

namespace collmc::testing {
namespace {

int runs_per_source() {
  if (const char* n = std::getenv("COLLMC_TRIM_DIFFERENTIAL_RUNS")) return std::max(1, std::atoi(n));
#ifdef COLLMC_SANITIZED_BUILD
  return 25;
#else
  return 120;
#endif
}

class TrimDifferential : public ::testing::TestWithParam<RunSource> {};

TEST_P(TrimDifferential, TrimmedAndFullImportsCheckAlike) {
  const RunSource source = GetParam();
  const std::string dir = fresh_scratch_dir(std::string("trim_differential_") + run_source_name(source));
  const int runs = runs_per_source();
  int trimmed = 0, hung = 0;
  for (int i = 0; i < runs; ++i) {
    const uint64_t seed = 31000 + static_cast<uint64_t>(i);
    const RecordedRun run = generate_recorded_run(source, seed);
    const TrimComparison c = compare_trim(run, dir);
    ASSERT_TRUE(c.agree) << run_source_name(source) << " seed " << seed << ": " << run.story << "\nfull:\n"
                         << c.full_outcome << "trimmed:\n"
                         << c.trimmed_outcome << "\nfull scenario:\n"
                         << c.full_scenario << "\ntrimmed scenario:\n"
                         << c.trimmed_scenario;
    trimmed += c.trimmed;
    hung += c.full_outcome.rfind("safe", 0) != 0;
  }
  // The runs exercise the trim: most leave something out (MPI traces are never trimmed), and not all pass.
  if (source != RunSource::MpiRecorder) {
    EXPECT_GE(trimmed, runs / 3) << run_source_name(source);
  }
  EXPECT_GE(hung, runs / 10) << run_source_name(source);
}

INSTANTIATE_TEST_SUITE_P(EverySource, TrimDifferential, ::testing::ValuesIn(kRunSources),
                         [](const ::testing::TestParamInfo<RunSource>& param) {
                           std::string name = run_source_name(param.param);
                           for (char& ch : name)
                             if (ch == '-') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace collmc::testing
