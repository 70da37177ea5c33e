// libFuzzer: an NCCL debug log through the reader, the emitter and the parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto trace =
        collmc::traces::read_nccl_log_buffer("nccl.log", std::string(reinterpret_cast<const char*>(data), size));
    collmc::fuzz::check_trace(trace);
  } catch (const collmc::traces::TraceInputError&) {
  }
  return 0;
}
