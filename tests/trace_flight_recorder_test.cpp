// Flight Recorder dumps become scenarios whose check agrees with what happened: the rank that skipped
// a collective shows as missing and the check finds the hang; same-order groups are safe.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collmc/traces/import.h"
#include "collmc/traces/trace.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using namespace collmc::traces;

std::string fixture(const std::string& name) { return source_dir() + "/tests/fixtures/traces/synthetic/" + name; }

// These tests look at how every entry is read: they keep the history the import leaves out by default
// (issue 25, docs/TRACES.md "What the import keeps").
Trace import_all(const std::vector<std::string>& paths) {
  ImportOptions keep;
  keep.full_history = true;
  return import_traces(paths, TraceFormat::Auto, keep);
}

// The fast readers (simdjson On-Demand for JSON, the pass over torch's pickle opcodes) read every dump of the
// fixtures (torch's own JSON and pickles among them) exactly as the tree reader does: the same scenario and
// summary, or the same error.
TEST(TraceFlightRecorder, TheFastReadersReadEveryFixtureAsTheTreeReaderDoes) {
  namespace fs = std::filesystem;
  int dumps = 0;
  for (const auto& entry : fs::recursive_directory_iterator(source_dir() + "/tests/fixtures/traces")) {
    const std::string path = entry.path().string();
    if (!entry.is_regular_file() ||
        (path.find("flight_recorder") == std::string::npos && path.find("/synthetic/fr_") == std::string::npos))
      continue;
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    auto read = [&](bool tree_only, bool full) {
      try {
        Trace t = read_flight_recorder_buffer(entry.path().filename().string(), bytes.str(), full, tree_only);
        std::string out = emit_scenario(t);
        for (const auto& line : summarize(t, true)) out += line + "\n";
        return out;
      } catch (const TraceInputError& e) {
        return std::string("error: ") + e.what();
      }
    };
    for (bool full : {true, false}) EXPECT_EQ(read(false, full), read(true, full)) << path;
    ++dumps;
  }
  EXPECT_GE(dumps, 20);
}

TEST(TraceFlightRecorder, ARankThatSkippedACollectiveIsMissingAndTheCheckFindsTheHang) {
  Trace t = import_all({fixture("fr_hang")});
  EXPECT_EQ(t.format, "flight-recorder");
  EXPECT_EQ(t.world_size, 2);
  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms[0].label, "pg 0 (default_pg)");
  EXPECT_EQ(t.comms[0].members, (std::map<int, int>{{0, 0}, {1, 1}}));
  const auto& calls0 = t.ranks.at(0).threads.at(0).calls;
  ASSERT_EQ(calls0.size(), 2u);
  EXPECT_EQ(calls0[0].state, CallState::Completed);
  EXPECT_EQ(calls0[1].state, CallState::Started);
  EXPECT_EQ(calls0[1].kind, CallKind::AllReduce);
  EXPECT_EQ(calls0[1].count, 1024u);
  EXPECT_EQ(calls0[1].dtype, "float32");
  auto summary = summarize(t);
  EXPECT_TRUE(contains(summary, "collective #2 on pg 0 (default_pg)")) << joined(summary);
  EXPECT_TRUE(contains(summary, "rank 0 entered, rank 1 never did")) << joined(summary);
  EXPECT_TRUE(contains(summary, "rank 0 stopped in all_reduce")) << joined(summary);
  std::string scenario = emit_scenario(t);
  EXPECT_NE(scenario.find("rank 0 stopped here"), std::string::npos) << scenario;
  EXPECT_EQ(verdict_str(scenario), "deadlock") << scenario;
}

TEST(TraceFlightRecorder, OppositeOrderOnTwoGroupsIsADeadlockSameOrderIsSafe) {
  Trace opposite = import_all({fixture("fr_opposite")});
  EXPECT_EQ(opposite.comms.size(), 3u);
  EXPECT_EQ(verdict_str(emit_scenario(opposite)), "deadlock");
  // The JSON dumps of the same groups in one order, with a barrier on the default group.
  Trace same = import_all({fixture("fr_same_json/fr_0.json"), fixture("fr_same_json/fr_1.json")});
  EXPECT_EQ(same.ranks.at(1).threads.at(0).calls.at(2).kind, CallKind::Barrier);
  std::string scenario = emit_scenario(same);
  EXPECT_EQ(verdict_str(scenario), "safe") << scenario;
  // Each process group runs on its own stream, as ProcessGroupNCCL does.
  EXPECT_NE(scenario.find("on pg_1"), std::string::npos);
  EXPECT_NE(scenario.find("on pg_2"), std::string::npos);
}

