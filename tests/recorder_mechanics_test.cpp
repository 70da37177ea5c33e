// The recorder's mechanics on the CPU: programs that call a fake NCCL (traces/record/nccl/testing, test
// scaffolding whose calls succeed at once) run under LD_PRELOAD=libcollmc_record.so. What is tested is the
// recorder itself: interposition, the lines it writes, threads, a kill in the middle, a hang, and finding
// NCCL when it is loaded with dlopen(RTLD_LOCAL). Nothing here is a hardware result.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collmc/traces/recorder_reader.h"
#include "test_support.h"

#ifdef COLLMC_RECORDER_SO

namespace {

namespace fs = std::filesystem;
using collmc::testing::run_command;
using collmc::traces::CallKind;
using collmc::traces::CallState;
using collmc::traces::parse_recorder_file;
using collmc::traces::read_recorder_traces;
using collmc::traces::RecorderFile;
using collmc::traces::write_recorder_file;

std::vector<std::string> trace_files(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The shell prefix that records a program into `dir`.
std::string recorded(const std::string& dir, const std::string& env = "") {
  return "COLLMC_TRACE_DIR='" + dir + "' LD_PRELOAD='" + COLLMC_RECORDER_SO + "' " + env + " ";
}

std::vector<std::string> entered_calls(const RecorderFile& f) {
  std::vector<std::string> calls;
  for (const auto& l : f.lines)
    if (l.event["ev"] == "enter") calls.push_back(l.event["call"].get<std::string>());
  return calls;
}

TEST(RecorderMechanics, RecordsEveryCallWithItsArgumentsAndResult) {
  const std::string dir = collmc::testing::fresh_scratch_dir("program");
  std::string out;
  ASSERT_EQ(run_command(recorded(dir) + COLLMC_RECORD_DRIVER + " program 0 2 same", &out), 0) << out;
  auto files = trace_files(dir);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_NE(files[0].find("collmc-trace."), std::string::npos);
  RecorderFile f = parse_recorder_file(files[0], slurp(files[0]));
  EXPECT_FALSE(f.truncated_tail);
  ASSERT_FALSE(f.lines.empty());
  const auto& header = f.lines.front().event;
  EXPECT_EQ(header["ev"], "process");
  EXPECT_EQ(header["format"], "collmc-recorder");
  EXPECT_GT(header["pid"].get<int64_t>(), 0);

  const std::vector<std::string> expected = {"ncclGetUniqueId",
                                             "ncclCommInitRank",
                                             "ncclCommSplit",
                                             "ncclCommSplit",
                                             "ncclMemAlloc",
                                             "ncclCommWindowRegister",
                                             "ncclCommWindowRegister",
                                             "ncclAllReduce",
                                             "cudaStreamSynchronize",
                                             "cudaMalloc",
                                             "ncclGroupStart",
                                             "ncclSend",
                                             "ncclRecv",
                                             "ncclGroupEnd",
                                             "ncclAllGather",
                                             "ncclReduceScatter",
                                             "ncclBroadcast",
                                             "ncclReduce",
                                             "ncclAlltoAll",
                                             "ncclCommRegister",
                                             "ncclCommDeregister",
                                             "cudaDeviceSynchronize",
                                             "cudaFree",
                                             "ncclCommWindowDeregister",
                                             "ncclCommWindowDeregister",
                                             "ncclMemFree",
                                             "ncclCommFinalize",
                                             "ncclCommDestroy",
                                             "ncclCommAbort",
                                             "ncclCommDestroy"};
  EXPECT_EQ(entered_calls(f), expected);

  // Every entry has its return, right after it (one thread), with the same seq and result 0.
  ASSERT_EQ(f.lines.size(), 1 + 2 * expected.size());
  std::map<std::string, std::vector<const nlohmann::ordered_json*>> by_call;
  for (size_t i = 1; i < f.lines.size(); i += 2) {
    const auto& in = f.lines[i].event;
    const auto& ret = f.lines[i + 1].event;
    EXPECT_EQ(in["ev"], "enter");
    EXPECT_EQ(ret["ev"], "return");
    EXPECT_EQ(in["seq"], ret["seq"]);
    EXPECT_EQ(in["tid"], header["pid"]);  // the main thread's id is the pid
    EXPECT_EQ(ret["result"], 0);
    EXPECT_LE(in["t_mono_ns"].get<uint64_t>(), ret["t_mono_ns"].get<uint64_t>());
    by_call[in["call"].get<std::string>()].push_back(&in);
    by_call[in["call"].get<std::string>() + ".return"].push_back(&ret);
  }
  const auto& init = *by_call["ncclCommInitRank"][0];
  EXPECT_EQ(init["rank"], 0);
  EXPECT_EQ(init["nranks"], 2);
  EXPECT_EQ(init["uid"].get<std::string>().size(), 18u);  // "0x" and 16 hex digits
  const std::string world = (*by_call["ncclCommInitRank.return"][0])["comm"];
  EXPECT_EQ((*by_call["ncclCommSplit"][0])["comm"], world);
  EXPECT_EQ((*by_call["ncclCommSplit"][1])["blocking"], 1);
  EXPECT_EQ((*by_call["ncclCommSplit.return"][0])["rank"], 0);  // asked of the (fake) NCCL after the split
  EXPECT_EQ((*by_call["ncclCommSplit.return"][0])["nranks"], 2);
  const auto& reg = *by_call["ncclCommWindowRegister"][0];
  EXPECT_EQ(reg["buff"], (*by_call["ncclMemAlloc.return"][0])["ptr"]);
  EXPECT_EQ(reg["size"], 1 << 20);
  EXPECT_EQ(reg["flags"], 1);
  const auto& ar = *by_call["ncclAllReduce"][0];
  EXPECT_EQ(ar["count"], 1024);
  EXPECT_EQ(ar["dtype"], "bfloat16");
  EXPECT_EQ(ar["op"], "sum");
  EXPECT_EQ(ar["stream"], "0x5000");
  EXPECT_EQ((*by_call["ncclReduceScatter"][0])["op"], "max");
  EXPECT_EQ((*by_call["ncclReduce"][0])["root"], 0);
  EXPECT_EQ((*by_call["ncclSend"][0])["peer"], 1);
  EXPECT_EQ((*by_call["cudaFree"][0])["ptr"], (*by_call["cudaMalloc.return"][0])["ptr"]);
}

TEST(RecorderMechanics, WritesNothingWithoutATraceDirectory) {
  const std::string dir = collmc::testing::fresh_scratch_dir("off");
  std::string out;
  ASSERT_EQ(run_command("cd '" + dir + "' && LD_PRELOAD='" + COLLMC_RECORDER_SO + "' " + COLLMC_RECORD_DRIVER +
                            " program 0 2 same",
                        &out),
            0)
      << out;
  EXPECT_TRUE(trace_files(dir).empty());
}

TEST(RecorderMechanics, ThreadsCallingAtOnceLeaveEveryLineWhole) {
  const std::string dir = collmc::testing::fresh_scratch_dir("threads");
  std::string out;
  constexpr int kThreads = 8, kCalls = 2000;
  ASSERT_EQ(run_command(recorded(dir) + COLLMC_RECORD_DRIVER + " threads " + std::to_string(kThreads) + " " +
                            std::to_string(kCalls),
                        &out),
            0)
      << out;
  auto files = trace_files(dir);
  ASSERT_EQ(files.size(), 1u);
  const std::string text = slurp(files[0]);
  RecorderFile f = parse_recorder_file(files[0], text);  // throws at the first torn or mixed line
  EXPECT_FALSE(f.truncated_tail);
  // header + GetUniqueId and InitRank + per thread (kCalls all-reduces and a stream sync), two lines per call
  EXPECT_EQ(f.lines.size(), 1u + 4u + kThreads * 2u * (kCalls + 1));
  std::map<int64_t, int> all_reduces_per_thread;
  std::set<uint64_t> seqs;
  for (const auto& l : f.lines) {
    if (l.event["ev"] != "enter") continue;
    EXPECT_TRUE(seqs.insert(l.event["seq"].get<uint64_t>()).second);
    if (l.event["call"] == "ncclAllReduce") ++all_reduces_per_thread[l.event["tid"].get<int64_t>()];
  }
  ASSERT_EQ(all_reduces_per_thread.size(), static_cast<size_t>(kThreads));
  for (const auto& [tid, n] : all_reduces_per_thread) EXPECT_EQ(n, kCalls) << "thread " << tid;
  // The reader keeps the threads apart: one ThreadTrace per worker besides the main thread.
  auto trace = read_recorder_traces(files);
  ASSERT_EQ(trace.ranks.size(), 1u);
  EXPECT_EQ(trace.ranks[0].threads.size(), static_cast<size_t>(kThreads + 1));
  EXPECT_EQ(trace.ranks[0].threads[0].name, "main");
  // Exact round trip of what the recorder wrote.
  EXPECT_EQ(write_recorder_file(f), text);
}

TEST(RecorderMechanics, KilledMidRunLosesNoCompletedLine) {
  const std::string dir = collmc::testing::fresh_scratch_dir("killed");
  std::string out;
  // Four threads calling as fast as they can; SIGKILL after a moment.
  const std::string cmd = recorded(dir) + COLLMC_RECORD_DRIVER +
                          " threads 4 100000000 & pid=$!; sleep 0.5; kill -KILL $pid; wait $pid 2>/dev/null; exit 0";
  ASSERT_EQ(run_command(cmd, &out), 0) << out;
  auto files = trace_files(dir);
  ASSERT_EQ(files.size(), 1u);
  const std::string text = slurp(files[0]);
  RecorderFile f = parse_recorder_file(files[0], text);
  EXPECT_GT(f.lines.size(), 100u);
  // Each line was one write(2): the file ends with a whole line.
  EXPECT_EQ(text.back(), '\n');
  EXPECT_FALSE(f.truncated_tail);
  // At most one call per thread was in flight when the process died.
  auto trace = read_recorder_traces(files);
  int started = 0;
  for (const auto& t : trace.ranks[0].threads)
    for (const auto& c : t.calls) started += c.state == CallState::Started;
  EXPECT_LE(started, 4);
}

TEST(RecorderMechanics, AHungCallIsEnteredAndNeverReturned) {
  const std::string dir = collmc::testing::fresh_scratch_dir("hang");
  std::string out;
  // The fake NCCL blocks in the registration; wait for its entry line, then kill the program.
  const std::string cmd = recorded(dir, "FAKE_NCCL_HANG_ON=ncclCommWindowRegister") + COLLMC_RECORD_DRIVER +
                          " hang & pid=$!; for i in $(seq 100); do grep -qs ncclCommWindowRegister '" + dir +
                          "'/*.jsonl && break; sleep 0.05; done; kill -KILL $pid; wait $pid 2>/dev/null; exit 0";
  ASSERT_EQ(run_command(cmd, &out), 0) << out;
  auto trace = read_recorder_traces(trace_files(dir));
  ASSERT_EQ(trace.ranks.size(), 2u);  // the program created a 2-rank communicator; rank 1 has no file
  EXPECT_TRUE(trace.ranks[0].present);
  EXPECT_FALSE(trace.ranks[1].present);
  const auto& calls = trace.ranks[0].threads.at(0).calls;
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back().kind, CallKind::WindowRegister);
  EXPECT_EQ(calls.back().state, CallState::Started);
  for (size_t i = 0; i + 1 < calls.size(); ++i) EXPECT_EQ(calls[i].state, CallState::Completed);
  bool said = false;
  for (const auto& n : trace.ranks[0].notes)
    said = said || n.find("stopped in ncclCommWindowRegister") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(RecorderMechanics, AForkedChildWritesItsOwnFile) {
  const std::string dir = collmc::testing::fresh_scratch_dir("fork");
  std::string out;
  ASSERT_EQ(run_command(recorded(dir) + COLLMC_RECORD_DRIVER + " fork", &out), 0) << out;
  auto files = trace_files(dir);
  ASSERT_EQ(files.size(), 2u);
  std::map<int64_t, RecorderFile> by_pid;
  for (const auto& f : files) {
    RecorderFile r = parse_recorder_file(f, slurp(f));
    by_pid.emplace(r.lines.front().event["pid"].get<int64_t>(), std::move(r));
  }
  // The parent: its init and its all-reduce (count 1). The child: a process line naming the parent, and
  // only its own all-reduce (count 2), on its own main thread.
  const RecorderFile* parent = nullptr;
  const RecorderFile* child = nullptr;
  for (const auto& [pid, f] : by_pid) (entered_calls(f).size() == 1 ? child : parent) = &f;
  ASSERT_TRUE(parent != nullptr && child != nullptr);
  EXPECT_EQ(entered_calls(*parent), (std::vector<std::string>{"ncclGetUniqueId", "ncclCommInitRank", "ncclAllReduce"}));
  EXPECT_EQ(entered_calls(*child), std::vector<std::string>{"ncclAllReduce"});
  const auto& child_header = child->lines.front().event;
  EXPECT_EQ(child_header["ppid"], parent->lines.front().event["pid"]);
  EXPECT_EQ(child->lines.at(1).event["tid"], child_header["pid"]);
  EXPECT_EQ(child->lines.at(1).event["count"], 2);
}

TEST(RecorderMechanics, FindsNcclLoadedWithDlopenLocal) {
  // As in Python: the library that calls NCCL (here a fake libtorch) is loaded with RTLD_LOCAL, so the
  // recorder's dlsym(RTLD_NEXT) cannot see NCCL; it must still reach it, or every call would fail.
  const std::string dir = collmc::testing::fresh_scratch_dir("dlopen");
  std::string out;
  ASSERT_EQ(run_command(recorded(dir) + COLLMC_RECORD_DLOPEN_DRIVER + " " + COLLMC_FAKE_TORCH, &out), 0) << out;
  auto files = trace_files(dir);
  ASSERT_EQ(files.size(), 1u);
  RecorderFile f = parse_recorder_file(files[0], slurp(files[0]));
  const std::vector<std::string> expected = {"ncclCommInitRank",      "ncclMemAlloc", "ncclAllReduce",
                                             "cudaStreamSynchronize", "ncclMemFree",  "ncclCommDestroy"};
  EXPECT_EQ(entered_calls(f), expected);
  for (const auto& l : f.lines) {
    if (l.event["ev"] == "return") {
      EXPECT_EQ(l.event["result"], 0) << l.event.dump();
    }
  }
}

}  // namespace

#endif  // COLLMC_RECORDER_SO
