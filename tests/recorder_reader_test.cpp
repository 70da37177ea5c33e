// The recorder-trace reader: lines (errors with file:line:col, truncated tails, exact round trip) and the
// Trace it builds (communicators matched across processes, buffers named, calls in order, states), checked
// end to end on traces that the recorder wrote for a two-rank program on the fake NCCL.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "collmc/traces/recorder_reader.h"
#include "collmc/traces/torch_shim_reader.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using collmc::traces::CallKind;
using collmc::traces::CallState;
using collmc::traces::CommOrigin;
using collmc::traces::emit_scenario;
using collmc::traces::parse_recorder_file;
using collmc::traces::read_recorder_buffers;
using collmc::traces::read_recorder_traces;
using collmc::traces::Trace;
using collmc::traces::TraceInputError;
using collmc::traces::write_recorder_file;

const std::string kHeader =
    R"({"ev":"process","format":"collmc-recorder","version":1,"pid":10,"ppid":1,"host":"h","exe":"/bin/x",)"
    R"("t_mono_ns":1,"t_wall_ns":2,"env_rank":-1,"env_local_rank":-1,"env_world_size":-1})"
    "\n";

std::string enter(int seq, const std::string& call, const std::string& args = "", int tid = 10) {
  return R"({"ev":"enter","seq":)" + std::to_string(seq) + R"(,"tid":)" + std::to_string(tid) +
         R"(,"t_mono_ns":5,"t_wall_ns":6,"call":")" + call + "\"" + (args.empty() ? "" : "," + args) + "}\n";
}
std::string ret(int seq, const std::string& call, const std::string& outs = "", int result = 0, int tid = 10) {
  return R"({"ev":"return","seq":)" + std::to_string(seq) + R"(,"tid":)" + std::to_string(tid) +
         R"(,"t_mono_ns":7,"t_wall_ns":8,"call":")" + call + R"(","result":)" + std::to_string(result) +
         (outs.empty() ? "" : "," + outs) + "}\n";
}

