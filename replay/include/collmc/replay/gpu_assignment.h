// Which GPU each rank runs on. NCCL rejects a communicator with two ranks on one GPU, but ranks that
// share no communicator may share a GPU (two processes on one device). So a scenario with more ranks
// than GPUs can still run when its "shares a communicator" graph can be coloured with the GPUs at
// hand: LANGUAGE.md's four-rank hook example (dp = {[0,1],[2,3]}, ep = {[0,2],[1,3]}) runs on two
// GPUs with ranks 0 and 3 on one and ranks 1 and 2 on the other.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collmc/model/world.h"

namespace collmc::replay {

// Rank r on GPU r when there are enough GPUs; otherwise a colouring of the ranks with `gpus` colours
// in which no communicator (declared, split or created) and no send/recv pair has two ranks on one GPU,
// found by backtracking (worlds are small: at most kMaxRanks). nullopt when there is none.
std::optional<std::vector<int>> assign_gpus(const model::World& world, int gpus);

// "GPU 0: ranks 0, 3; GPU 1: ranks 1, 2" for the report.
std::string describe_gpu_assignment(const std::vector<int>& gpu_of_rank);

}  // namespace collmc::replay
