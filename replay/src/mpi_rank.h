// The MPI backend of a rank process: what each call of the plan does as an MPI call (SEMANTICS.md §6).
#pragma once

#include <memory>

#include "rank_body.h"

namespace collmc::replay {

// For this process's MPI_COMM_WORLD rank; MPI must be initialized (MPI_THREAD_MULTIPLE for threads).
std::unique_ptr<RankCalls> make_mpi_calls(const ReplayPlan& plan, int rank);

}  // namespace collmc::replay