// The error a bad file gives: "file:line:col: message".
std::string error_of(const std::string& text) {
  try {
    read_recorder_buffers({{"t.jsonl", text}});
  } catch (const TraceInputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RecorderReader, BadLinesSayWhereAndWhat) {
  const std::string init = enter(1, "ncclCommInitRank", R"("uid":"0x1","rank":0,"nranks":1,"blocking":-1)");
  EXPECT_EQ(error_of(""), "t.jsonl: the file holds no event: expected a recorder trace");
  EXPECT_EQ(error_of(init), "t.jsonl:1:1: expected a \"process\" line first (a collmc recorder trace)");
  EXPECT_EQ(error_of(kHeader + "\n" + init), "t.jsonl:2:1: expected a JSON object, found an empty line");
  EXPECT_NE(error_of(kHeader + "{\"ev\":\"enter\",\"seq\":1,\n").find("t.jsonl:2:"), std::string::npos);
  EXPECT_EQ(error_of(kHeader + R"({"ev":"enter","seq":1,"call":"x"})" + "\n"),
            "t.jsonl:2:1: expected a \"tid\" member (an integer)");
  EXPECT_EQ(error_of(kHeader + R"({"ev":"enter","seq":-1,"tid":1,"call":"x"})" + "\n"),
            "t.jsonl:2:15: expected \"seq\" to be a non-negative integer");
  EXPECT_EQ(error_of(kHeader + R"({"ev":"enter","seq":1,"tid":1,"call":{"a":1}})" + "\n"),
            "t.jsonl:2:38: expected one flat JSON object per line (no arrays or nesting)");
  EXPECT_EQ(error_of(kHeader + R"({"ev":"leave","seq":1,"tid":1,"call":"x"})" + "\n"),
            "t.jsonl:2:2: expected \"ev\" to be \"process\", \"enter\", \"return\", \"access\" or \"omp\"");
  EXPECT_EQ(error_of(kHeader + ret(1, "ncclGroupStart")),
            "t.jsonl:2:1: a return of seq 1 with no open entry before it");
  EXPECT_EQ(error_of(kHeader + enter(1, "ncclGroupStart") + enter(1, "ncclGroupEnd")),
            "t.jsonl:3:1: event seq 1 entered twice");
  std::string v2 = kHeader;
  v2.replace(v2.find("\"version\":1"), 11, "\"version\":2");
  EXPECT_EQ(error_of(v2), "t.jsonl:1:44: this collmc reads recorder format version 1");
  // A field the call needs, missing or of the wrong form.
  EXPECT_EQ(error_of(kHeader + enter(1, "ncclCommInitRank", R"("rank":0,"nranks":1)")),
            "t.jsonl:2:1: expected \"uid\" (a string)");
  EXPECT_EQ(error_of(kHeader + init + ret(1, "ncclCommInitRank", R"("comm":"0xZZ")")),
            "t.jsonl:3:1: expected \"comm\" to be a lowercase hex string \"0x...\"");
  // A number too large for any type: an error, not an exception of the JSON library.
  EXPECT_NE(error_of(kHeader + R"({"ev":"enter","seq":1e4001,"tid":1,"call":"x"})" + "\n")
                .find("t.jsonl:2:1: expected a JSON object: "),
            std::string::npos);
  // Deep nesting is refused at once, not parsed.
  EXPECT_NE(error_of(kHeader + std::string(100000, '[') + "\n").find("t.jsonl:2:1: expected one flat JSON object"),
            std::string::npos);
}

TEST(RecorderReader, RefusesAWorldTooLargeToCheck) {
  const std::string text = kHeader +
                           enter(1, "ncclCommInitRank", R"("uid":"0xab","rank":0,"nranks":1000000,"blocking":-1)") +
                           ret(1, "ncclCommInitRank", R"("comm":"0x100")");
  EXPECT_EQ(error_of(text), "t.jsonl: communicator uid:ab has 1000000 ranks: more than the 65536 a scenario can have");
}

// Up to 65,536 ranks, as the scenario language and the other readers allow (the reader stopped at 4,096).
TEST(RecorderReader, TakesAWorldOfMoreThan4096Ranks) {
  const std::string text = kHeader +
                           enter(1, "ncclCommInitRank", R"("uid":"0xab","rank":0,"nranks":65536,"blocking":-1)") +
                           ret(1, "ncclCommInitRank", R"("comm":"0x100")");
  Trace t = read_recorder_buffers({{"t.jsonl", text}});
  EXPECT_EQ(t.world_size, 65536);
  ASSERT_EQ(t.comms.size(), 1u);
  EXPECT_EQ(t.comms[0].size, 65536);
}

TEST(RecorderReader, ACutLastLineIsAcceptedAndSaidSo) {
  const std::string text =
      kHeader + enter(1, "ncclCommInitRank", R"("uid":"0xab","rank":0,"nranks":2,"blocking":-1)") +
      ret(1, "ncclCommInitRank", R"("comm":"0x100")") +
      enter(
          2, "ncclAllReduce",
          R"("comm":"0x100","sendbuff":"0x0","recvbuff":"0x0","count":1,"dtype":"float32","op":"sum","stream":"0x0")") +
      R"({"ev":"return","seq":2,"tid":10,"t_mo)";
  auto file = parse_recorder_file("cut.jsonl", text);
  EXPECT_TRUE(file.truncated_tail);
  EXPECT_EQ(file.lines.size(), 4u);
  Trace t = read_recorder_buffers({{"cut.jsonl", text}});
  ASSERT_TRUE(t.ranks.count(0));
  const auto& calls = t.ranks[0].threads.at(0).calls;
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].kind, CallKind::AllReduce);
  EXPECT_EQ(calls[1].state, CallState::Started);  // its return was the cut line
  bool said = false;
  for (const auto& n : t.notes) said = said || n.find("cut.jsonl: the last line was cut short") != std::string::npos;
  EXPECT_TRUE(said);
  // A second rank that the communicator has but the traces do not: present = false, and a note.
  EXPECT_EQ(t.world_size, 2);
  EXPECT_FALSE(t.ranks.at(1).present);
}

