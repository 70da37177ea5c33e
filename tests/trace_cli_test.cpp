// collmc trace import end to end: the summary, the scenario file the check agrees with, exit 2 on bad
// input with the file and position.
#include <gtest/gtest.h>

#include <fstream>

#include "test_support.h"

namespace collmc::testing {
namespace {

std::string temp_path(const std::string& suffix) {
  return "/tmp/collmc-trace-cli-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
}

int collmc(const std::string& args, std::string* out) { return run_command(collmc_binary() + " " + args, out); }

TEST(TraceCli, ImportPrintsTheSummaryAndWritesACheckableScenario) {
  const std::string dir = source_dir() + "/tests/fixtures/traces/synthetic/";
  const std::string out_path = temp_path(".cmc");
  std::string out;
  ASSERT_EQ(collmc("trace import " + dir + "fr_hang -o " + out_path, &out), 0) << out;
  EXPECT_NE(out.find("collective #2 on pg 0 (default_pg)"), std::string::npos) << out;
  EXPECT_NE(out.find("rank 0 entered, rank 1 never did"), std::string::npos) << out;
  EXPECT_EQ(collmc("check " + out_path + " --quiet", &out), 1) << out;  // a violation: the deadlock
  ASSERT_EQ(collmc("trace import " + dir + "fr_same_json --format flight-recorder --quiet -o " + out_path, &out), 0);
  EXPECT_EQ(collmc("check " + out_path + " --quiet", &out), 0) << out;
  ASSERT_EQ(collmc("trace import " + dir + "nccl_split_interleaved --quiet -o " + out_path, &out), 0) << out;
  EXPECT_EQ(collmc("check " + out_path + " --quiet", &out), 0) << out;
  std::remove(out_path.c_str());
}

TEST(TraceCli, BadInputIsExitTwoWithWhere) {
  const std::string bad = temp_path(".log");
  std::ofstream(bad) << "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xq rank 0 nranks 1 commId 0x1 - Init START\n";
  std::string out;
  EXPECT_EQ(collmc("trace import " + bad + " -o /dev/null", &out), 2);
  EXPECT_NE(out.find(bad + ":1:"), std::string::npos) << out;
  EXPECT_NE(out.find("expected a pointer after 'comm'"), std::string::npos) << out;
  EXPECT_EQ(collmc("trace import /nonexistent/x -o /dev/null", &out), 2);
  EXPECT_EQ(collmc("trace import " + bad + " --format nonsense", &out), 2);
  EXPECT_EQ(collmc("trace", &out), 2);
  // One format per import.
  const std::string dir = source_dir() + "/tests/fixtures/traces/synthetic/";
  EXPECT_EQ(collmc("trace import " + dir + "fr_hang " + dir + "nccl_hang -o /dev/null", &out), 2);
  EXPECT_NE(out.find("import one format at a time"), std::string::npos) << out;
  // A pickle that would run code is refused, naming the opcode.
  const std::string evil = temp_path(".pkl");
  static const char kEvil[] =
      "\x80\x02"
      "cos\nsystem\n"
      "X\x02\x00\x00\x00id"
      "\x85R.";
  std::ofstream(evil, std::ios::binary) << std::string(kEvil, sizeof kEvil - 1);
  EXPECT_EQ(collmc("trace import " + evil + " -o /dev/null", &out), 2);
  EXPECT_NE(out.find("GLOBAL"), std::string::npos) << out;
  std::remove(bad.c_str());
  std::remove(evil.c_str());
}

}  // namespace
}  // namespace collmc::testing
