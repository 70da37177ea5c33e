// libFuzzer: recorder traces (JSON lines). The input is split at the first "\n\n" into two files, so
// that matching communicators across processes is exercised too. The fast way through the lines (simdjson
// On-Demand into flat views) is checked against nlohmann's (parse_line): every line the fast way reads it
// must read as parse_line does, and the whole import must give the same scenario and summary, or the same
// error, both ways, with the full history and trimmed.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "collmc/traces/recorder_reader.h"
#include "fuzz_check.h"

namespace {

using Files = std::vector<std::pair<std::string, std::string>>;

std::string read_as_text(const Files& files, bool full_history, bool slow_lines_only) {
  return collmc::fuzz::trace_text(
      [&] { return collmc::traces::read_recorder_buffers(files, full_history, slow_lines_only); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  Files files;
  size_t cut = text.find("\n\n");
  if (cut == std::string::npos) {
    files.emplace_back("p0.jsonl", text);
  } else {
    files.emplace_back("p0.jsonl", text.substr(0, cut + 1));
    files.emplace_back("p1.jsonl", text.substr(cut + 2));
  }
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n)
    if (collmc::traces::compare_fast_line("p0.jsonl", n, line) == collmc::traces::FastLineRead::Different) {
      std::fprintf(stderr, "the fast way reads line %d otherwise than parse_line:\n%s\n", n, line.c_str());
      std::abort();
    }
  for (bool full : {true, false}) {
    collmc::fuzz::expect_same_text(read_as_text(files, full, false), read_as_text(files, full, true),
                                   "the fast and the nlohmann lines", "fast", "nlohmann");
  }
  try {
    collmc::fuzz::check_trace(collmc::traces::read_recorder_buffers(files));
    // The import's own trim (on held calls, before any call is built).
    collmc::fuzz::check_trace(collmc::traces::read_recorder_buffers(files, false));
  } catch (const collmc::traces::TraceInputError&) {
  }
  return 0;
}