TEST(RecorderReader, RoundTripIsByteForByte) {
  const std::string text =
      kHeader + enter(1, "ncclGroupStart", "", 11) + enter(2, "cudaMalloc", R"("size":4096)") +
      ret(2, "cudaMalloc", R"("ptr":"0x7f0000001000")") + ret(1, "ncclGroupStart", "", 0, 11) +
      enter(3, "ncclCommInitRankConfig", R"("uid":"0xfedcba9876543210","rank":3,"nranks":4,"blocking":0)") +
      ret(3, "ncclCommInitRankConfig", R"("comm":"0x55d0c0de")", 7) +
      R"({"ev":"process","format":"collmc-recorder","version":1,"pid":11,"ppid":10,"host":"a \"quoted\"\\name\t\u0001","exe":"","t_mono_ns":18446744073709551615,"t_wall_ns":0,"env_rank":0,"env_local_rank":-1,"env_world_size":2})"
      "\n";
  auto file = parse_recorder_file("rt.jsonl", text);
  EXPECT_EQ(write_recorder_file(file), text);
}

// --- end to end: the recorder on a two-rank program (fake NCCL), read back, emitted, checked ----------

#ifdef COLLMC_RECORDER_SO

// Records ranks 0 and 1 of the driver's program into one directory; returns the trace files.
std::vector<std::string> record_two_ranks(const std::string& name, const std::string& order, bool with_rank_env) {
  const std::string dir = collmc::testing::fresh_scratch_dir(name);
  for (int r = 0; r < 2; ++r) {
    std::string out;
    std::string env = "COLLMC_TRACE_DIR='" + dir + "' LD_PRELOAD='" + COLLMC_RECORDER_SO + "' ";
    if (with_rank_env) env += "RANK=" + std::to_string(r) + " WORLD_SIZE=2 ";
    EXPECT_EQ(collmc::testing::run_command(env + COLLMC_RECORD_DRIVER + " program " + std::to_string(r) + " 2 " + order,
                                           &out),
              0)
        << out;
  }
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files.size(), 2u);
  return files;
}

