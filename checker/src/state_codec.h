// The parts of a state's canonical encoding (state.h's encode_state is their concatenation, each list
// prefixed by its length), for the visited set that stores states as trees of shared parts.
#pragma once

#include <cstdint>
#include <string>

#include "collmc/checker/state.h"

namespace collmc::checker {

// Each appends the part's bytes to `out`.
void encode_rank(const RankState& rank, std::string& out);
void encode_comm(const CommState& comm, std::string& out);
void encode_store_key(uint32_t value, std::string& out);

}  // namespace collmc::checker
