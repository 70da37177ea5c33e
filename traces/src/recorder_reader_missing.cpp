// Stand-in until the recorder-trace reader (traces/src/recorder_reader.cpp, issue 6 part B) lands.
#include "collmc/traces/trace.h"

namespace collmc::traces {

Trace read_recorder_traces(const std::vector<std::string>& files, bool, unsigned) {
  throw TraceInputError(files.empty() ? std::string() : files.front(), 0, 0, 0,
                        "recorder traces: the reader is not built yet in this version of collmc");
}

}  // namespace collmc::traces
