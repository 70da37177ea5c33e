// Shared by the fuzz targets: what must hold for any trace an importer returns.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "collmc/model/parser.h"
#include "collmc/model/source.h"
#include "collmc/traces/open_orders.h"
#include "collmc/traces/trace.h"

namespace collmc::fuzz {

// The scenario and every summary line of the trace `read()` returns, or its error: what two ways of reading
// one input must agree on.
template <class Read>
std::string trace_text(Read&& read) {
  try {
    const traces::Trace trace = read();
    std::string out = traces::emit_scenario(trace);
    for (const auto& line : traces::summarize(trace, true)) out += line + "\n";
    return out;
  } catch (const traces::TraceInputError& e) {
    return std::string("error: ") + e.what();
  }
}

// Aborts, showing both, when two ways of reading one input disagree.
inline void expect_same_text(const std::string& a, const std::string& b, const char* what, const char* a_name,
                             const char* b_name) {
  if (a == b) return;
  std::fprintf(stderr, "%s disagree:\n--- %s\n%s\n--- %s\n%s\n", what, a_name, a.c_str(), b_name, b.c_str());
  std::abort();
}

// The scenario of any trace parses, and the summary can be made; so does the trimmed trace's (trim_history).
inline void check_trace(const traces::Trace& trace) {
  std::string text = traces::emit_scenario(trace);
  (void)traces::summarize(trace);
  (void)traces::summarize(trace, true);
  traces::Trace trimmed = trace;
  traces::trim_history(trimmed, true);
  try {
    model::parse_string(traces::emit_scenario(trimmed), "<trimmed>");
  } catch (const model::InputError& e) {
    std::fprintf(stderr, "trimmed scenario does not parse: %s\n", e.what());
    std::abort();
  }
  try {
    model::parse_string(text, "<emitted>");
  } catch (const model::InputError& e) {
    std::fprintf(stderr, "emitted scenario does not parse: %s\n%s\n", e.what(), text.c_str());
    std::abort();
  }
  // The same with every kind of order opened: the any_order blocks must parse and resolve too.
  traces::OpenOrdersOptions all;
  for (auto kind : traces::all_open_kinds()) all.kinds.insert(kind);
  auto opened = traces::open_orders(trace, all);
  (void)traces::open_orders_summary(opened);
  std::string opened_text = traces::emit_scenario(opened.trace);
  try {
    model::parse_string(opened_text, "<opened>");
  } catch (const model::InputError& e) {
    std::fprintf(stderr, "opened scenario does not parse: %s\n%s\n", e.what(), opened_text.c_str());
    std::abort();
  }
}

}  // namespace collmc::fuzz
