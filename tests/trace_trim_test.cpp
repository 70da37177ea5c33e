// Keeping what a hang needs (docs/TRACES.md, "What the import keeps"): the scenario with the history no hang
// needs left out checks to the same verdict as the full one, on every trace fixture and on random traces;
// what is left out is said. And an import of a hung run never checks to a plain `safe`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "collmc/traces/import.h"
#include "collmc/traces/trace.h"
#include "test_support.h"
#include "trace_runs.h"

namespace collmc::testing {
namespace {

using namespace collmc::traces;
namespace fs = std::filesystem;

std::string fixtures() { return source_dir() + "/tests/fixtures/traces"; }

// What a check finds, word for word less line numbers (trace_runs.h): a trimmed import must give the full
// history's.
std::string outcome_of(const std::string& scenario) { return check_outcome(scenario); }

// The trace files of one format under `dir` (Flight Recorder fixture folders hold each dump as .json and .pkl).
std::vector<std::vector<std::string>> fixture_imports() {
  std::vector<std::vector<std::string>> out;
  for (const auto& entry : fs::recursive_directory_iterator(fixtures())) {
    if (!entry.is_directory()) continue;
    std::vector<std::string> json, pkl, other;
    for (const auto& f : fs::directory_iterator(entry.path())) {
      if (!f.is_regular_file()) continue;
      const std::string p = f.path().string();
      if (f.path().extension() == ".json") {
        json.push_back(p);
      } else if (f.path().extension() == ".pkl") {
        pkl.push_back(p);
      } else if (f.path().extension() == ".log" || f.path().extension() == ".jsonl") {
        other.push_back(p);
      }
    }
    for (auto* list : {&json, &pkl, &other})
      if (!list->empty()) {
        std::sort(list->begin(), list->end());
        out.push_back(*list);
      }
  }
  return out;
}

TEST(TraceTrim, EveryFixtureChecksToTheSameVerdictTrimmedAndFull) {
  size_t compared = 0, trimmed = 0;
  for (const auto& files : fixture_imports()) {
    Trace full, cut;
    try {
      ImportOptions keep;
      keep.full_history = true;
      full = import_traces(files, TraceFormat::Auto, keep);
      cut = import_traces(files, TraceFormat::Auto);
    } catch (const TraceInputError&) {
      continue;  // a folder of files that are not one import (logs beside dumps, ...)
    }
    const std::string full_text = emit_scenario(full), cut_text = emit_scenario(cut);
    // The same verdict, the same waits, the same slot numbers (issue 31).
    EXPECT_EQ(outcome_of(full_text), outcome_of(cut_text)) << files.front() << "\n" << cut_text;
    ++compared;
    if (!cut.dropped.empty()) {
      ++trimmed;
      auto calls = [](const Trace& t) {
        size_t n = 0;
        for (const auto& [r, rt] : t.ranks)
          for (const auto& th : rt.threads) n += th.calls.size();
        return n;
      };
      EXPECT_LT(calls(cut), calls(full)) << files.front();
      EXPECT_NE(cut_text.find("# dropped: left out "), std::string::npos) << files.front();
    }
  }
  EXPECT_GE(compared, 15u);
  EXPECT_GE(trimmed, 5u);  // the fixtures have completed history before their hangs
}

// A random run: comms over random members, rounds of collectives (each round one comm, every member), then
// one rank stops early; the members of its next collective wait in it (started), and so do the ranks that
// need one of those. Some traces also get a rank that calls another kind at one position (a mismatch).
Trace random_run(std::mt19937& rng) {
  std::uniform_int_distribution<int> world_d(2, 5);
  Trace t;
  t.format = "recorder";
  t.world_size = world_d(rng);
  const int ncomms = std::uniform_int_distribution<int>(1, 3)(rng);
  for (int c = 0; c < ncomms; ++c) {
    Communicator comm;
    comm.id = "c" + std::to_string(c);
    comm.label = "c" + std::to_string(c);
    for (int r = 0; r < t.world_size; ++r)
      if (c == 0 || rng() % 3 != 0) comm.members[r] = static_cast<int>(comm.members.size());
    if (comm.members.size() < 2) comm.members = {{0, 0}, {1, 1}};
    comm.size = static_cast<int>(comm.members.size());
    t.comms.push_back(comm);
  }
  for (int r = 0; r < t.world_size; ++r) {
    t.ranks[r].rank = r;
    t.ranks[r].threads.push_back({"main", {}});
  }
  const int rounds = std::uniform_int_distribution<int>(2, 12)(rng);
  const CallKind kinds[] = {CallKind::AllReduce, CallKind::AllGather, CallKind::Barrier};
  for (int k = 0; k < rounds; ++k) {
    const auto& comm = t.comms[rng() % t.comms.size()];
    const CallKind kind = kinds[rng() % 3];
    for (const auto& [g, local] : comm.members) {
      Call c;
      c.kind = kind;
      c.comm = comm.id;
      c.count = 16;
      t.ranks[g].threads[0].calls.push_back(c);
    }
  }
  if (rng() % 4 == 0) {  // a mismatch somewhere
    auto& calls = t.ranks[static_cast<int>(rng() % t.world_size)].threads[0].calls;
    if (!calls.empty()) calls[rng() % calls.size()].kind = CallKind::Broadcast;
  }
  // One rank stops after a random number of its calls; the calls from where each rank could not go on are
  // marked started (the first) and scheduled (the rest), as a Flight Recorder dump shows them.
  const int stopper = static_cast<int>(rng() % t.world_size);
  auto& mine = t.ranks[stopper].threads[0].calls;
  mine.resize(mine.size() - std::min<size_t>(mine.size(), rng() % 3));
  for (int r = 0; r < t.world_size; ++r) {
    if (r == stopper) continue;
    auto& calls = t.ranks[r].threads[0].calls;
    if (calls.empty() || rng() % 2 == 0) continue;
    const size_t from = rng() % calls.size();
    for (size_t i = from; i < calls.size(); ++i) calls[i].state = i == from ? CallState::Started : CallState::Scheduled;
  }
  return t;
}

TEST(TraceTrim, RandomRunsCheckToTheSameVerdictTrimmedAndFull) {
  std::mt19937 rng(25);
  size_t trimmed = 0;
  for (int i = 0; i < 300; ++i) {
    Trace full = random_run(rng);
    Trace cut = full;
    trim_history(cut, i % 2 == 0);
    if (!cut.dropped.empty()) ++trimmed;
    const std::string full_text = emit_scenario(full), cut_text = emit_scenario(cut);
    ASSERT_EQ(outcome_of(full_text), outcome_of(cut_text)) << "case " << i << "\nfull:\n"
                                                           << full_text << "\ntrimmed:\n"
                                                           << cut_text;
  }
  EXPECT_GE(trimmed, 50u);
}

// Issue 31, the review's N1: the GPU fixture cut after its cudaDeviceSynchronize, then a warm destroy per rank
// in opposite orders (rank 0 destroys its first split, rank 1 its second), which hangs on H200s. The trim left
// out the all-reduces that made both comms warm and answered `safe`; the history it leaves behind keeps them
// warm: deadlock in destroy, trimmed as in full.
TEST(TraceTrim, AWarmCrossOrderDestroyStaysADeadlockTrimmed) {
  const std::string src = fixtures() + "/gpu/skipped_collective/recorder/";
  const std::string dir = fresh_scratch_dir("n1_destroy");
  auto cut_file = [&](const std::string& name, int lines, const std::string& last) {
    std::ifstream in(src + name);
    std::ofstream out(dir + "/" + name);
    std::string line;
    for (int i = 0; i < lines && std::getline(in, line); ++i) out << line << "\n";
    out << last << "\n";
  };
  cut_file("collmc-trace.vm.1390.jsonl", 19,
           R"({"ev":"enter","seq":10,"tid":1390,"t_mono_ns":234704306500,"t_wall_ns":1795987904374375500,)"
           R"("call":"ncclCommDestroy","comm":"0x1040c7a0"})");
  cut_file("collmc-trace.vm.1391.jsonl", 17,
           R"({"ev":"enter","seq":9,"tid":1391,"t_mono_ns":234704306500,"t_wall_ns":1795987904374375500,)"
           R"("call":"ncclCommDestroy","comm":"0x13e0a080"})");
  const std::vector<std::string> files = {dir + "/collmc-trace.vm.1390.jsonl", dir + "/collmc-trace.vm.1391.jsonl"};
  ImportOptions keep;
  keep.full_history = true;
  const std::string full = emit_scenario(import_traces(files, TraceFormat::Auto, keep));
  const Trace trimmed = import_traces(files, TraceFormat::Auto);
  ASSERT_FALSE(trimmed.dropped.empty());  // it still leaves the all-reduces out ...
  const std::string cut = emit_scenario(trimmed);
  EXPECT_NE(cut.find(" connected  #"), std::string::npos) << cut;  // ... and says what they left behind
  const std::string want = outcome_of(full);
  EXPECT_EQ(want.substr(0, want.find('\n')), "deadlock") << want;
  EXPECT_NE(want.find("destroy"), std::string::npos) << want;
  EXPECT_EQ(outcome_of(cut), want) << cut;
}

// The review's N2: the README's fixture, imported by default, blamed the connects of both splits (a cycle that
// never existed) with device slot 0 where the dumps say 2; the full history says rank 1 never reached the
// collective. Every source of the fixture now tells the full history's story, slot numbers and all.
TEST(TraceTrim, TheSkippedCollectiveFixtureTellsTheTrueStoryTrimmed) {
  const std::string dir = fixtures() + "/gpu/skipped_collective/";
  const std::vector<std::vector<std::string>> imports = {
      {dir + "recorder"},
      {dir + "nccl_log"},
      {dir + "flight_recorder/fr_timeout_0", dir + "flight_recorder/fr_timeout_1"},
  };
  for (const auto& files : imports) {
    ImportOptions keep;
    keep.full_history = true;
    const std::string full = emit_scenario(import_traces(files, TraceFormat::Auto, keep));
    const std::string cut = emit_scenario(import_traces(files, TraceFormat::Auto));
    const std::string want = outcome_of(full), got = outcome_of(cut);
    EXPECT_EQ(got, want) << files.front() << "\n" << cut;
    EXPECT_EQ(got.find("connect of"), std::string::npos) << files.front() << "\n" << got;
  }
}

TEST(TraceTrim, LeavesOutOnlyWhatEveryMemberCompletedBeforeTheFirstOpenCall) {
  // Two ranks, comm A: rank 0 completed #1 #2 #3, rank 1 completed #1 #2 and sits in #3.
  Trace t;
  t.format = "flight-recorder";
  t.world_size = 2;
  Communicator a;
  a.id = "A";
  a.label = "A";
  a.size = 2;
  a.members = {{0, 0}, {1, 1}};
  t.comms.push_back(a);
  for (int r = 0; r < 2; ++r) {
    t.ranks[r].rank = r;
    ThreadTrace th{"main", {}};
    for (int k = 0; k < 3; ++k) {
      Call c;
      c.kind = CallKind::AllReduce;
      c.comm = "A";
      c.seq = k;
      c.state = r == 1 && k == 2 ? CallState::Started : CallState::Completed;
      th.calls.push_back(c);
    }
    t.ranks[r].threads.push_back(th);
  }
  trim_history(t, true);
  ASSERT_EQ(t.ranks[0].threads[0].calls.size(), 1u);
  ASSERT_EQ(t.ranks[1].threads[0].calls.size(), 1u);
  EXPECT_EQ(t.ranks[1].threads[0].calls[0].state, CallState::Started);
  EXPECT_EQ(t.comms[0].dropped_collectives, 2u);
  ASSERT_EQ(t.dropped.size(), 1u);
  EXPECT_NE(t.dropped[0].find("left out 4 calls"), std::string::npos) << t.dropped[0];
  // A source that cannot see completion (NCCL logs) keeps the last call every member made as well.
  Trace logs = t;
  logs.dropped.clear();
  for (auto& [r, rt] : logs.ranks)
    for (auto& c : rt.threads[0].calls) c.state = CallState::Completed;
  trim_history(logs, false);
  EXPECT_EQ(logs.ranks[0].threads[0].calls.size(), 1u);  // #3 is the last both made: kept
}

TEST(TraceTrim, CompletedCollectivesThatDisagreeAreKept) {
  // Issue 26 (MBI CallOrdering_Exscan_Scan_nok): Open MPI completes rank 0's MPI_Scan met by rank 1's
  // MPI_Exscan. The calls differ in what the check compares (call=, then dtype, op, root): never left out.
  auto two_ranks = [](const std::string& first1, const std::string& dtype1, std::optional<int> root1) {
    Trace t;
    t.format = "mpi-recorder";
    t.mpi = true;
    t.world_size = 2;
    Communicator w;
    w.id = "world";
    w.label = "world";
    w.size = 2;
    w.members = {{0, 0}, {1, 1}};
    t.comms.push_back(w);
    for (int r = 0; r < 2; ++r) {
      t.ranks[r].rank = r;
      ThreadTrace th{"main", {}};
      for (int k = 0; k < 2; ++k) {
        Call c;
        c.kind = CallKind::AllReduce;
        c.comm = "world";
        c.seq = k;
        c.count = 4;
        c.dtype = r == 1 && k == 0 ? dtype1 : "int32";
        c.root = r == 1 && k == 0 ? root1 : std::nullopt;
        c.mpi_call = r == 1 && k == 0 ? first1 : (k == 0 ? "Scan" : "Exscan");
        th.calls.push_back(c);
      }
      t.ranks[r].threads.push_back(th);
    }
    trim_history(t, true);
    return t.ranks[0].threads[0].calls.size();
  };
  EXPECT_EQ(two_ranks("Scan", "int32", std::nullopt), 0u);  // every slot agrees: all left out
  EXPECT_EQ(two_ranks("Exscan", "int32", std::nullopt), 2u);
  EXPECT_EQ(two_ranks("Scan", "float32", std::nullopt), 2u);
  EXPECT_EQ(two_ranks("Scan", "int32", 1), 2u);
}

TEST(TraceTrim, AHungRunImportedFromASourceThatCannotSeeItIsNeverAPlainSafe) {
  const std::string dir = fixtures() + "/gpu/mempool_opposite_order/";
  for (const std::string& path : {dir + "nccl_log", dir + "flight_recorder/fr_before_register_0.pkl"}) {
    std::vector<std::string> paths = {path};
    if (path.ends_with(".pkl")) paths.push_back(dir + "flight_recorder/fr_before_register_1.pkl");
    Trace t = import_traces(paths, TraceFormat::Auto);
    EXPECT_EQ(t.outcome, RunOutcome::Hung) << path;
    EXPECT_NE(t.outcome_evidence.find("outcome.txt"), std::string::npos) << t.outcome_evidence;
    ASSERT_FALSE(t.cannot_see.empty());
    EXPECT_NE(t.cannot_see[0].find("ncclCommWindowRegister"), std::string::npos);
    const std::string text = emit_scenario(t);
    EXPECT_NE(text.find("\nobserved hung \""), std::string::npos) << text;
    auto result = check_text(text);
    EXPECT_EQ(result.verdict, model::Verdict::Safe);  // the model cannot see the registration ...
    ASSERT_TRUE(result.world->observed.has_value());  // ... and the check knows the run hung
  }
  // Through the command line: "safe (model only)", the warning, exit 4.
  const std::string out_dir = fresh_scratch_dir("observed");
  std::string output;
  ASSERT_EQ(
      run_command(collmc_binary() + " trace import " + dir + "nccl_log -o " + out_dir + "/imp.cmc --quiet", &output), 0)
      << output;
  EXPECT_EQ(run_command(collmc_binary() + " check " + out_dir + "/imp.cmc", &output), 4) << output;
  EXPECT_NE(output.find("safe (model only)"), std::string::npos) << output;
  EXPECT_NE(output.find("warning: the recorded run hung; the model finds no hang: the hang is outside what NCCL "
                        "INFO logs record"),
            std::string::npos)
      << output;
  EXPECT_EQ(run_command(collmc_binary() + " check --quiet " + out_dir + "/imp.cmc", &output), 4) << output;
  EXPECT_NE(output.find("safe (model only; the recorded run hung)"), std::string::npos) << output;
}

TEST(TraceTrim, TheSummaryFoldsRanksInTheSameRoleAndState) {
  // 64 ranks in tp groups of 8; every rank but 63 waits in an all-reduce on its tp group; 63 completed all.
  Trace t;
  t.format = "flight-recorder";
  t.world_size = 64;
  for (int g = 0; g < 8; ++g) {
    Communicator c;
    c.id = "tp" + std::to_string(g);
    c.label = "pg " + std::to_string(g + 1) + " (tp)";
    c.size = 8;
    for (int i = 0; i < 8; ++i) c.members[g * 8 + i] = i;
    t.comms.push_back(c);
  }
  for (int r = 0; r < 64; ++r) {
    t.ranks[r].rank = r;
    Call c;
    c.kind = CallKind::AllReduce;
    c.comm = "tp" + std::to_string(r / 8);
    c.state = r == 63 ? CallState::Completed : CallState::Started;
    t.ranks[r].threads.push_back({"main", {c}});
  }
  auto lines = summarize(t);
  EXPECT_LE(lines.size(), 40u);
  EXPECT_TRUE(contains(lines, "ranks 0..62 (63 of 64) stopped in all_reduce on their tp group (8 groups)"))
      << joined(lines);
  EXPECT_TRUE(contains(lines, "rank 63: every traced call completed")) << joined(lines);
}

}  // namespace
}  // namespace collmc::testing

