// The live watch (issue 35): certain_hang on the checker's stuck states, the follower on growing files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "collmc/checker/certain_hang.h"
#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/world.h"
#include "collmc/watch/flight_recorder_watch.h"
#include "collmc/watch/follower.h"
#include "test_support.h"

namespace {

using collmc::checker::CertainHang;

// The checker's stuck state of `text`, then certain_hang with `may_still_call`.
CertainHang certain(const std::string& text, const std::vector<bool>& may_still_call) {
  const collmc::model::World world = collmc::model::resolve(collmc::model::parse_string(text, "t.cmc"));
  const auto result = collmc::checker::check(world, {});
  EXPECT_EQ(result.verdict, collmc::model::Verdict::Deadlock) << text;
  collmc::checker::Semantics semantics(world);
  collmc::checker::State s = semantics.initial();
  for (const auto& step : result.schedule) semantics.apply(s, step.step);
  return collmc::checker::certain_hang(semantics, s, may_still_call);
}

const char* kPairBarriers = R"(ranks 5
set profile = mpi
comm p0 = [0, 1]
comm p1 = [1, 2]
comm p2 = [2, 3]
comm p3 = [3, 0]
comm w = all
rank 0 { barrier p0 }
rank 1 { barrier p1 }
rank 2 { barrier p2 }
rank 3 { barrier p3 }
rank 4 { }
)";

TEST(WatchCertainHang, ACycleOfBarriersIsCertainWhateverAComputingRankDoes) {
  const CertainHang h = certain(kPairBarriers, {false, false, false, false, true});
  ASSERT_TRUE(h.found);
  EXPECT_EQ(h.ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(h.reasons.size(), 4u);
}

TEST(WatchCertainHang, ACycleMemberThatMayStillCallBreaksIt) {
  EXPECT_FALSE(certain(kPairBarriers, {false, false, true, false, true}).found);
}

TEST(WatchCertainHang, AWaitOnAComputingRankIsNotAHang) {
  // Ranks 0 and 1 wait in an all-reduce on every rank; rank 2 computes (its program so far ended).
  EXPECT_FALSE(certain(R"(ranks 3
set profile = mpi
comm w = all
rank 0 { all_reduce w b }
rank 1 { all_reduce w b }
rank 2 { }
)",
                       {false, false, true})
                   .found);
}

TEST(WatchCertainHang, StandardSendsMayGoEagerlyReceivesMayNot) {
  const char* sends = R"(ranks 2
set profile = mpi
comm w = all
rank 0 { send w 1 b }
rank 1 { send w 0 b }
)";
  EXPECT_FALSE(certain(sends, {false, false}).found);
  const char* receives = R"(ranks 2
set profile = mpi
comm w = all
rank 0 { recv w 1 b }
rank 1 { recv w 0 b }
)";
  const CertainHang h = certain(receives, {false, false});
  ASSERT_TRUE(h.found);
  EXPECT_EQ(h.ranks, (std::vector<int>{0, 1}));
}

TEST(WatchCertainHang, ABroadcastRootMayLeaveItsNonRootMayNot) {
  // The model deadlocks (the mpi profile's broadcast synchronizes), but the root of A may leave at once: not certain.
  EXPECT_FALSE(certain(R"(ranks 2
set profile = mpi
comm A = all
comm B = all
rank 0 { broadcast A x count=1 root=0
 broadcast B x count=1 root=0 }
rank 1 { broadcast B x count=1 root=0
 broadcast A x count=1 root=0 }
)",
                       {false, false})
                   .found);
}

TEST(WatchCertainHang, NcclRegistrationsInOppositeOrders) {
  const CertainHang h = certain(R"(ranks 3
comm A = [0, 1]
comm B = [0, 1]
rank 0 { alloc wa
 alloc wb
 register A wa }
rank 1 { alloc wa
 alloc wb
 register B wb }
rank 2 { }
)",
                                {false, false, true});
  ASSERT_TRUE(h.found);
  EXPECT_EQ(h.ranks, (std::vector<int>{0, 1}));
}

TEST(WatchCertainHang, ASyncHeldByItsStreamWhoseKernelWaitsForABlockedPeer) {
  // Rank 0 sits in cudaStreamSynchronize behind an all-reduce on A that rank 1 never issues: rank 1 sits in a
  // registration on B that waits for rank 0. Host, stream head and host again: a cycle through the device.
  // (A's first all-reduce, completed by both, makes its runtime connect, which blocks the host.)
  const CertainHang h = certain(R"(ranks 2
comm A = [0, 1]
comm B = [0, 1]
rank 0 { alloc b
 all_reduce A b
 sync main
 all_reduce A b
 sync main }
rank 1 { alloc b
 alloc w
 all_reduce A b
 sync main
 register B w }
)",
                                {false, false});
  ASSERT_TRUE(h.found);
  EXPECT_EQ(h.ranks, (std::vector<int>{0, 1}));
}

