// NCCL debug logs (INIT and COLL lines of NCCL 2.28) become scenarios: communicators matched by commId
// across processes, splits by parent/splitCount/color, one group per shared opCount, and bad lines
// reported with file:line:column.
#include <gtest/gtest.h>

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

std::string error_of(const std::string& text) {
  try {
    read_nccl_log_buffer("n.log", text);
  } catch (const TraceInputError& e) {
    return e.what();
  }
  return "";
}

const std::string kInit0 =
    "h:10:10 [0] NCCL INFO ncclCommInitRank comm 0xa0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0xfeed - "
    "Init COMPLETE\n";
const std::string kInit1 =
    "h:11:11 [1] NCCL INFO ncclCommInitRank comm 0xa1 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2000 commId 0xfeed - "
    "Init COMPLETE\n";

TEST(TraceNcclLog, OneFilePerRankAndTheMissingCollective) {
  Trace t = import_traces({fixture("nccl_hang")}, TraceFormat::Auto);
  EXPECT_EQ(t.format, "nccl-log");
  EXPECT_EQ(t.world_size, 2);
  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms[0].id, "commid:9f3b2a1c44e0d1b7");
  EXPECT_EQ(t.comms[0].origin, CommOrigin::Init);
  const auto& calls = t.ranks.at(0).threads.at(0).calls;
  ASSERT_EQ(calls.size(), 3u);  // init, two all-reduces
  EXPECT_EQ(calls[0].kind, CallKind::CommInit);
  EXPECT_EQ(calls[0].state, CallState::Completed);  // START then COMPLETE
  EXPECT_EQ(calls[1].count, 1048576u);
  EXPECT_EQ(calls[1].dtype, "float32");  // ncclFloat32 = 7
  EXPECT_EQ(calls[1].redop, "sum");
  auto summary = summarize(t);
  std::string s;
  for (const auto& l : summary) s += l + "\n";
  EXPECT_NE(s.find("collective #2 on commId 0x9f3b2a1c44e0d1b7"), std::string::npos) << s;
  EXPECT_NE(s.find("rank 0 entered, rank 1 never did"), std::string::npos) << s;
  EXPECT_EQ(verdict_str(emit_scenario(t)), "deadlock");
}

TEST(TraceNcclLog, InterleavedLogWithSplitGroupAndRoot) {
  Trace t = import_traces({fixture("nccl_split_interleaved/nccl_all.log")}, TraceFormat::Auto);
  ASSERT_EQ(t.comms.size(), 2u);
  EXPECT_EQ(t.comms[1].origin, CommOrigin::Split);
  EXPECT_EQ(t.comms[1].parent, "commid:1234abcd");
  EXPECT_EQ(t.comms[1].split_color, 0);
  const auto& calls = t.ranks.at(1).threads.at(0).calls;
  // init, split, all_reduce, group{send, recv}, broadcast, destroy
  ASSERT_EQ(calls.size(), 9u);
  EXPECT_EQ(calls[1].kind, CallKind::CommSplit);
  EXPECT_EQ(calls[1].child_comm, t.comms[1].id);
  EXPECT_EQ(calls[3].kind, CallKind::GroupStart);
  EXPECT_EQ(calls[4].peer, 0);
  EXPECT_EQ(calls[7].root, 1);
  EXPECT_EQ(calls[8].kind, CallKind::CommDestroy);
  std::string scenario = emit_scenario(t);
  EXPECT_NE(scenario.find("split commId_0x1234abcd -> split_1_of_commId_0x1234abcd_color_0"), std::string::npos)
      << scenario;
  EXPECT_EQ(verdict_str(scenario), "safe") << scenario;
}

TEST(TraceNcclLog, AnInitThatNeverCompletedIsWhereTheRankStopped) {
  std::string log = kInit0 + kInit1 +
                    "h:10:10 [0] NCCL INFO ncclCommInitRank comm 0xb0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId "
                    "1000 commId 0xbeef - Init START\n";
  Trace t = read_nccl_log_buffer("n.log", log);
  const auto& calls = t.ranks.at(0).threads.at(0).calls;
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].state, CallState::Started);
  // Rank 1 never joined commId 0xbeef: only rank 0 is a known member, and it waits there.
  std::string s;
  for (const auto& l : summarize(t)) s += l + "\n";
  for (const auto& l : t.notes) s += l + "\n";
  EXPECT_NE(s.find("rank 0 stopped in init"), std::string::npos) << s;
  // Rank 1 is in both comms already, so a rank with no calls is added to stand for the unknown member:
  // the check then shows rank 0 waiting in the init.
  EXPECT_NE(s.find("1 of its 2 members have log lines; rank 2 stand(s) for the others"), std::string::npos) << s;
  EXPECT_EQ(t.world_size, 3);
  EXPECT_EQ(verdict_str(emit_scenario(t)), "deadlock");
}

