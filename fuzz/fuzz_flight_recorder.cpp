// libFuzzer: one Flight Recorder dump (pickle or JSON) through the reader, the emitter and the parser; and the
// fast readers (simdjson On-Demand for JSON, the pass over torch's pickle opcodes) against the tree reader:
// whatever the fast way accepts, the tree reader must read to the same trace, and both must reject the same
// dumps with the same error.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_check.h"

namespace {

std::string read_as_text(const std::string& bytes, bool full_history, bool tree_reader_only) {
  return collmc::fuzz::trace_text([&] {
    return collmc::traces::read_flight_recorder_buffer("nccl_trace_rank_0", bytes, full_history, tree_reader_only);
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  for (bool full : {true, false}) {
    collmc::fuzz::expect_same_text(read_as_text(bytes, full, false), read_as_text(bytes, full, true),
                                   "the fast and the tree reader", "fast", "tree");
  }
  try {
    auto trace = collmc::traces::read_flight_recorder_buffer("nccl_trace_rank_0", bytes);
    collmc::fuzz::check_trace(trace);
    // The streaming reader's own trim (on its slim entries, before any call is built).
    collmc::fuzz::check_trace(collmc::traces::read_flight_recorder_buffer("nccl_trace_rank_0", bytes, false));
  } catch (const collmc::traces::TraceInputError&) {
  }
  return 0;
}
