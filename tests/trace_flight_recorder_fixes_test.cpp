// Flight Recorder reading as real dumps need it (issue 15): a directory with a log beside the dumps,
// ranks from the dump's own fields, coalesced batches as groups, evidence of a stuck or faulted rank,
// string sequence ids, non-member calls, whole numbers in errors. Small synthetic dumps, written here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "collmc/traces/import.h"
#include "collmc/traces/trace.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using namespace collmc::traces;
using nlohmann::json;
namespace fs = std::filesystem;

std::string synthetic(const std::string& name) { return source_dir() + "/tests/fixtures/traces/synthetic/" + name; }

json entry(int record_id, const std::string& pg, const std::string& name, json seq, const std::string& state) {
  return {{"record_id", record_id},    {"process_group", {pg, pg == "0" ? "default_pg" : "undefined"}},
          {"collective_seq_id", seq},  {"p2p_seq_id", 0},
          {"profiling_name", name},    {"input_sizes", {{4}}},
          {"input_dtypes", {"Float"}}, {"state", state}};
}

json dump(const std::string& ranks, const std::vector<json>& entries) {
  json list = json::array();
  for (const auto& e : entries) list.push_back(e);
  return {{"version", "2.10"},
          {"pg_config", {{"0", {{"name", "0"}, {"desc", "default_pg"}, {"ranks", ranks}}}}},
          {"pg_status", json::object()},
          {"entries", list}};
}

// A fresh directory for this test's dumps.
std::string scratch() {
  std::string dir = "/tmp/collmc-fr-fixes-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                    ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string write(const std::string& dir, const std::string& name, const json& j) {
  std::string path = dir + "/" + name;
  std::ofstream(path) << j.dump();
  return path;
}

TEST(FlightRecorderFixes, ADirectoryImportSkipsAFileThatIsNotADump) {
  Trace t = import_traces({synthetic("fr_dir_with_log")}, TraceFormat::Auto);
  EXPECT_EQ(t.format, "flight-recorder");
  EXPECT_EQ(t.world_size, 2);
  ASSERT_EQ(t.findings.size(), 1u) << joined(t.findings);
  EXPECT_NE(t.findings[0].find("skipped " + synthetic("fr_dir_with_log") + "/fault_injection.log: not a trace"),
            std::string::npos)
      << t.findings[0];
  EXPECT_TRUE(contains(summarize(t), "fault_injection.log"));
  // The same log named on the command line is still an error.
  EXPECT_THROW(import_traces({synthetic("fr_dir_with_log/fault_injection.log")}, TraceFormat::Auto), TraceInputError);
}

TEST(FlightRecorderFixes, RanksComeFromTheDumpsFieldsBeforeFileNames) {
  std::string dir = scratch();
  // File names with no usable number; a `rank` field in one, a send in the other.
  json a = dump("[0, 1]", {entry(0, "0", "nccl:all_reduce", 1, "completed")});
  a["rank"] = 1;
  json b = dump("[0, 1]", {entry(0, "0", "nccl:send 0->1", 1, "completed")});
  write(dir, "dump_a.json", a);
  write(dir, "dump_b.json", b);
  Trace t = import_traces({dir}, TraceFormat::Auto);
  EXPECT_EQ(t.ranks.at(1).source, dir + "/dump_a.json");
  EXPECT_EQ(t.ranks.at(0).source, dir + "/dump_b.json");
  // A field that disagrees with the name wins, and says so.
  fs::remove_all(dir);
  fs::create_directories(dir);
  a["rank"] = 0;
  write(dir, "fr_1.json", a);
  json c = dump("[0, 1]", {entry(0, "0", "nccl:all_reduce", 1, "completed")});
  c["rank"] = 1;  // a two-digit name whose field agrees with no renumbering
  write(dir, "fr_10.json", c);
  t = import_traces({dir}, TraceFormat::Auto);
  EXPECT_EQ(t.ranks.at(0).source, dir + "/fr_1.json");
  EXPECT_EQ(t.ranks.at(1).source, dir + "/fr_10.json");
  EXPECT_TRUE(contains(t.notes, "its fields say rank 0, its file name 1"));
  // Two dumps of one rank: an error naming both files.
  c["rank"] = 0;
  write(dir, "fr_10.json", c);
  try {
    import_traces({dir}, TraceFormat::Auto);
    FAIL() << "two dumps of rank 0 were accepted";
  } catch (const TraceInputError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("fr_1.json"), std::string::npos) << what;
    EXPECT_NE(what.find("fr_10.json"), std::string::npos) << what;
  }
  // A dump nothing identifies, beside another: an error, not a renumbering.
  fs::remove_all(dir);
  fs::create_directories(dir);
  write(dir, "fr_0.json", dump("[0, 1]", {entry(0, "0", "nccl:all_reduce", 1, "completed")}));
  write(dir, "fr_last.json", dump("[0, 1]", {entry(0, "0", "nccl:all_reduce", 1, "completed")}));
  EXPECT_THROW(import_traces({dir}, TraceFormat::Auto), TraceInputError);
  fs::remove_all(dir);
}