TEST(RecorderReader, MatchesCommunicatorsAcrossProcessesAndNamesBuffers) {
  Trace t = read_recorder_traces(record_two_ranks("same", "same", true));
  EXPECT_EQ(t.format, "recorder");
  EXPECT_EQ(t.world_size, 2);
  // One init comm over both ranks and two splits of it, the same ids in both processes.
  ASSERT_EQ(t.comms.size(), 3u);
  const auto& world = t.comms[0];
  EXPECT_EQ(world.origin, CommOrigin::Init);
  EXPECT_EQ(world.id.rfind("uid:", 0), 0u);
  EXPECT_EQ(world.label, "world");
  EXPECT_EQ(world.size, 2);
  EXPECT_EQ(world.members, (std::map<int, int>{{0, 0}, {1, 1}}));
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(t.comms[i].origin, CommOrigin::Split);
    EXPECT_EQ(t.comms[i].parent, world.id);
    EXPECT_EQ(t.comms[i].split_color, 0);
    EXPECT_EQ(t.comms[i].members.size(), 2u);
  }
  EXPECT_NE(t.comms[1].id, t.comms[2].id);  // two splits of one parent: told apart by their number
  for (int r = 0; r < 2; ++r) {
    const auto& rt = t.ranks.at(r);
    ASSERT_TRUE(rt.present);
    ASSERT_EQ(rt.threads.size(), 1u);
    const auto& calls = rt.threads[0].calls;
    std::vector<CallKind> kinds;
    for (const auto& c : calls) kinds.push_back(c.kind);
    const std::vector<CallKind> expected = {CallKind::CommInit,
                                            CallKind::CommSplit,
                                            CallKind::CommSplit,
                                            CallKind::MemAlloc,
                                            CallKind::WindowRegister,
                                            CallKind::WindowRegister,
                                            CallKind::AllReduce,
                                            CallKind::StreamSync,
                                            CallKind::CudaMalloc,
                                            CallKind::GroupStart,
                                            CallKind::Send,
                                            CallKind::Recv,
                                            CallKind::GroupEnd,
                                            CallKind::AllGather,
                                            CallKind::ReduceScatter,
                                            CallKind::Broadcast,
                                            CallKind::Reduce,
                                            CallKind::AllToAll,
                                            CallKind::LocalRegister,
                                            CallKind::LocalDeregister,
                                            CallKind::DeviceSync,
                                            CallKind::CudaFree,
                                            CallKind::WindowDeregister,
                                            CallKind::WindowDeregister,
                                            CallKind::MemFree,
                                            CallKind::CommFinalize,
                                            CallKind::CommDestroy,
                                            CallKind::CommAbort,
                                            CallKind::CommDestroy};
    EXPECT_EQ(kinds, expected) << "rank " << r;
    for (const auto& c : calls) EXPECT_EQ(c.state, CallState::Completed);
    // The pool: allocated, registered on both split comms, all-reduced, deregistered and freed by one name.
    const std::string pool = calls[3].buffer;
    EXPECT_EQ(pool.rfind("buf_", 0), 0u);
    EXPECT_EQ(calls[3].bytes, 1u << 20);
    EXPECT_EQ(calls[4].buffer, pool);
    EXPECT_EQ(calls[4].comm, t.comms[1].id);
    EXPECT_TRUE(calls[4].symmetric);
    EXPECT_EQ(calls[5].comm, t.comms[2].id);
    EXPECT_EQ(calls[6].buffer, pool);
    EXPECT_EQ(calls[6].dtype, "bfloat16");
    EXPECT_EQ(calls[6].redop, "sum");
    EXPECT_EQ(calls[6].count, 1024u);
    EXPECT_EQ(calls[6].stream, "stream1");
    EXPECT_EQ(calls[7].stream, "stream1");  // the sync names the same stream
    EXPECT_EQ(calls[22].buffer, pool);
    EXPECT_EQ(calls[24].buffer, pool);
    // Peers and roots are world ranks.
    EXPECT_EQ(calls[10].peer, 1 - r);
    EXPECT_EQ(calls[11].peer, 1 - r);
    EXPECT_EQ(calls[15].root, 0);
    EXPECT_EQ(calls[21].buffer, calls[8].buffer);  // cudaFree of what cudaMalloc gave
  }
}

