// What the import knows of the memory a torch program registers (docs/TRACES.md, "Memory the trace never saw
// allocated"): the recorder's reader takes a window NCCL accepted as VMM memory, and the torch shim's reader takes
// the kind of each pool segment from what the shim saw at register_mem_pool. Both from the traces recorded on the
// H200 (tests/fixtures/traces/gpu/shim_mempool_*), each also with the shim's segment field changed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "collmc/traces/recorder_reader.h"
#include "collmc/traces/torch_shim_reader.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using collmc::traces::emit_scenario;
using collmc::traces::read_recorder_buffers;
using collmc::traces::read_torch_shim_buffers;
using collmc::traces::TraceInputError;
using Files = std::vector<std::pair<std::string, std::string>>;

Files fixture(const std::string& name) {
  Files files;
  for (const auto& e :
       fs::directory_iterator(fs::path(collmc::testing::source_dir()) / "tests/fixtures/traces/gpu" / name)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    files.emplace_back(e.path().string(), text.str());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The shim's files with the "segments" field of each register_mem_pool entry replaced by `segments` (a field and its
// value, or "" to drop it: what the shim wrote before it recorded the pool's segments).
Files with_segments(Files files, const std::string& segments) {
  const std::string key = R"(,"segments":")";
  for (auto& [name, text] : files) {
    if (!name.ends_with(".torch.jsonl")) continue;
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
      const size_t end = text.find('"', at + key.size()) + 1;  // past the value's closing quote
      text.replace(at, end - at, segments.empty() ? "" : "," + segments);
    }
  }
  return files;
}

std::string imported(const Files& files) { return emit_scenario(read_torch_shim_buffers(files, false)); }

TEST(TorchShimMemory, AWindowNcclAcceptedIsOnVmmMemory) {
  // Recorded on the H200: both ranks registered the pool on g1, then g2, and the run completed.
  const std::string same = imported(fixture("shim_mempool_same"));
  EXPECT_NE(same.find("alloc buf_10004000000 20971520"), std::string::npos) << same;
  EXPECT_EQ(collmc::testing::verdict_str(same), "safe") << same;
  // Without the shim's segment facts the recorder's reader still knows it: NCCL accepted the window.
  EXPECT_EQ(collmc::testing::verdict_str(imported(with_segments(fixture("shim_mempool_same"), ""))), "safe");
}

TEST(TorchShimMemory, AnExpandableSegmentIsVmmMemoryAndTheCrossOrderDeadlocks) {
  // Recorded on the H200: opposite orders, both ranks hung in register_mem_pool; no registration returned, and
  // the shim recorded the pool's one segment as VMM memory (expandable segments).
  const Files hung = fixture("shim_mempool_opposite");
  const std::string vmm = imported(hung);
  EXPECT_NE(vmm.find("alloc buf_10004000000 20971520"), std::string::npos) << vmm;
  EXPECT_EQ(collmc::testing::verdict_str(vmm), "deadlock") << vmm;
  // Without the segment facts (the shim before it recorded them): the memory's kind is not known, and the
  // scenario takes it as cudaMalloc memory: never safe, but not the hang either.
  EXPECT_EQ(collmc::testing::verdict_str(imported(with_segments(hung, ""))), "usage_error");
  const std::string plain = imported(with_segments(hung, R"("segments":"0x10004000000/20971520/malloc")"));
  EXPECT_NE(plain.find("cuda_malloc buf_10004000000 20971520"), std::string::npos) << plain;
  EXPECT_EQ(collmc::testing::verdict_str(plain), "usage_error") << plain;
  // Memory of the pool's own allocator, or a segment that does not hold the address: not known.
  const std::string custom = imported(with_segments(hung, R"("segments":"0x10004000000/20971520/custom")"));
  EXPECT_EQ(custom.find("alloc buf_10004000000"), std::string::npos) << custom;
  const std::string elsewhere = imported(with_segments(hung, R"("segments":"0x20000000000/20971520/vmm")"));
  EXPECT_EQ(elsewhere.find("alloc buf_10004000000"), std::string::npos) << elsewhere;
}

