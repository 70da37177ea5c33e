// The collmc tool end to end: exit codes, --expect, test's closing line, gen, and the graph files.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "test_support.h"

namespace collmc::testing {
namespace {

int collmc(const std::string& args, std::string* out = nullptr) {
  std::string ignored;
  return run_command(collmc_binary() + " " + args, out ? out : &ignored);
}

std::string temp_path(const std::string& suffix) {
  return "/tmp/collmc-cli-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
}

TEST(Cli, ExitCodesFollowTheVerdict) {
  EXPECT_EQ(collmc("check " + gpu_calibration_dir() + "/reg_same_order.cmc --quiet"), 0);
  EXPECT_EQ(collmc("check " + gpu_calibration_dir() + "/reg_cross_order.cmc --quiet"), 1);
  EXPECT_EQ(collmc("check " + gpu_calibration_dir() + "/split_cross_order.cmc --quiet"), 1);
  EXPECT_EQ(
      collmc("check " + source_dir() + "/examples/megatron_hsdp_dp_only.cmc --no-reduction --max-states 10 --quiet"),
      3);
  EXPECT_EQ(collmc("check /nonexistent.cmc"), 2);
  EXPECT_EQ(collmc("check"), 2);
  EXPECT_EQ(collmc("frobnicate"), 2);
}

TEST(Cli, BadInputPointsAtFileLineColumn) {
  const std::string path = temp_path(".cmc");
  std::ofstream(path) << "ranks 2\ncomm A = [0, 1]\nrank 0 {\n  regster A x\n}\n";
  std::string out;
  EXPECT_EQ(collmc("check " + path, &out), 2);
  EXPECT_NE(out.find(path + ":4:3: error: expected a statement"), std::string::npos) << out;
  EXPECT_NE(out.find('^'), std::string::npos);
  std::remove(path.c_str());
}

TEST(Cli, ExpectComparesEveryFile) {
  EXPECT_EQ(collmc("check --expect --quiet " + gpu_calibration_dir() + "/reg_cross_order.cmc " + gpu_calibration_dir() +
                   "/reg_same_order.cmc"),
            0);
  const std::string path = temp_path(".cmc");
  std::ofstream(path) << "ranks 2\nexpect safe\ncomm A = [0, 1]\nrank 0 {\n  alloc x\n  register A x\n}\n";
  EXPECT_EQ(collmc("check --expect --quiet " + path), 1);
  std::remove(path.c_str());
}

TEST(Cli, TestPrintsOneRowPerFileAndTheClosingLine) {
  std::string out;
  EXPECT_EQ(collmc("test " + mpi_calibration_dir(), &out), 0);
  EXPECT_NE(out.find("10 passed, 0 failed"), std::string::npos) << out;
  EXPECT_NE(out.find("mpi_win_cross_order.cmc"), std::string::npos);
}

TEST(Cli, GenWritesScenariosTheCheckerAgreesWith) {
  const std::string path = temp_path(".cmc");
  ASSERT_EQ(collmc("gen ring --comms 6 -o " + path), 0);
  EXPECT_EQ(collmc("check --expect --quiet " + path), 0);
  ASSERT_EQ(collmc("gen ring --comms 6 --agreed --profile mpi -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 0);
  // The configuration of the reported Megatron-FSDP hang, and its two fixes.
  const std::string megatron = "gen megatron --world 16 --tp 2 --cp 2 --ep 4 --dist-opt-instances 2 ";
  ASSERT_EQ(collmc(megatron + "--order per-rank -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 1);
  ASSERT_EQ(collmc(megatron + "--order sorted -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 0);
  ASSERT_EQ(collmc(megatron + "--order per-rank --ubr-groups dense -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 0);
  // Late segments: the hook registers them on every group; a rank without one leaves peers waiting.
  ASSERT_EQ(collmc(megatron + "--order list --late-segments some --collectives -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 1);
  ASSERT_EQ(collmc(megatron + "--order sorted --late-segments all --collectives -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 0);
  // Plain PyTorch process groups sharing one pool.
  const std::string pool = "gen pytorch-pool --ranks 4 --groups dp:consecutive:2 ep:strided:2 all:all ";
  ASSERT_EQ(collmc(pool + "--order per-rank -o " + path), 0);
  EXPECT_EQ(collmc("check --expect --quiet " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 1);
  ASSERT_EQ(collmc(pool + "--order sorted -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 0);
  std::string out;
  EXPECT_EQ(collmc("gen pytorch-pool --ranks 4 --groups dp:consecutive:3", &out), 2);
  EXPECT_NE(out.find("not divisible"), std::string::npos) << out;
  EXPECT_EQ(collmc("gen megatron --world 6 --tp 4", &out), 2);
  EXPECT_NE(out.find("not divisible"), std::string::npos) << out;
  std::remove(path.c_str());
}

// The README walkthrough, as written there: the reported configuration with late segments in hash
// order deadlocks on a cycle through the dense, expert and outer groups; both fixes are safe.
TEST(Cli, MegatronWalkthroughAsInTheReadme) {
  const std::string path = temp_path(".cmc");
  const std::string g = "gen megatron --world 16 --tp 2 --cp 2 --ep 4 --dist-opt-instances 2 --late-segments all ";
  std::string out;
  ASSERT_EQ(collmc(g + "--order per-rank -o " + path), 0);
  EXPECT_EQ(collmc("check " + path, &out), 1);
  EXPECT_NE(out.find(": deadlock"), std::string::npos) << out;
  bool three_groups = false;
  ASSERT_NE(out.find("wait-for cycles:"), std::string::npos) << out;  // two cycles here
  std::istringstream lines(out.substr(out.find("wait-for cycles:")));
  for (std::string line; std::getline(lines, line);)
    three_groups = three_groups ||
                   (line.find("intra_dp_cp{") != std::string::npos && line.find("hier_edp_l0{") != std::string::npos &&
                    line.find("hier_edp_l1{") != std::string::npos);
  EXPECT_TRUE(three_groups) << "no cycle through the dense, expert and outer groups:\n" << out;
  ASSERT_EQ(collmc(g + "--order per-rank --ubr-groups dense -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 0);
  ASSERT_EQ(collmc(g + "--order sorted -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 0);
  // Megatron's separate all-gather communicator: same ranks as the dense group, its own comm.
  ASSERT_EQ(collmc(g + "--order per-rank --ubr-groups dense,dense-ag -o " + path), 0);
  std::ifstream generated(path);
  std::stringstream text;
  text << generated.rdbuf();
  EXPECT_NE(text.str().find("# INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP_AG\ncomm intra_dp_cp_ag = "),
            std::string::npos)
      << text.str();
  EXPECT_EQ(collmc("check --quiet " + path), 1);
  ASSERT_EQ(collmc(g + "--order sorted --ubr-groups dense,dense-ag -o " + path), 0);
  EXPECT_EQ(collmc("check --quiet " + path), 0);
  std::remove(path.c_str());
}

TEST(Cli, GraphAndReportFilesForADeadlock) {
  const std::string base = temp_path("");
  EXPECT_EQ(collmc("check " + source_dir() + "/examples/nccl_three_comm_ring.cmc --quiet --dot " + base +
                   ".dot --svg " + base + ".svg --html " + base + ".html --json " + base + ".json"),
            1);
  for (const char* ext : {".dot", ".svg", ".html", ".json"}) {
    std::ifstream in(base + ext);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_GT(text.str().size(), 100u) << ext;
    std::remove((base + ext).c_str());
  }
}

}  // namespace
}  // namespace collmc::testing