TEST(RecorderReader, WorldRanksComeFromTheWorldCommunicatorWithoutRankEnv) {
  Trace t = read_recorder_traces(record_two_ranks("noenv", "same", false));
  EXPECT_EQ(t.world_size, 2);
  EXPECT_EQ(t.comms.at(0).members, (std::map<int, int>{{0, 0}, {1, 1}}));
  bool said = false;
  for (const auto& n : t.notes)
    said = said || n.find("world ranks taken from the ranks in communicator") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(RecorderReader, RecordedProgramsCheckAsWhatTheyDo) {
  // The same registration order on both ranks is safe; opposite orders on two communicators deadlock.
  const std::string same = emit_scenario(read_recorder_traces(record_two_ranks("check-same", "same", true)));
  EXPECT_EQ(collmc::testing::verdict_str(same), "safe") << same;
  const std::string opposite =
      emit_scenario(read_recorder_traces(record_two_ranks("check-opposite", "opposite", true)));
  EXPECT_EQ(collmc::testing::verdict_str(opposite), "deadlock") << opposite;
}

#endif  // COLLMC_RECORDER_SO

// collmc record --hang-after: a run is hung when every process that still runs sits in an open call and
// every process of the world has started.
TEST(RecordedRun, HungOnlyWhenEveryRunningProcessSitsInACallOfAStartedWorld) {
  auto header = [](int pid, int world) {
    std::string h = kHeader;
    h.replace(h.find("\"pid\":10"), 8, "\"pid\":" + std::to_string(pid));
    h.replace(h.find("\"env_world_size\":-1"), 19, "\"env_world_size\":" + std::to_string(world));
    return h;
  };
  auto file = [](const std::string& name, const std::string& text) { return parse_recorder_file(name, text); };
  const auto all_run = [](const std::string&, int64_t) { return true; };
  const std::string in_barrier = enter(1, "ncclCommInitRank") + ret(1, "ncclCommInitRank") + enter(2, "ncclAllReduce");
  const std::string returned = enter(1, "ncclCommInitRank") + ret(1, "ncclCommInitRank");

  auto both_blocked = collmc::traces::judge_recorded_run(
      {file("a", header(11, 2) + in_barrier), file("b", header(12, 2) + in_barrier)}, all_run);
  EXPECT_TRUE(both_blocked.hung);
  EXPECT_EQ(both_blocked.why, "process 11 on h in ncclAllReduce; process 12 on h in ncclAllReduce");

  // One process outside any call: it may still call; not hung.
  auto one_computes = collmc::traces::judge_recorded_run(
      {file("a", header(11, 2) + in_barrier), file("b", header(12, 2) + returned)}, all_run);
  EXPECT_FALSE(one_computes.hung);
  EXPECT_EQ(one_computes.why, "process 12 on h runs outside any recorded call");

  // The same, but that process has ended: the other one waits forever.
  auto one_ended =
      collmc::traces::judge_recorded_run({file("a", header(11, 2) + in_barrier), file("b", header(12, 2) + returned)},
                                         [](const std::string&, int64_t pid) { return pid != 12; });
  EXPECT_TRUE(one_ended.hung);

  // A world of three with two started: the third may still come.
  auto not_all_started = collmc::traces::judge_recorded_run(
      {file("a", header(11, 3) + in_barrier), file("b", header(12, 3) + in_barrier)}, all_run);
  EXPECT_FALSE(not_all_started.hung);
  EXPECT_EQ(not_all_started.why, "2 of the world's 3 processes have written their traces");

  // Every process ended: nothing hangs.
  EXPECT_FALSE(
      collmc::traces::judge_recorded_run({file("a", header(11, 1) + returned)}, [](const std::string&, int64_t) {
        return false;
      }).hung);
}

// --- The fast way (simdjson On-Demand, flat views) against the nlohmann way -----------------------------

std::string read_file_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every recorder trace kept in the tree: the fixtures' .jsonl files, by directory. The torch shim's files beside
// them are another format with its own reader (and its own tests).
std::vector<std::vector<std::pair<std::string, std::string>>> fixture_traces() {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_dir;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(collmc::testing::source_dir()) / "tests/fixtures"))
    if (e.is_regular_file() && e.path().extension() == ".jsonl" &&
        !collmc::traces::is_torch_shim_file(e.path().string()))
      by_dir[e.path().parent_path().string()].emplace_back(e.path().string(), read_file_text(e.path()));
  std::vector<std::vector<std::pair<std::string, std::string>>> out;
  for (auto& [dir, files] : by_dir) {
    std::sort(files.begin(), files.end());
    out.push_back(std::move(files));
  }
  return out;
}

// The scenario and every summary line, or the error: what must not depend on the way lines are read.
std::string read_as_text(const std::vector<std::pair<std::string, std::string>>& files, bool full_history,
                         bool slow_lines_only) {
  try {
    Trace t = read_recorder_buffers(files, full_history, slow_lines_only);
    std::string out = emit_scenario(t);
    for (const auto& line : collmc::traces::summarize(t, true)) out += line + "\n";
    return out;
  } catch (const TraceInputError& e) {
    return std::string("error: ") + e.what();
  }
}