TEST(TorchShimMemory, APlainCudaMallocPoolIsRefusedAsNcclRefusedIt) {
  // Recorded on the H200 with expandable_segments:False: the pool's segment is cudaMalloc memory, and NCCL 2.30.7
  // refused the window on both ranks ("unhandled cuda error" out of register_mem_pool).
  const std::string plain = imported(fixture("shim_mempool_plain"));
  EXPECT_NE(plain.find("cuda_malloc buf_"), std::string::npos) << plain;
  EXPECT_EQ(collmc::testing::verdict_str(plain), "usage_error") << plain;
}

TEST(TorchShimMemory, ABadSegmentsFieldIsAnErrorWithItsLine) {
  const Files bad = with_segments(fixture("shim_mempool_opposite"), R"("segments":"0x10004000000/20MiB/vmm")");
  try {
    imported(bad);
    FAIL() << "no error";
  } catch (const TraceInputError& e) {
    EXPECT_TRUE(e.file().ends_with(".torch.jsonl")) << e.file();
    EXPECT_GT(e.line(), 1);
    EXPECT_NE(e.message().find("expected \"segments\" as ADDRESS/SIZE/KIND"), std::string::npos) << e.message();
  }
}

const std::string kHeader =
    R"({"ev":"process","format":"collmc-recorder","version":1,"pid":10,"ppid":1,"host":"h","exe":"/bin/x",)"
    R"("t_mono_ns":1,"t_wall_ns":2,"env_rank":0,"env_local_rank":0,"env_world_size":1})"
    "\n";
std::string line(const std::string& ev, int seq, const std::string& call, const std::string& fields) {
  return R"({"ev":")" + ev + R"(","seq":)" + std::to_string(seq) + R"(,"tid":10,"t_mono_ns":5,"t_wall_ns":)" +
         std::to_string(seq * 10) + R"(,"call":")" + call + "\"" + (fields.empty() ? "" : "," + fields) + "}\n";
}

// One rank's recorder trace: init, then a window on 0x7000 (never seen allocated) that returns `result`, inside
// a group when `grouped`.
std::string window_trace(int result, bool grouped) {
  std::string t = kHeader + line("enter", 1, "ncclCommInitRank", R"("uid":"0xab","rank":0,"nranks":1,"blocking":-1)") +
                  line("return", 1, "ncclCommInitRank", R"("result":0,"comm":"0x10")");
  if (grouped) t += line("enter", 2, "ncclGroupStart", "") + line("return", 2, "ncclGroupStart", R"("result":0)");
  t += line("enter", 3, "ncclCommWindowRegister", R"("comm":"0x10","buff":"0x7000","size":4096,"flags":1)") +
       line("return", 3, "ncclCommWindowRegister", R"("result":)" + std::to_string(result) + R"(,"win":"0x99")");
  if (grouped) t += line("enter", 4, "ncclGroupEnd", "") + line("return", 4, "ncclGroupEnd", R"("result":0)");
  return t;
}

TEST(RecorderMemory, OnlyAWindowNcclAcceptedOutsideAGroupDeclaresItsMemory) {
  auto scenario = [](int result, bool grouped) {
    return emit_scenario(read_recorder_buffers({{"t.jsonl", window_trace(result, grouped)}}));
  };
  const std::string accepted = scenario(0, false);
  EXPECT_NE(accepted.find("alloc buf_7000 4096"), std::string::npos) << accepted;
  EXPECT_LT(accepted.find("alloc buf_7000"), accepted.find("register"));
  EXPECT_EQ(collmc::testing::verdict_str(accepted), "safe") << accepted;
  // A registration that failed says nothing of the memory; in a group NCCL looks at it only in ncclGroupEnd.
  for (const auto& s : {scenario(5, false), scenario(0, true)}) {
    EXPECT_EQ(s.find("alloc buf_7000"), std::string::npos) << s;
    EXPECT_NE(s.find("buf_7000"), std::string::npos) << s;
  }
}

}  // namespace
