// The traces recorded on 2x H200 with PyTorch 2.11 and NCCL 2.28.9 (tests/fixtures/traces/gpu/, see
// versions.txt and each program's outcome.txt): their Flight Recorder dumps (torch's own C++ pickles
// and JSON) and NCCL logs become scenarios whose check agrees with what the GPUs did.
#include <gtest/gtest.h>

#include <sstream>

#include "collmc/traces/import.h"
#include "collmc/traces/trace.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using namespace collmc::traces;

std::string gpu(const std::string& path) { return source_dir() + "/tests/fixtures/traces/gpu/" + path; }

std::string summary_of(const Trace& t) {
  std::string s;
  for (const auto& l : summarize(t)) s += l + "\n";
  return s;
}

// The scenario without the lines that name the files it came from.
std::string body_of(const Trace& t) {
  std::istringstream in(emit_scenario(t, {"x", false}));
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind("# rank ", 0) != 0) out += line + "\n";
  return out;
}

TEST(TraceGpuFixtures, SkippedCollectiveFlightRecorderDumpOnTimeoutShowsTheMissingRankAndTheHang) {
  // outcome.txt: both ranks hung until killed. Rank 1 skipped the third all-reduce on group 1.
  Trace t = import_traces(
      {gpu("skipped_collective/flight_recorder/fr_timeout_0"), gpu("skipped_collective/flight_recorder/fr_timeout_1")},
      TraceFormat::Auto);
  std::string s = summary_of(t);
  EXPECT_NE(
      s.find("collective #3 on pg 1 (all_reduce, record_id 4, nccl:all_reduce #3): rank 0 entered, rank 1 never did"),
      std::string::npos)
      << s;
  EXPECT_EQ(verdict_str(emit_scenario(t)), "deadlock");
  // The watchdog's JSON dump of the same run says the same.
  Trace json = import_traces({gpu("skipped_collective/flight_recorder/fr_watchdog_0.json"),
                              gpu("skipped_collective/flight_recorder/fr_watchdog_1.json")},
                             TraceFormat::Auto);
  EXPECT_NE(summary_of(json).find("rank 0 entered, rank 1 never did"), std::string::npos);
  EXPECT_EQ(verdict_str(emit_scenario(json)), "deadlock");
}

TEST(TraceGpuFixtures, SameOrderProgramIsSafeAndItsPickleAndJsonDumpsAgree) {
  // outcome.txt: both ranks exited 0.
  Trace pkl = import_traces(
      {gpu("mempool_same_order/flight_recorder/fr_end_0.pkl"), gpu("mempool_same_order/flight_recorder/fr_end_1.pkl")},
      TraceFormat::Auto);
  Trace json = import_traces({gpu("mempool_same_order/flight_recorder/fr_end_0.json"),
                              gpu("mempool_same_order/flight_recorder/fr_end_1.json")},
                             TraceFormat::Auto);
  EXPECT_EQ(pkl.comms.size(), 3u);
  EXPECT_EQ(body_of(pkl), body_of(json));
  EXPECT_EQ(verdict_str(emit_scenario(pkl)), "safe");
}

TEST(TraceGpuFixtures, NcclLogsOfTheSameRunsAgreeWithTheGpus) {
  Trace skipped = import_traces({gpu("skipped_collective/nccl_log")}, TraceFormat::Auto);
  EXPECT_EQ(skipped.world_size, 2);
  EXPECT_NE(summary_of(skipped).find("rank 0 entered, rank 1 never did"), std::string::npos) << summary_of(skipped);
  EXPECT_EQ(verdict_str(emit_scenario(skipped)), "deadlock");
  Trace same = import_traces({gpu("mempool_same_order/nccl_log")}, TraceFormat::Auto);
  EXPECT_EQ(same.comms.size(), 3u);  // the world comm and the two groups split from it
  EXPECT_EQ(verdict_str(emit_scenario(same)), "safe");
}

TEST(TraceGpuFixtures, TwoSnapshotsOfOneRankAreRefused) {
  try {
    import_traces({gpu("mempool_same_order/flight_recorder")}, TraceFormat::Auto);
    FAIL() << "expected a TraceInputError";
  } catch (const TraceInputError& e) {
    EXPECT_NE(std::string(e.what()).find("a second dump for rank 0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace collmc::testing