TEST(RecorderReader, FastLinesReadEveryFixtureLineAsParseLineDoes) {
  using collmc::traces::compare_fast_line;
  using collmc::traces::FastLineRead;
  size_t lines = 0;
  for (const auto& files : fixture_traces())
    for (const auto& [name, text] : files) {
      std::istringstream in(text);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n, ++lines)
        // The recorder's own lines are the fast way's: none left to nlohmann, none read otherwise.
        EXPECT_EQ(compare_fast_line(name, n, line), FastLineRead::Same) << name << ":" << n << ": " << line;
    }
  EXPECT_GT(lines, 100u);
  // Lines the fast way leaves to parse_line: anything where simdjson and nlohmann might part.
  const std::string head = R"({"ev":"enter","seq":1,"tid":7,"call":"x")";
  for (const std::string rest :
       {R"(,"a":-0})", R"(,"a":1.5})", R"(,"a":1e3})", R"(,"a":"x\"y"})", R"(,"a":"\u0041"})", R"(,"a":true})",
        R"(,"a":null})", R"(,"a":[1]})", R"(,"a":{}})", R"(,"tid":8})", R"(,"a":18446744073709551616})", "}x", "} {}",
        ",\"a\":\"\xc3\xa9\"}", ",\"a\":\"\t\"}", "", "}\r"})
    EXPECT_EQ(compare_fast_line("t", 1, head + rest), FastLineRead::Fallback) << head + rest;
  // Lines it reads: integers of every sign and width, spaces between tokens, strings with JSON's own marks.
  for (const std::string rest : {R"(,"a":-9223372036854775808,"b":18446744073709551615,"c":0})",
                                 R"( , "a" : "[{,:}]" , "b" : 12 } )", R"(,"":""})"})
    EXPECT_EQ(compare_fast_line("t", 1, head + rest), FastLineRead::Same) << head + rest;
  // A line parse_line refuses (a field of the wrong type) is left to it, for its error.
  EXPECT_EQ(compare_fast_line("t", 1, R"({"ev":"enter","seq":-1,"tid":7,"call":"x"})"), FastLineRead::Fallback);
  EXPECT_EQ(compare_fast_line("t", 1, R"({"ev":"process","format":"collmc-recorder","version":2,"pid":1,"host":"h"})"),
            FastLineRead::Fallback);
}

TEST(RecorderReader, FastAndSlowLinesGiveTheSameTraceOrError) {
  auto all = fixture_traces();
  // The fuzz corpus too: split as fuzz_recorder splits its input, at the first blank line.
  for (const auto& e : fs::directory_iterator(fs::path(collmc::testing::source_dir()) / "fuzz/corpus/recorder")) {
    const std::string text = read_file_text(e.path());
    const size_t cut = text.find("\n\n");
    if (cut == std::string::npos)
      all.push_back({{"p0.jsonl", text}});
    else
      all.push_back({{"p0.jsonl", text.substr(0, cut + 1)}, {"p1.jsonl", text.substr(cut + 2)}});
  }
  ASSERT_GT(all.size(), 100u);
  size_t traces = 0;
  for (const auto& files : all)
    for (bool full : {true, false}) {
      const std::string fast = read_as_text(files, full, false);
      EXPECT_EQ(fast, read_as_text(files, full, true)) << files.front().first;
      traces += fast.starts_with("error: ") ? 0 : 1;
    }
  EXPECT_GT(traces, 10u);
}

