// libFuzzer: an NCCL debug log through the reader, the emitter and the parser; and the reader's own trim (on
// held calls, before any Call is built) against trim_history on the full import: the same scenario, the same
// summary, or the same error.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_check.h"

namespace {

// The scenario and every summary line of the log read one way, or its error.
std::string read_as_text(const std::string& text, bool trim_as_it_reads) {
  try {
    auto trace = collmc::traces::read_nccl_log_buffer("nccl.log", text, !trim_as_it_reads);
    if (!trim_as_it_reads) collmc::traces::trim_history(trace, false);
    std::string out = collmc::traces::emit_scenario(trace);
    for (const auto& line : collmc::traces::summarize(trace, true)) out += line + "\n";
    return out;
  } catch (const collmc::traces::TraceInputError& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string held = read_as_text(text, true), whole = read_as_text(text, false);
  if (held != whole) {
    std::fprintf(stderr, "the held trim and trim_history disagree:\n--- held\n%s\n--- whole\n%s\n", held.c_str(),
                 whole.c_str());
    std::abort();
  }
  try {
    collmc::fuzz::check_trace(collmc::traces::read_nccl_log_buffer("nccl.log", text));
    collmc::fuzz::check_trace(collmc::traces::read_nccl_log_buffer("nccl.log", text, false));
  } catch (const collmc::traces::TraceInputError&) {
  }
  return 0;
}
