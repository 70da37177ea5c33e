// libFuzzer: one Flight Recorder dump (pickle or JSON) through the reader, the emitter and the parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto trace = collmc::traces::read_flight_recorder_buffer("nccl_trace_rank_0",
                                                             std::string(reinterpret_cast<const char*>(data), size));
    collmc::fuzz::check_trace(trace);
  } catch (const collmc::traces::TraceInputError&) {
  }
  return 0;
}
