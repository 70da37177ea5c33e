// libFuzzer: the torch shim's traces (JSON lines, "format":"collmc-torch") with an NCCL recorder trace of the
// same process. The input is split at the first "\n\n" into two files; each is read as what its first line says
// (a shim file, or an NCCL recorder file to correlate), so the correlation by thread and time is exercised too.
// A TraceInputError is the answer to bad input; the emitted scenario must parse (fuzz_check.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "collmc/traces/torch_shim_reader.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::pair<std::string, std::string>> files;
  const size_t cut = text.find("\n\n");
  if (cut == std::string::npos) {
    files.emplace_back("collmc-trace.h.1.torch.jsonl", text);
  } else {
    files.emplace_back("collmc-trace.h.1.torch.jsonl", text.substr(0, cut + 1));
    files.emplace_back("collmc-trace.h.1.jsonl", text.substr(cut + 2));
  }
  for (bool full : {true, false}) {
    try {
      collmc::fuzz::check_trace(collmc::traces::read_torch_shim_buffers(files, full));
    } catch (const collmc::traces::TraceInputError&) {
    }
  }
  return 0;
}
