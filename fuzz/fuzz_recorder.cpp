// libFuzzer: recorder traces (JSON lines). The input is split at the first "\n\n" into two files, so
// that matching communicators across processes is exercised too.
#include <cstddef>
#include <cstdint>
#include <string>

#include "collmc/traces/recorder_reader.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, std::string>> files;
  size_t cut = text.find("\n\n");
  if (cut == std::string::npos) {
    files.emplace_back("p0.jsonl", text);
  } else {
    files.emplace_back("p0.jsonl", text.substr(0, cut + 1));
    files.emplace_back("p1.jsonl", text.substr(cut + 2));
  }
  try {
    collmc::fuzz::check_trace(collmc::traces::read_recorder_buffers(files));
  } catch (const collmc::traces::TraceInputError&) {
  }
  return 0;
}
