// What `collmc replay --shrink` borrows from `collmc shrink`.
#pragma once
#include <string>

#include "collmc/checker/search.h"
#include "collmc/model/world.h"

namespace collmc::cli {

// `collmc replay --shrink`: when an NCCL scenario's ranks cannot be placed on this machine's GPUs
// (replay::place_ranks with the NCCL the ranks would load), shrinks it to as many ranks as GPUs, writes the result to
// `<input's stem>.shrunk.cmc` in the current directory, says so on stdout, and returns it loaded from there; otherwise
// returns `world` as it is. Throws std::runtime_error when the scenario is safe, or no failing scenario that small was
// found.
model::World shrink_for_replay(const std::string& input, model::World world, const checker::SearchOptions& search,
                               int ranks_per_gpu);

}  // namespace collmc::cli
