// Placing ranks on fewer GPUs: only ranks that share no communicator may share one.
#include <gtest/gtest.h>

#include "collmc/replay/gpu_assignment.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

TEST(GpuAssignment, EnoughGpusIsRankOnItsOwnGpu) {
  auto w = world_from("ranks 2\ncomm A = [0, 1]\nrank * {\n  all_reduce A plain\n}\n");
  EXPECT_EQ(replay::assign_gpus(w, 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(replay::assign_gpus(w, 8), (std::vector<int>{0, 1}));
  EXPECT_FALSE(replay::assign_gpus(w, 1)) << "two ranks of one comm on one GPU";
}

TEST(GpuAssignment, FourRankHookFitsOnTwoGpus) {
  auto w = world_from(
      "ranks 4\ncomm dp = {[0, 1], [2, 3]}\ncomm ep = {[0, 2], [1, 3]}\n"
      "rank * {\n  alloc pool\n  register dp pool\n  register ep pool\n}\n");
  auto gpus = replay::assign_gpus(w, 2);
  ASSERT_TRUE(gpus);
  EXPECT_EQ(*gpus, (std::vector<int>{0, 1, 1, 0}));
  EXPECT_EQ(replay::describe_gpu_assignment(*gpus), "GPU 0: ranks 0, 3; GPU 1: ranks 1, 2");
}

TEST(GpuAssignment, ThreeRankRingNeedsThreeGpus) {
  auto w = model::load_world(source_dir() + "/examples/nccl_three_comm_ring.cmc");
  EXPECT_FALSE(replay::assign_gpus(w, 2)) << "every pair of the ring shares a comm";
  EXPECT_TRUE(replay::assign_gpus(w, 3));
}

}  // namespace
}  // namespace collmc::testing