namespace collmc::testing {
namespace {

// The review's N6, N7, N9: what an imported run's messages say.
TEST(TraceMessages, TwoSplitsOfOneParentAndColorHaveNamesThatTellThemApart) {
  const Trace t = import_traces({fixtures() + "/gpu/skipped_collective/nccl_log"}, TraceFormat::Auto);
  std::vector<std::string> labels;
  for (const auto& c : t.comms) labels.push_back(c.label);
  EXPECT_TRUE(contains(labels, "split #1 of commId 0x2c45f07773966608 color 2130503744")) << joined(labels);
  EXPECT_TRUE(contains(labels, "split #2 of commId 0x2c45f07773966608 color 2130503744")) << joined(labels);
  EXPECT_TRUE(contains(summarize(t), "split #2 of commId")) << joined(summarize(t));
}

TEST(TraceMessages, PeersAfterAWildcardReceiveAreSaidToBeTheRecordedOnes) {
  const std::string body =
      "ranks 3\nset profile = mpi\ncomm world = [0, 1, 2]\n"
      "rank 0 { recv world any buf\n send world 2 buf }\nrank 1 { send world 0 buf }\n"
      "rank 2 { send world 0 buf\n recv world 0 buf }\n";
  const auto imported = check_text("observed completed \"MPI recorder traces\"\n" + body);
  EXPECT_TRUE(contains(imported.world->notes, "their peers are the ones the recorded run used"))
      << joined(imported.world->notes);
  EXPECT_TRUE(contains(imported.world->notes, "`send world 2 buf`")) << joined(imported.world->notes);
  // A hand-written scenario means the peers it names.
  EXPECT_FALSE(contains(check_text(body).world->notes, "recorded run")) << joined(check_text(body).world->notes);
}

TEST(TraceMessages, ARankWhoseCallsWereAllLeftOutGetsNoAdviceForHandWrittenFiles) {
  // The summary-folding test's job: rank 63 completed everything, so the trim leaves its calls out.
  Trace t;
  t.format = "flight-recorder";
  t.world_size = 2;
  Communicator a;
  a.id = "A";
  a.label = "A";
  a.size = 2;
  a.members = {{0, 0}, {1, 1}};
  t.comms.push_back(a);
  for (int r = 0; r < 2; ++r) {
    t.ranks[r].rank = r;
    ThreadTrace th{"main", {}};
    for (int k = 0; k < (r == 0 ? 3 : 2); ++k) {
      Call c;
      c.kind = CallKind::AllReduce;
      c.comm = "A";
      c.state = r == 0 && k == 2 ? CallState::Started : CallState::Completed;
      th.calls.push_back(c);
    }
    t.ranks[r].threads.push_back(th);
  }
  trim_history(t, true);
  const std::string text = emit_scenario(t);
  EXPECT_NE(text.find("rank 1 { }  # its trace holds no call the import keeps"), std::string::npos) << text;
  const auto r = check_text(text);
  EXPECT_TRUE(r.world->warnings.empty()) << text;
  EXPECT_EQ(r.verdict, model::Verdict::Deadlock);
}

}  // namespace
}  // namespace collmc::testing
