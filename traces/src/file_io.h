// Reading trace files whole, with a clear error when they cannot be read or are too large.
#pragma once

#include <optional>
#include <string>

namespace collmc::traces {

// The bytes of `path`; throws TraceInputError when it cannot be read or is over `max_bytes`.
std::string read_trace_file(const std::string& path, uint64_t max_bytes = 1ull << 30);

// The rank a dump's file name ends with: "nccl_trace_rank_3" and "fr_3.pkl" give 3; none: nullopt.
std::optional<int> rank_from_file_name(const std::string& path);

}  // namespace collmc::traces