TEST(RecorderReader, BadLinesGiveTheSameErrorBothWays) {
  const std::string init = enter(1, "ncclCommInitRank", R"("uid":"0x1","rank":0,"nranks":1,"blocking":-1)");
  const std::string ar =
      R"("comm":"0x100","sendbuff":"0x0","recvbuff":"0x0","count":1,"dtype":"float32","op":"sum","stream":"0x0")";
  for (const std::string& text :
       {kHeader + R"({"ev":"enter","seq":1,"call":"x"})" + "\n",
        kHeader + R"({"ev":"enter","seq":-0,"tid":1,"call":"x"})" + "\n",
        kHeader + R"({"ev":"enter","seq":1.0,"tid":1,"call":"x"})" + "\n",
        kHeader + R"({"ev":"enter","seq":1,"seq":2,"tid":1,"call":"x"})" + "\n",
        kHeader + R"({"ev":"enter","seq":1,"tid":1,"call":{"a":1}})" + "\n",
        kHeader + R"({"ev":"enter","seq":1,"tid":1,"call":"x\u0000"})" + "\n",
        kHeader + "{\"ev\":\"enter\",\"seq\":1,\n", kHeader + init + ret(1, "ncclCommInitRank", R"("comm":"0xZZ")"),
        kHeader + init + ret(1, "ncclCommInitRank", R"("comm":"0x100")") +
            enter(2, "ncclAllReduce", R"("comm":"0x100")"),
        kHeader + init + ret(1, "ncclCommInitRank", R"("comm":"0x100")") + enter(2, "ncclAllReduce", ar) +
            ret(2, "ncclAllReduce", "", 0, 10) + enter(3, "ncclAllReduce", R"("comm":"0x100","count":1.5)"),
        kHeader + init + ret(2, "ncclCommInitRank")}) {
    const std::string fast = read_as_text({{"t.jsonl", text}}, true, false);
    EXPECT_TRUE(fast.starts_with("error: t.jsonl:")) << fast;
    EXPECT_EQ(fast, read_as_text({{"t.jsonl", text}}, true, true));
  }
}