TEST(FlightRecorderFixes, CoalescedEndOfBatchMarkersMakeAGroup) {
  std::string dir = scratch();
  for (int r = 0; r < 2; ++r)
    write(dir, "fr_" + std::to_string(r) + ".json",
          dump("[0, 1]",
               {entry(0, "0", "nccl:all_gather", 3, "completed"), entry(1, "0", "nccl:all_gather", 3, "completed"),
                entry(2, "0", "nccl:ALLGATHER_coalesced", 3, "completed"),
                entry(3, "0", "nccl:allreduce_coalesced", 4, "completed")}));
  Trace t = import_traces({dir}, TraceFormat::Auto);
  const auto& calls = t.ranks.at(0).threads.at(0).calls;
  ASSERT_EQ(calls.size(), 5u);
  EXPECT_EQ(calls[0].kind, CallKind::GroupStart);
  EXPECT_EQ(calls[1].kind, CallKind::AllGather);
  EXPECT_EQ(calls[2].kind, CallKind::AllGather);
  EXPECT_EQ(calls[3].kind, CallKind::GroupEnd);
  // allreduce_coalesced with no batch before it is one collective (torch's allreduce_coalesced API).
  EXPECT_EQ(calls[4].kind, CallKind::AllReduce);
  std::string text = emit_scenario(t);
  EXPECT_NE(text.find("group {"), std::string::npos) << text;
  EXPECT_EQ(verdict_of(text), model::Verdict::Safe);
  fs::remove_all(dir);
}

TEST(FlightRecorderFixes, AStuckRankIsReportedAsStuck) {
  std::string dir = scratch();
  // Three ranks: ranks 0 and 2 have 2 uncompleted entries, rank 1 (the faulted one) 14, and its
  // pg_status lags by 12.
  for (int r = 0; r < 3; ++r) {
    std::vector<json> entries;
    int open = r == 1 ? 14 : 2;
    for (int k = 0; k < 20; ++k)
      entries.push_back(entry(k, "0", "nccl:all_reduce", k + 1,
                              k >= 20 - open ? (k == 20 - open ? "started" : "scheduled") : "completed"));
    json d = dump("[0, 1, 2]", entries);
    d["pg_status"] = {{"0",
                       {{"last_enqueued_collective", "20"},
                        {"last_started_collective", "-1"},
                        {"last_completed_collective", std::to_string(20 - open)}}}};
    write(dir, "fr_" + std::to_string(r) + ".json", d);
  }
  Trace t = import_traces({dir}, TraceFormat::Auto);
  auto lines = summarize(t);
  EXPECT_TRUE(
      contains(lines, "rank 1 looks stuck or faulted: 14 entries never completed, against 2 on the other ranks"))
      << joined(lines);
  EXPECT_TRUE(
      contains(lines, "rank 1 lags on pg 0: its last completed collective is #6, another rank's #18 (12 behind"))
      << joined(lines);
  EXPECT_FALSE(contains(lines, "rank 0 looks stuck")) << joined(lines);
  fs::remove_all(dir);
}

TEST(FlightRecorderFixes, StringSequenceIdsAreAccepted) {
  std::string dir = scratch();
  for (int r = 0; r < 2; ++r) {
    json e0 = entry(0, "0", "nccl:all_reduce", "1", "completed");
    e0["record_id"] = "0";
    write(dir, "fr_" + std::to_string(r) + ".json",
          dump("[0, 1]", {e0, entry(1, "0", "nccl:all_reduce", "2", r == 0 ? "started" : "completed")}));
  }
  ImportOptions keep;  // every entry, as read (the import leaves out completed history by default)
  keep.full_history = true;
  Trace t = import_traces({dir}, TraceFormat::Auto, keep);
  ASSERT_EQ(t.ranks.at(0).threads.at(0).calls.size(), 2u);
  EXPECT_EQ(t.ranks.at(0).threads.at(0).calls[1].state, CallState::Started);
  // Not a number: an error that quotes it.
  write(dir, "fr_1.json", dump("[0, 1]", {entry(0, "0", "nccl:all_reduce", "one", "completed")}));
  try {
    import_traces({dir}, TraceFormat::Auto);
    FAIL();
  } catch (const TraceInputError& e) {
    EXPECT_NE(std::string(e.what()).find("\"one\""), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(FlightRecorderFixes, ACallOnAGroupThatExcludesTheRankIsFlagged) {
  std::string dir = scratch();
  json d0 = dump("[0, 1]", {entry(0, "0", "nccl:all_reduce", 1, "completed")});
  d0["pg_config"]["5"] = {{"name", "5"}, {"desc", "ep"}, {"ranks", "[1, 2]"}};
  d0["entries"].push_back(entry(1, "5", "nccl:all_reduce", 1, "started"));
  d0["rank"] = 0;
  write(dir, "fr_0.json", d0);
  write(dir, "fr_1.json", dump("[0, 1]", {entry(0, "0", "nccl:all_reduce", 1, "completed")}));
  Trace t = import_traces({dir}, TraceFormat::Auto);
  EXPECT_TRUE(contains(t.findings, "rank 0 calls on pg 5 (1 entry) although its pg_config lists the group without it"))
      << joined(t.findings);
  fs::remove_all(dir);
}

TEST(FlightRecorderFixes, NumbersInErrorsArePrintedWhole) {
  std::string dir = scratch();
  write(dir, "fr_0.json", dump("[0, 2147483647]", {entry(0, "0", "nccl:all_reduce", 1, "completed")}));
  try {
    import_traces({dir}, TraceFormat::Auto);
    FAIL();
  } catch (const TraceInputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2147483647 is out of range"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace collmc::testing
