// libFuzzer: the data-only pickle decoder.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collmc/traces/pickle.h"
#include "collmc/traces/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    collmc::traces::decode_pickle("fuzz", std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const collmc::traces::TraceInputError&) {
  }
  return 0;
}