TEST(TraceNcclLog, BadLinesPointAtFileLineAndColumn) {
  std::string e = error_of(kInit0 +
                           "h:10:10 [0] NCCL INFO AllReduce: opCount zz sendbuff 0x1 recvbuff 0x1 count 4 "
                           "datatype 7 op 0 root 0 comm 0xa0 [nranks=2] stream 0x0\n");
  EXPECT_NE(e.find("n.log:2:"), std::string::npos) << e;
  EXPECT_NE(e.find("expected a number after 'opCount'"), std::string::npos) << e;
  e = error_of(kInit0 +
               "h:10:10 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 4 datatype 7 "
               "op 0 root 0 [nranks=2]\n");
  EXPECT_NE(e.find("expected 'comm 0x<pointer>'"), std::string::npos) << e;
  e = error_of(
      "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0xa0 rank 5 nranks 2 cudaDev 0 busId 1 commId 0x1 - Init "
      "START\n");
  EXPECT_NE(e.find("rank 5 of nranks 2"), std::string::npos) << e;
  e = error_of("just some program output\nno nccl here\n");
  EXPECT_NE(e.find("no NCCL INFO init or collective lines"), std::string::npos) << e;
  // Two processes claiming the same world rank.
  e = error_of(kInit0 +
               "h:12:12 [0] NCCL INFO ncclCommInitRank comm 0xa0 rank 0 nranks 2 cudaDev 0 busId 1 commId "
               "0xfeed - Init COMPLETE\n");
  EXPECT_NE(e.find("are both rank 0"), std::string::npos) << e;
}

// A log where the same collective lines come again and again (what the reader keeps one shape of), a
// communicator destroyed and another created at its address, a group, and a rank that stops short.
std::string repeated_log() {
  std::string log = kInit0 + kInit1;
  auto coll = [](int pid, int op_count, const char* comm, const char* op = "AllReduce", int count = 4) {
    std::ostringstream line;
    line << "h:" << pid << ":" << pid << " [" << pid - 10 << "] NCCL INFO " << op << ": opCount " << std::hex
         << op_count << std::dec << " sendbuff 0x1 recvbuff 0x2 count " << count << " datatype 7 op 0 root 0 comm "
         << comm << " [nranks=2] stream 0x0\n";
    return line.str();
  };
  for (int i = 0; i < 40; ++i) {
    log += coll(10, i, "0xa0");
    log += coll(11, i, "0xa1");
  }
  // Both destroy the comm; a new one (another commId) lands at the same addresses.
  log += "h:10:10 [0] NCCL INFO comm 0xa0 rank 0 nranks 2 cudaDev 0 busId 1000 - Destroy COMPLETE\n";
  log += "h:11:11 [1] NCCL INFO comm 0xa1 rank 1 nranks 2 cudaDev 1 busId 2000 - Destroy COMPLETE\n";
  log +=
      "h:10:10 [0] NCCL INFO ncclCommInitRank comm 0xa0 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId "
      "0xbeef - Init COMPLETE\n";
  log +=
      "h:11:11 [1] NCCL INFO ncclCommInitRank comm 0xa1 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2000 commId "
      "0xbeef - Init COMPLETE\n";
  for (int i = 0; i < 30; ++i) {
    log += coll(10, i, "0xa0");
    if (i < 29) log += coll(11, i, "0xa1");  // rank 1 never makes the last one
    if (i % 10 == 5) {                       // a send and a receive at one opCount: one group
      log += coll(10, i, "0xa0", "Send", 8);
      log += coll(11, i, "0xa1", "Recv", 8);
    }
  }
  return log;
}

// The scenario and every summary line.
std::string as_text(const Trace& t) {
  std::string out = emit_scenario(t);
  for (const auto& line : summarize(t, true)) out += line + "\n";
  return out;
}