TEST(WatchCertainHang, AThreadTheModelHoldsBeforeItsLastCallIsNotTheRunsState) {
  // The run's ranks sit in their second registration; the model holds them in the first (as if the run had
  // not completed it): that stuck state is not the run's, so nothing is certain.
  EXPECT_FALSE(certain(R"(ranks 2
comm A = [0, 1]
comm B = [0, 1]
rank 0 { alloc wa
 alloc wb
 register A wa
 register B wb }
rank 1 { alloc wa
 alloc wb
 register B wb
 register A wa }
)",
                       {false, false})
                   .found);
}

TEST(WatchFollower, ReadsWholeLinesAsTheyArriveAndCountsCallsInFlight) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("collmc-follow-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "collmc-trace.h.1.jsonl";
  std::ofstream out(file, std::ios::binary);
  std::ofstream(dir / "job.log") << "not a trace\n";
  collmc::watch::TraceFollower follower(dir.string());
  follower.list_every = 1;
  out << R"({"ev":"process","format":"collmc-mpi-recorder","version":1,"pid":1,"host":"h"})"
      << "\n"
      << R"({"ev":"enter","seq":1,"tid":1,"call":"MPI_Init"})"
      << "\n"
      << R"({"ev":"return","seq":1,"tid":1,"call":"MPI_)" << std::flush;
  auto p = follower.poll();
  EXPECT_EQ(p.lines, 2u);
  EXPECT_EQ(p.entries, 1u);
  EXPECT_EQ(follower.open_calls(), 1);
  out << R"(Init","result":0})"
      << "\n"
      << R"({"ev": "enter", "seq": 2, "tid": 1, "call": "MPI_Barrier"})"
      << "\n"
      << std::flush;
  p = follower.poll();
  EXPECT_EQ(p.lines, 2u);
  EXPECT_EQ(p.returns, 1u);
  EXPECT_EQ(p.entries, 1u);
  EXPECT_EQ(follower.open_calls(), 1);
  const auto streams = follower.snapshot();
  ASSERT_EQ(streams.size(), 1u);  // the log is no trace: left out
  ASSERT_EQ(streams[0].files.size(), 1u);
  EXPECT_EQ(std::count(streams[0].files[0].second.begin(), streams[0].files[0].second.end(), '\n'), 4);
  fs::remove_all(dir);
}

TEST(WatchFlightRecorder, WaitsForTheLastRanksDumpThenWritesTheSummaryAndThePage) {
  namespace fs = std::filesystem;
  const fs::path fixture =
      fs::path(collmc::testing::source_dir()) / "tests/fixtures/traces/gpu/skipped_collective/flight_recorder";
  const fs::path dir = fs::temp_directory_path() / ("collmc-fr-watch-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  EXPECT_FALSE(collmc::watch::scan_flight_recorder_dumps(dir.string(), "fr_timeout_", 0).complete());
  fs::copy_file(fixture / "fr_timeout_0", dir / "fr_timeout_0");
  // A dump still being written: the first half of rank 1's.
  {
    std::ifstream in(fixture / "fr_timeout_1", std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(dir / "fr_timeout_1", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  const auto partial = collmc::watch::scan_flight_recorder_dumps(dir.string(), "fr_timeout_", 0);
  EXPECT_FALSE(partial.complete());
  EXPECT_EQ(partial.dumps.size(), 1u);
  EXPECT_EQ(partial.missing, (std::vector<int>{1}));
  fs::copy_file(fixture / "fr_timeout_1", dir / "fr_timeout_1", fs::copy_options::overwrite_existing);
  const auto whole = collmc::watch::scan_flight_recorder_dumps(dir.string(), "fr_timeout_", 0);
  ASSERT_TRUE(whole.complete()) << whole.waiting_for;
  EXPECT_EQ(whole.world, 2);
  const auto review = collmc::watch::review_flight_recorder_dumps(whole.dumps, dir.string(), 60);
  EXPECT_EQ(review.verdict_exit, 1);
  EXPECT_NE(review.summary.find("rank 1 never did"), std::string::npos) << review.summary;
  EXPECT_NE(review.summary.find("deadlock"), std::string::npos) << review.summary;
  for (const char* f : {"collmc-summary.txt", "collmc-review.html", "collmc-flight-recorder.cmc"})
    EXPECT_TRUE(fs::is_regular_file(dir / f)) << f;
  fs::remove_all(dir);
}

}  // namespace