// Files are read in parallel, each through to its calls; the error is still the one a pass over the files in
// order meets first, stage by stage: every file's lines, then every file's entry/return pairs, then every
// process's calls.
TEST(RecorderReader, TheFirstErrorIsThatOfAPassInFileOrder) {
  const std::string init = enter(1, "ncclCommInitRank", R"("uid":"0x1","rank":0,"nranks":1,"blocking":-1)");
  const std::string bad_line = kHeader + "{\"ev\":\n";
  const std::string bad_pair = kHeader + ret(1, "ncclGroupStart");
  const std::string bad_call = kHeader + enter(1, "ncclCommInitRank", R"("rank":0,"nranks":1)");
  auto error_of_files = [](const std::vector<std::pair<std::string, std::string>>& files) {
    try {
      read_recorder_buffers(files);
    } catch (const TraceInputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_TRUE(error_of_files({{"a", bad_pair}, {"b", bad_line}}).starts_with("b:2:"))
      << error_of_files({{"a", bad_pair}, {"b", bad_line}});
  EXPECT_EQ(error_of_files({{"a", bad_call}, {"b", bad_pair}}),
            "b:2:1: a return of seq 1 with no open entry before it");
  EXPECT_EQ(error_of_files({{"a", bad_call}, {"b", bad_call}}), "a:2:1: expected \"uid\" (a string)");
  EXPECT_EQ(error_of_files({{"a", kHeader + init}, {"b", bad_call}}), "b:2:1: expected \"uid\" (a string)");
  // A process after exec in the same file: its calls are read after the first process's.
  EXPECT_EQ(error_of_files({{"a", kHeader + init + bad_call}}), "a:4:1: expected \"uid\" (a string)");
}

// Four ranks, `steps` all-reduces on the world; rank 3 stops in the last one's predecessor on a split.
std::vector<std::pair<std::string, std::string>> four_ranks_one_stuck(int steps) {
  std::vector<std::pair<std::string, std::string>> files;
  for (int r = 0; r < 4; ++r) {
    std::string h = kHeader;
    h.replace(h.find("\"pid\":10"), 8, "\"pid\":" + std::to_string(10 + r));
    h.replace(h.find("\"env_rank\":-1"), 13, "\"env_rank\":" + std::to_string(r));
    const int tid = 10 + r;
    std::string text =
        h +
        enter(1, "ncclCommInitRank", R"("uid":"0xab","rank":)" + std::to_string(r) + R"(,"nranks":4,"blocking":-1)",
              tid) +
        ret(1, "ncclCommInitRank", R"("comm":"0x100")", 0, tid) +
        enter(2, "ncclCommSplit", R"("comm":"0x100","color":)" + std::to_string(r % 2) + R"(,"key":0,"blocking":1)",
              tid) +
        ret(2, "ncclCommSplit", R"("newcomm":"0x200","rank":)" + std::to_string(r / 2) + R"(,"nranks":2)", 0, tid);
    int seq = 3;
    for (int i = 0; i < steps; ++i) {
      const bool on_split = i % 3 == 2;
      const std::string args = std::string(R"("comm":)") + (on_split ? "\"0x200\"" : "\"0x100\"") +
                               R"(,"sendbuff":"0x7000","recvbuff":"0x7000","count":)" + std::to_string(1 + i % 2) +
                               R"(,"dtype":"float32","op":"sum","stream":"0x5")";
      const bool last = i == steps - 1;
      if (last && r == 3) break;  // rank 3 never makes the last all-reduce
      text += enter(
          seq, last ? "ncclBroadcast" : "ncclAllReduce",
          last
              ? R"("comm":"0x100","sendbuff":"0x7000","recvbuff":"0x7000","count":1,"dtype":"float32","root":3,"stream":"0x5")"
              : args,
          tid);
      if (!last) text += ret(seq, "ncclAllReduce", "", 0, tid);
      ++seq;
    }
    files.emplace_back("p" + std::to_string(r) + ".jsonl", text);
  }
  return files;
}

TEST(RecorderReader, TrimmedImportIsTrimHistoryOfTheFullImport) {
  auto all = fixture_traces();
  all.push_back(four_ranks_one_stuck(40));
  size_t trimmed = 0;
  for (const auto& files : all) {
    Trace full = read_recorder_buffers(files, true);
    collmc::traces::trim_history(full, true);
    Trace kept = read_recorder_buffers(files, false);
    EXPECT_EQ(emit_scenario(kept), emit_scenario(full)) << files.front().first;
    EXPECT_EQ(kept.dropped, full.dropped);
    EXPECT_EQ(kept.notes, full.notes);
    EXPECT_EQ(collmc::traces::summarize(kept, true), collmc::traces::summarize(full, true));
    trimmed += kept.dropped.empty() ? 0 : 1;
  }
  EXPECT_GE(trimmed, 1u);  // the four ranks' all-reduces are left out
}

}  // namespace

namespace {

// NCCL 2.31's ncclAllReduceConfig: the recorder writes its config's name (`config`), the import `config=`.
TEST(RecorderReader, PerCollectiveConfigOf231) {
  const std::string init = enter(1, "ncclCommInitRank", R"("uid":"0x1","rank":0,"nranks":1,"blocking":-1)") +
                           ret(1, "ncclCommInitRank", R"("comm":"0x100")");
  const std::string ar =
      R"("comm":"0x100","sendbuff":"0x10","recvbuff":"0x10","count":4,"dtype":"float32","op":"sum","stream":"0x0")";
  const Trace t = read_recorder_buffers(
      {{"t.jsonl", kHeader + init + enter(2, "ncclAllReduceConfig", ar + R"(,"config":"maxctas2")") +
                       ret(2, "ncclAllReduceConfig")}});
  const auto& calls = t.ranks.at(0).threads.at(0).calls;
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1].kind, CallKind::AllReduce);
  EXPECT_EQ(calls[1].coll_config, "maxctas2");
  const std::string scenario = emit_scenario(t);
  EXPECT_NE(scenario.find("config=maxctas2"), std::string::npos) << scenario;
}

}  // namespace
