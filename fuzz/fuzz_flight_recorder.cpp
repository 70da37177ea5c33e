// libFuzzer: one Flight Recorder dump (pickle or JSON) through the reader, the emitter and the parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    auto trace = collmc::traces::read_flight_recorder_buffer("nccl_trace_rank_0", bytes);
    collmc::fuzz::check_trace(trace);
    // The streaming reader's own trim (on its slim entries, before any call is built).
    collmc::fuzz::check_trace(collmc::traces::read_flight_recorder_buffer("nccl_trace_rank_0", bytes, false));
  } catch (const collmc::traces::TraceInputError&) {
  }
  return 0;
}
