// The code each rank process runs (one backend per file). Private to the replay library.
#pragma once

#include <string>

#include "collmc/replay/plan.h"
#include "shared_block.h"

namespace collmc::replay {

// Runs rank `rank`'s part of the plan in this (forked) process; returns the process exit code.
int run_nccl_rank(const ReplayPlan& plan, int rank, SharedBlock* shared, bool free_running);

// In a forked child: the number of GPUs and the NCCL version, or an error; writes into `out`.
void probe_nccl(char* out, size_t size);

}  // namespace collmc::replay