TEST(TraceNcclLog, TrimmedAsItReadsIsTrimHistoryOfTheWholeLog) {
  // The reader plans the trim on held calls (held_calls.h) and builds only what it keeps: the same scenario and
  // summary as trim_history on every call.
  std::vector<std::pair<std::string, std::string>> logs = {{"repeated.log", repeated_log()}};
  for (const auto& entry : std::filesystem::recursive_directory_iterator(source_dir() + "/tests/fixtures/traces"))
    if (entry.path().extension() == ".log") {
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      logs.emplace_back(entry.path().filename().string(), text.str());
    }
  ASSERT_GT(logs.size(), 3u);
  size_t trimmed = 0;
  for (const auto& [name, text] : logs) {
    if (!error_of(text).empty()) continue;  // a fixture that is no NCCL log (program output, ...)
    Trace whole = read_nccl_log_buffer(name, text);
    trim_history(whole, false);
    const Trace held = read_nccl_log_buffer(name, text, false);
    EXPECT_EQ(as_text(held), as_text(whole)) << name;
    trimmed += held.dropped.empty() ? 0 : 1;
  }
  EXPECT_GE(trimmed, 1u);
  // The repeated log: the first comm's all-reduces but the last (a log cannot tell a finished call from one
  // only made: the last every member made is kept) and the second's before the group are left out; both
  // comms are in the scenario, the second's calls on it (the pointer was reused), and rank 1 is the one short.
  const Trace held = read_nccl_log_buffer("repeated.log", repeated_log(), false);
  ASSERT_EQ(held.comms.size(), 2u);
  EXPECT_EQ(held.comms[0].dropped_collectives, 39u);
  EXPECT_GT(held.comms[1].dropped_collectives, 0u);
  const auto& last = held.ranks.at(0).threads.at(0).calls.back();
  EXPECT_EQ(last.comm, "commid:beef");
  const std::string log = repeated_log();
  EXPECT_EQ(last.origin,
            "repeated.log:" + std::to_string(std::count(log.begin(), log.end(), '\n')) + " opCount 29 tid 10");
  EXPECT_EQ(verdict_str(emit_scenario(held)), "deadlock");
}

TEST(TraceNcclLog, ARepeatedLineIsCheckedAsTheFirst) {
  // The second line is the first but for its opCount: the reader finds its shape and reads only the opCount,
  // which must be checked as the first line's was (same message, same column).
  const std::string good =
      "h:10:10 [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 4 datatype 7 op 0 root 0 comm "
      "0xa0 [nranks=2] stream 0x0\n";
  const std::string bad =
      "h:10:10 [0] NCCL INFO AllReduce: opCount x1 sendbuff 0x1 recvbuff 0x1 count 4 datatype 7 op 0 root 0 comm "
      "0xa0 [nranks=2] stream 0x0\n";
  const std::string first = error_of(kInit0 + bad), repeated = error_of(kInit0 + good + bad);
  EXPECT_NE(first.find("n.log:2:42: expected a number after 'opCount', got 'x1'"), std::string::npos) << first;
  EXPECT_NE(repeated.find("n.log:3:42: expected a number after 'opCount', got 'x1'"), std::string::npos) << repeated;
}

}  // namespace
}  // namespace collmc::testing

namespace collmc::testing {
namespace {

// NCCL 2.31 logs "Destroy START", "Finalize START" and "Finalize COMPLETE" (src/init.cc): a START without its
// COMPLETE is a teardown that never returned (2.31's barrier), kept as a started call.
TEST(TraceNcclLog, TeardownLinesOf231) {
  const std::string fin0 = "h:10:10 [0] NCCL INFO comm 0xa0 rank 0 nRanks 2 cudaDev 0 busId 1000 commId 0xfeed - ";
  const std::string fin1 = "h:11:11 [1] NCCL INFO comm 0xa1 rank 1 nRanks 2 cudaDev 1 busId 2000 commId 0xfeed - ";
  const std::string log = kInit0 + kInit1 + fin0 + "Finalize START\n" + fin0 + "Finalize COMPLETE\n" + fin0 +
                          "Destroy START\n" + fin0 + "Destroy COMPLETE\n" + fin1 + "Destroy START\n";
  Trace t = read_nccl_log_buffer("n.log", log);
  const auto& r0 = t.ranks.at(0).threads.at(0).calls;
  ASSERT_EQ(r0.size(), 3u);
  EXPECT_EQ(r0[1].kind, CallKind::CommFinalize);
  EXPECT_EQ(r0[1].state, CallState::Completed);
  EXPECT_EQ(r0[2].kind, CallKind::CommDestroy);
  EXPECT_EQ(r0[2].state, CallState::Completed);
  const auto& r1 = t.ranks.at(1).threads.at(0).calls;
  ASSERT_EQ(r1.size(), 2u);
  EXPECT_EQ(r1[1].kind, CallKind::CommDestroy);
  EXPECT_EQ(r1[1].state, CallState::Started);  // never returned
  const std::string scenario = emit_scenario(t);
  EXPECT_NE(scenario.find("finalize"), std::string::npos) << scenario;
  // The eager RMA setup is said in a note.
  Trace eager = read_nccl_log_buffer(
      "n.log", kInit0 + kInit1 + "h:10:10 [0] NCCL INFO NCCL_RMA_EAGER_INIT set by environment to 1.\n");
  std::string notes;
  for (const auto& n : eager.notes) notes += n + "\n";
  EXPECT_NE(notes.find("rma_eager_init = on"), std::string::npos) << notes;
}

}  // namespace
}  // namespace collmc::testing
