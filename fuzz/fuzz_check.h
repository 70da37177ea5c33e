// Shared by the fuzz targets: what must hold for any trace an importer returns.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "collmc/model/parser.h"
#include "collmc/model/source.h"
#include "collmc/traces/trace.h"

namespace collmc::fuzz {

// The scenario of any trace parses, and the summary can be made.
inline void check_trace(const traces::Trace& trace) {
  std::string text = traces::emit_scenario(trace);
  (void)traces::summarize(trace);
  try {
    model::parse_string(text, "<emitted>");
  } catch (const model::InputError& e) {
    std::fprintf(stderr, "emitted scenario does not parse: %s\n%s\n", e.what(), text.c_str());
    std::abort();
  }
}

}  // namespace collmc::fuzz