TEST(TraceFlightRecorder, ADroppedRingBufferAndAMissingDumpAreSaidAndLinedUp) {
  Trace t = import_traces({fixture("fr_ring")}, TraceFormat::Auto);
  EXPECT_EQ(t.world_size, 3);  // pg_config names rank 2, which left no dump
  EXPECT_FALSE(t.ranks.at(2).present);
  ASSERT_FALSE(t.ranks.at(0).notes.empty());
  EXPECT_NE(t.ranks.at(0).notes[0].find("dropped the 2 oldest entries"), std::string::npos);
  std::string notes = joined(t.notes);
  EXPECT_NE(notes.find("before #3 are left out on every rank"), std::string::npos) << notes;
  EXPECT_NE(notes.find("rank 2 has no Flight Recorder dump"), std::string::npos) << notes;
  // Both remaining ranks start at collective #3.
  EXPECT_EQ(t.ranks.at(0).threads.at(0).calls.size(), 2u);
  EXPECT_EQ(t.ranks.at(1).threads.at(0).calls.size(), 2u);
  EXPECT_TRUE(contains(summarize(t), "rank 2 left no trace"));
  // Rank 2's peers wait for it: the check reports the hang it would have caused.
  EXPECT_EQ(verdict_str(emit_scenario(t)), "deadlock");
}

TEST(TraceFlightRecorder, CoalescedSendRecvBecomeOneGroup) {
  Trace t = import_all({fixture("fr_p2p")});
  const auto& calls = t.ranks.at(1).threads.at(0).calls;
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls[0].kind, CallKind::GroupStart);
  EXPECT_EQ(calls[1].kind, CallKind::Send);
  EXPECT_EQ(calls[1].peer, 0);
  EXPECT_EQ(calls[2].kind, CallKind::Recv);
  EXPECT_EQ(calls[3].kind, CallKind::GroupEnd);
  EXPECT_EQ(calls[4].dtype, "bfloat16");
  std::string scenario = emit_scenario(t);
  EXPECT_NE(scenario.find("group {"), std::string::npos);
  EXPECT_EQ(verdict_str(scenario), "safe") << scenario;
}

TEST(TraceFlightRecorder, BadDumpsNameTheFieldThatIsWrong) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      read_flight_recorder_buffer("d.json", text);
    } catch (const TraceInputError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of(R"({"version": "3.0"})").find("version \"3.0\""), std::string::npos);
  EXPECT_NE(error_of(R"({"pg_config": {}})").find("version: missing"), std::string::npos);
  EXPECT_NE(error_of("{\"version\": \"2.10\",\n \"entries\": [}").find("d.json:2:"), std::string::npos);
  const std::string cfg = R"("version": "2.10", "pg_config": {"0": {"name": "0", "desc": "d", "ranks": "[0, 1]"}})";
  EXPECT_NE(error_of("{" + cfg + R"(, "entries": [{"record_id": 0}]})").find("entries[0].profiling_name"),
            std::string::npos);
  EXPECT_NE(
      error_of("{" + cfg +
               R"(, "entries": [{"record_id": 0, "profiling_name": "nccl:all_reduce", "process_group": ["7", "x"]}]})")
          .find("'7' is not in pg_config"),
      std::string::npos);
  EXPECT_NE(
      error_of("{" + cfg +
               R"(, "entries": [{"record_id": 0, "profiling_name": "nccl:send 0->5", "process_group": ["0", "d"]}]})")
          .find("a group rank is outside"),
      std::string::npos);
  EXPECT_NE(error_of(R"({"version": "2.10", "pg_config": {"0": {"ranks": "[0, x]"}}})").find("expected a rank number"),
            std::string::npos);
  EXPECT_NE(error_of("hello").find("not a Flight Recorder dump"), std::string::npos);
  // A number no double holds (found by fuzzing: nlohmann throws out_of_range, not parse_error).
  EXPECT_NE(error_of(R"({"version": 2E34287117817})").find("number overflow"), std::string::npos);
}

}  // namespace
}  // namespace collmc::testing
