// `collmc record`: sets up the recorder for a program, forwards its exit status, lists the files; and the
// files it writes import into a scenario with `collmc trace import` (the fake NCCL of traces/record/nccl/testing).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_support.h"

#ifdef COLLMC_RECORDER_SO

namespace {

namespace fs = std::filesystem;
using collmc::testing::collmc_binary;
using collmc::testing::run_command;

TEST(RecordCli, RecordsAProgramAndImportsIt) {
  const std::string dir = collmc::testing::fresh_scratch_dir("run", false);
  std::string out;
  ASSERT_EQ(run_command(
                collmc_binary() + " record --out '" + dir + "' -- " + COLLMC_RECORD_DRIVER + " program 0 1 same", &out),
            0)
      << out;
  EXPECT_NE(out.find("collmc record: 1 trace file in " + dir), std::string::npos) << out;
  EXPECT_NE(out.find("collmc-trace."), std::string::npos) << out;
  EXPECT_NE(out.find("(61 lines)"), std::string::npos) << out;  // header + 30 calls, entry and return each
  const std::string cmc = dir + "/one.cmc";
  ASSERT_EQ(run_command(collmc_binary() + " trace import '" + dir + "' -o '" + cmc + "'", &out), 0) << out;
  ASSERT_EQ(run_command(collmc_binary() + " check '" + cmc + "'", &out), 0) << out;  // one rank: safe
}

TEST(RecordCli, TwoRanksRecordedInOppositeOrdersImportAsADeadlock) {
  const std::string dir = collmc::testing::fresh_scratch_dir("opposite", false);
  std::string out;
  for (int r = 0; r < 2; ++r)
    ASSERT_EQ(run_command("RANK=" + std::to_string(r) + " " + collmc_binary() + " record --append --out '" + dir +
                              "' -- " + COLLMC_RECORD_DRIVER + " program " + std::to_string(r) + " 2 opposite",
                          &out),
              0)
        << out;
  const std::string cmc = dir + "/opposite.cmc";
  ASSERT_EQ(run_command(collmc_binary() + " trace import '" + dir + "' -o '" + cmc + "'", &out), 0) << out;
  EXPECT_EQ(run_command(collmc_binary() + " check '" + cmc + "'", &out), 1) << out;
  EXPECT_NE(out.find("deadlock"), std::string::npos) << out;
}

TEST(RecordCli, ForwardsTheExitStatusAndKeepsAnEarlierPreload) {
  const std::string dir = collmc::testing::fresh_scratch_dir("status", false);
  std::string out;
  EXPECT_EQ(run_command(collmc_binary() + " record --out '" + dir + "' -- sh -c 'exit 7'", &out), 7) << out;
  EXPECT_NE(out.find("0 trace files"), std::string::npos) << out;
  // An LD_PRELOAD the user had stays, with the recorder after it; the program sees both. (collmc itself runs
  // with that preload too: in the ASan build, ASan must be told that its runtime need not come first.)
  ASSERT_EQ(run_command("ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=libc.so.6 " + collmc_binary() +
                            " record --out '" + dir + "' -- sh -c 'echo \"preload=$LD_PRELOAD dir=$COLLMC_TRACE_DIR\"'",
                        &out),
            0)
      << out;
  EXPECT_NE(out.find(std::string("preload=libc.so.6:") + COLLMC_RECORDER_SO), std::string::npos) << out;
  EXPECT_NE(out.find("dir=" + dir), std::string::npos) << out;
  EXPECT_EQ(run_command(collmc_binary() + " record --out '" + dir + "' -- /nonexistent/program", &out), 127) << out;
  EXPECT_EQ(run_command(collmc_binary() + " record --out '" + dir + "'", &out), 2) << out;
  EXPECT_EQ(run_command("COLLMC_RECORDER=/nonexistent.so " + collmc_binary() + " record -- true", &out), 2) << out;
  EXPECT_NE(out.find("COLLMC_RECORDER names no file"), std::string::npos) << out;
}

}  // namespace

#endif  // COLLMC_RECORDER_SO
