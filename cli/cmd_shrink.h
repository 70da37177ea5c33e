// What `collmc replay --shrink` borrows from `collmc shrink`.
#pragma once
#include <string>

#include "collmc/checker/search.h"
#include "collmc/model/world.h"

namespace collmc::cli {

// `collmc replay --shrink`: when an NCCL scenario has more ranks than this machine has GPUs, shrinks it
// to that many ranks, writes the result to `<input's stem>.shrunk.cmc` in the current directory, says
// so on stdout, and returns it loaded from there; otherwise returns `world` as it is. Throws
// std::runtime_error when the scenario is safe, or no failing scenario that small was found.
model::World shrink_for_replay(const std::string& input, model::World world, const checker::SearchOptions& search);

}  // namespace collmc::cli
