// libFuzzer: an NCCL debug log through the reader, the emitter and the parser; and the reader's own trim (on
// held calls, before any Call is built) against trim_history on the full import: the same scenario, the same
// summary, or the same error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_check.h"

namespace {

// The log read with its trim planned on held calls, or whole and then trim_history.
std::string read_as_text(const std::string& text, bool trim_as_it_reads) {
  return collmc::fuzz::trace_text([&] {
    auto trace = collmc::traces::read_nccl_log_buffer("nccl.log", text, !trim_as_it_reads);
    if (!trim_as_it_reads) collmc::traces::trim_history(trace, false);
    return trace;
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  collmc::fuzz::expect_same_text(read_as_text(text, true), read_as_text(text, false), "the held trim and trim_history",
                                 "held", "whole");
  try {
    collmc::fuzz::check_trace(collmc::traces::read_nccl_log_buffer("nccl.log", text));
    collmc::fuzz::check_trace(collmc::traces::read_nccl_log_buffer("nccl.log", text, false));
  } catch (const collmc::traces::TraceInputError&) {
  }
  return 0;
}
