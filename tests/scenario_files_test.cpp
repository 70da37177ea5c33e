// Every calibration scenario (both folders) and every example gets its `expect` verdict.
#include <gtest/gtest.h>

#include <filesystem>

#include "collmc/checker/suite.h"
#include "collmc/report/check_report.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

class ScenarioFile : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioFile, AgreesWithExpect) {
  const std::string path = GetParam();
  const model::World world = model::load_world(path);
  ASSERT_TRUE(world.expect.has_value()) << path << " has no expect line";
  checker::CheckResult r = checker::check(world, {});
  EXPECT_EQ(model::verdict_name(r.verdict), model::verdict_name(*world.expect)) << report::text_report(r);
  // Breadth-first gives the same verdict, and so does the search without reduction (small worlds).
  checker::SearchOptions bfs;
  bfs.shortest = true;
  EXPECT_EQ(checker::check(world, bfs).verdict, *world.expect) << path;
  if (world.ranks <= 3) {
    checker::SearchOptions full;
    full.reduction = false;
    EXPECT_EQ(checker::check(world, full).verdict, *world.expect) << path;
    full.shortest = true;
    EXPECT_EQ(checker::check(world, full).verdict, *world.expect) << path;
  }
}

std::vector<std::string> files_in(const std::string& dir) { return checker::collect_scenarios({dir}); }

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string stem = std::filesystem::path(info.param).stem().string();
  std::string parent = std::filesystem::path(info.param).parent_path().filename().string();
  std::string name = parent + "_" + stem;
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Calibration, ScenarioFile, ::testing::ValuesIn(files_in(gpu_calibration_dir())), test_name);
INSTANTIATE_TEST_SUITE_P(CalibrationMpi, ScenarioFile, ::testing::ValuesIn(files_in(mpi_calibration_dir())), test_name);
INSTANTIATE_TEST_SUITE_P(LocalCalibration, ScenarioFile,
                         ::testing::ValuesIn(files_in(source_dir() + "/tests/calibration")), test_name);
// Three- and four-rank scenarios awaiting four GPUs (issue 9), and their MPI versions.
INSTANTIATE_TEST_SUITE_P(FourGpuCalibration, ScenarioFile,
                         ::testing::ValuesIn(files_in(source_dir() + "/tests/calibration-4gpu")), test_name);
// Issue 14: the classes of real hangs (each in both outcomes) and the GPU probes' model predictions.
INSTANTIATE_TEST_SUITE_P(HangClasses, ScenarioFile, ::testing::ValuesIn(files_in(source_dir() + "/tests/hang-classes")),
                         test_name);
INSTANTIATE_TEST_SUITE_P(CalibrationProbes, ScenarioFile,
                         ::testing::ValuesIn(files_in(source_dir() + "/tests/calibration-probes")), test_name);
INSTANTIATE_TEST_SUITE_P(Examples, ScenarioFile, ::testing::ValuesIn(files_in(source_dir() + "/examples")), test_name);

TEST(ScenarioFiles, SetsAreComplete) {
  EXPECT_EQ(files_in(gpu_calibration_dir()).size(), 41u);
  EXPECT_EQ(files_in(mpi_calibration_dir()).size(), 10u);
  EXPECT_GE(files_in(source_dir() + "/examples").size(), 7u);
}

}  // namespace
}  // namespace collmc::testing
