// Recorder traces of three PyTorch programs recorded on two H200 GPUs (torch 2.11, NCCL 2.28.9;
// tests/fixtures/traces/gpu/, made by scripts/gpu-record-fixtures.sh; outcome.txt says how each run
// ended): imported, emitted and checked, the check must agree with what happened on the GPUs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "collmc/traces/recorder_reader.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using collmc::traces::CallKind;
using collmc::traces::CallState;
using collmc::traces::Trace;

std::string fixture_dir(const std::string& program) {
  return collmc::testing::source_dir() + "/tests/fixtures/traces/gpu/" + program;
}

std::vector<std::string> recorder_files(const std::string& program) {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(fixture_dir(program) + "/recorder")) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// What the GPUs did, as the launcher wrote it down.
std::string outcome(const std::string& program) { return slurp(fixture_dir(program) + "/outcome.txt"); }

Trace read(const std::string& program) {
  Trace t = collmc::traces::read_recorder_traces(recorder_files(program));
  EXPECT_EQ(t.world_size, 2);
  EXPECT_TRUE(t.ranks.at(0).present && t.ranks.at(1).present);
  return t;
}

const collmc::traces::Call& last_call(const Trace& t, int rank) { return t.ranks.at(rank).threads.at(0).calls.back(); }

class GpuRecorderFixture : public ::testing::TestWithParam<const char*> {};

TEST_P(GpuRecorderFixture, RoundTripIsExact) {
  for (const auto& f : recorder_files(GetParam())) {
    const std::string text = slurp(f);
    EXPECT_EQ(collmc::traces::write_recorder_file(collmc::traces::parse_recorder_file(f, text)), text) << f;
  }
}

INSTANTIATE_TEST_SUITE_P(Programs, GpuRecorderFixture,
                         ::testing::Values("mempool_same_order", "mempool_opposite_order", "skipped_collective"));

TEST(GpuRecorderFixtures, SameOrderRegistrationCompletedAndChecksSafe) {
  ASSERT_NE(outcome("mempool_same_order").find("rank 0: exited 0\nrank 1: exited 0"), std::string::npos);
  Trace t = read("mempool_same_order");
  // The default group (init) and g1, g2 (splits of it), matched across the two processes.
  ASSERT_EQ(t.comms.size(), 3u);
  EXPECT_EQ(t.comms[1].parent, t.comms[0].id);
  EXPECT_EQ(t.comms[2].parent, t.comms[0].id);
  for (int r = 0; r < 2; ++r) {
    for (const auto& c : t.ranks.at(r).threads.at(0).calls) EXPECT_EQ(c.state, CallState::Completed);
    // register_mem_pool(pool, symm=True): one symmetric window per group on the pool's ncclMemAlloc segment;
    // the ncclCommRegister that NCCL makes inside each is not a call of the program.
    std::vector<const collmc::traces::Call*> windows;
    std::string pool;
    for (const auto& c : t.ranks.at(r).threads.at(0).calls) {
      if (c.kind == CallKind::MemAlloc) pool = c.buffer;
      if (c.kind == CallKind::WindowRegister) windows.push_back(&c);
      EXPECT_NE(c.kind, CallKind::LocalRegister);
    }
    ASSERT_EQ(windows.size(), 2u);
    EXPECT_EQ(windows[0]->comm, t.comms[1].id);
    EXPECT_EQ(windows[1]->comm, t.comms[2].id);
    EXPECT_EQ(windows[0]->buffer, pool);
    EXPECT_TRUE(windows[0]->symmetric);
  }
  const std::string scenario = collmc::traces::emit_scenario(t);
  EXPECT_EQ(collmc::testing::verdict_str(scenario), "safe") << scenario;
}

TEST(GpuRecorderFixtures, OppositeOrderRegistrationHungAndChecksDeadlock) {
  ASSERT_NE(outcome("mempool_opposite_order").find("rank 0: killed at the time limit"), std::string::npos);
  Trace t = read("mempool_opposite_order");
  // Each rank stopped inside its first registration, on a different group.
  const auto& stop0 = last_call(t, 0);
  const auto& stop1 = last_call(t, 1);
  EXPECT_EQ(stop0.kind, CallKind::WindowRegister);
  EXPECT_EQ(stop1.kind, CallKind::WindowRegister);
  EXPECT_EQ(stop0.state, CallState::Started);
  EXPECT_EQ(stop1.state, CallState::Started);
  EXPECT_NE(stop0.comm, stop1.comm);
  const std::string scenario = collmc::traces::emit_scenario(t);
  EXPECT_EQ(collmc::testing::verdict_str(scenario), "deadlock") << scenario;
}

TEST(GpuRecorderFixtures, SkippedCollectiveHungAndChecksDeadlockWithTheMissingRank) {
  ASSERT_NE(outcome("skipped_collective").find("rank 1: killed at the time limit"), std::string::npos);
  Trace t = read("skipped_collective");
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(last_call(t, r).kind, CallKind::DeviceSync);  // torch.cuda.synchronize() never returned
    EXPECT_EQ(last_call(t, r).state, CallState::Started);
  }
  // g1 (the first split) has one all-reduce more on rank 0 than on rank 1.
  auto all_reduces_on = [&](int r, const std::string& comm) {
    int n = 0;
    for (const auto& c : t.ranks.at(r).threads.at(0).calls) n += c.kind == CallKind::AllReduce && c.comm == comm;
    return n;
  };
  const std::string g1 = t.comms.at(1).id;
  EXPECT_EQ(all_reduces_on(0, g1), all_reduces_on(1, g1) + 1);
  bool missing = false;
  for (const auto& line : collmc::traces::summarize(t))
    missing = missing || (line.find("on split1") != std::string::npos &&
                          line.find("rank 0 entered, rank 1 never did") != std::string::npos);
  EXPECT_TRUE(missing);
  const std::string scenario = collmc::traces::emit_scenario(t);
  EXPECT_EQ(collmc::testing::verdict_str(scenario), "deadlock") << scenario;
}

}  // namespace
