// Worlds above 65,536 ranks (issue 37): the checker names ranks, comms and buffers with 32-bit ids, the
// state's encoding keeps them, and `gen` and `check` take the same world sizes (model::kMaxWorldRanks).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "collmc/checker/check.h"
#include "collmc/checker/state.h"
#include "collmc/model/parser.h"
#include "collmc/model/source.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

constexpr uint32_t kHigh = 70'000;  // above every 16-bit id

// Two ranks above 65,535 share comms P and Q; every other rank of the world does nothing.
std::string two_high_ranks(bool opposite_orders) {
  const std::string a = std::to_string(kHigh), b = std::to_string(kHigh + 1);
  return "ranks " + std::to_string(kHigh + 2) + "\ncomm P = [" + a + ", " + b + "]\ncomm Q = [" + a + ", " + b +
         "]\nrank " + a + " { all_reduce P x; all_reduce Q y }\nrank " + b + " { " +
         (opposite_orders ? "all_reduce Q y; all_reduce P x" : "all_reduce P x; all_reduce Q y") + " }\n";
}

TEST(WideIds, StateEncodingKeepsIdsAbove16Bits) {
  checker::State s;
  s.ranks.resize(2);
  checker::RankState& rk = s.ranks[1];
  checker::ThreadState t;
  t.node = 3;
  t.waits.push_back(checker::Wait{.kind = checker::WaitKind::P2pHost, .comm = kHigh + 5, .peer = 131'071, .slot = 2});
  rk.threads.push_back(t);
  checker::StreamEntry e;
  e.parts.push_back(checker::DevicePart{.call = 9, .comm = kHigh, .kind = checker::PartKind::Send, .peer = 200'000});
  rk.streams.push_back({e});
  rk.members.push_back(checker::MemberState{.flags = checker::kCreated, .children = kHigh, .grows = kHigh});
  rk.windows.push_back(
      checker::WindowState{.comm = kHigh, .buffer = kHigh + 1, .flag = 1, .count = 1, .epochs = 0, .locks = {}});
  rk.p2p.push_back(checker::P2pState{.comm = kHigh + 2, .peer = 262'143, .sends = 1});
  rk.left_early.emplace_back(kHigh + 3, 4);
  checker::CommState c;
  c.host_open.push_back(
      checker::OpenSlot{.call = 1, .arrived = 1, .split_children = {{200'000, 70'001}, {200'001, -1}}});
  s.comms.push_back(c);
  const std::string bytes = checker::encode_state(s);
  const checker::State back = checker::decode_state(bytes);
  EXPECT_EQ(back, s);
  EXPECT_EQ(back.ranks[1].threads[0].waits[0].peer, 131'071u);
  EXPECT_EQ(back.comms[0].host_open[0].split_children[0].second, 70'001);
  // The encoding is varints: the same state with small ids is shorter, not padded to the wide fields.
  checker::State small;
  small.ranks.resize(2);
  small.ranks[1].threads.push_back(checker::ThreadState{});
  small.ranks[1].threads[0].waits.push_back(checker::Wait{.comm = 1, .peer = 1});
  EXPECT_LT(checker::encode_state(small).size(), bytes.size());
}

TEST(WideIds, SafeWithRanksAbove65535) {
  checker::CheckResult r = check_text(two_high_ranks(false));
  EXPECT_EQ(r.verdict, model::Verdict::Safe);
}

TEST(WideIds, DeadlockNamesTheRanksAbove65535) {
  checker::CheckResult r = check_text(two_high_ranks(true));
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  ASSERT_EQ(r.wait_for.cycles.size(), 1u);
  std::set<int> ranks;
  for (int n : r.wait_for.cycles[0]) ranks.insert(r.wait_for.nodes[static_cast<size_t>(n)].rank);
  EXPECT_EQ(ranks, (std::set<int>{static_cast<int>(kHigh), static_cast<int>(kHigh + 1)}));
  ASSERT_FALSE(r.wait_for.explanations.empty());
  EXPECT_NE(r.wait_for.explanations[0].find("rank " + std::to_string(kHigh)), std::string::npos)
      << r.wait_for.explanations[0];
}

// A comm whose id is above 65,535: a family of one-rank instances before it gives it that id.
TEST(WideIds, DeadlockOnACommWithIdAbove65535) {
  std::string text = "ranks " + std::to_string(kHigh + 2) + "\ncomm solo = {";
  for (uint32_t r = 0; r < kHigh + 2; ++r) text += (r ? ", [" : "[") + std::to_string(r) + "]";
  text +=
      "}\ncomm P = [0, 1]\ncomm Q = [0, 1]\nrank 0 { all_reduce P x; all_reduce Q y }\n"
      "rank 1 { all_reduce Q y; all_reduce P x }\n";
  const model::World world = world_from(text);
  ASSERT_GT(world.comms.size(), size_t{kHigh + 2});
  checker::CheckResult r = checker::check(world, {});
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  std::set<int> comms;
  for (const auto& e : r.wait_for.edges)
    if (e.on_cycle) comms.insert(e.comm);
  ASSERT_FALSE(comms.empty());
  for (int c : comms) EXPECT_GT(c, static_cast<int>(kHigh)) << world.comm_name(c);
}

TEST(WideIds, ParserTakes131072AndRefusesAboveTheLimitNamingTheRange) {
  EXPECT_EQ(model::parse_string("ranks 131072\n").ranks, 131'072);
  EXPECT_EQ(model::parse_string("ranks " + std::to_string(model::kMaxWorldRanks) + "\n").ranks, model::kMaxWorldRanks);
  try {
    model::parse_string("ranks " + std::to_string(model::kMaxWorldRanks + 1) + "\n");
    FAIL() << "a world above the limit parsed";
  } catch (const model::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("expected 1.." + std::to_string(model::kMaxWorldRanks)), std::string::npos)
        << e.what();
  }
}

// `gen` writes every size `check` reads (the largest is read back by check's parser) and refuses the
// next one with the range check takes.
TEST(WideIds, GenAndCheckTakeTheSameWorldSizes) {
  const std::string dir = fresh_scratch_dir("wide_ids_gen");
  const std::string max = std::to_string(model::kMaxWorldRanks);
  CollmcRun gen = run_collmc("gen hook-fanout --world " + max + " -o " + dir + "/max.cmc");
  ASSERT_EQ(gen.status, 0) << gen.all;
  EXPECT_EQ(model::parse_file(dir + "/max.cmc").ranks, model::kMaxWorldRanks);
  CollmcRun over = run_collmc("gen hook-fanout --world " + std::to_string(model::kMaxWorldRanks + 1));
  EXPECT_EQ(over.status, 2) << over.all;
  EXPECT_NE(over.all.find("expected 1.." + max), std::string::npos) << over.all;
}

}  // namespace
}  // namespace collmc::testing
