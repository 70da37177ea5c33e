// Open orders: predictive analysis on an imported trace. A recorded run shows one order of each rank's
// calls; some of those orders the program does not force (a loop over a hash map, an allocator hook
// that registers a new segment on every communicator, calls on independent communicators). This pass
// marks such stretches of a thread's calls as `any_order`, so the check explores the orders another run
// of the same program could take. It works on the common Trace model, whatever the source (collmc
// recorder, Flight Recorder, NCCL log, MPI traces), and never reorders what it cannot prove independent
// under the assumptions docs/TRACES.md ("Open orders") states.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collmc/traces/trace.h"

namespace collmc::traces {

// The kinds of recorded order the pass can open.
enum class OpenKind {
  // Registrations issued back to back: a run of window/buffer registrations (or of deregistrations)
  // with no other call between them, as an allocator hook or a loop over a map issues them. Each call
  // of the run may come in any order, except two on the same communicator and buffer.
  Registrations,
  // Calls on different communicators between the same host syncs: registrations, collectives and
  // point-to-point calls between two host-side waits (stream/device sync, barrier, a blocking
  // lifecycle call, an allocation) whose order the host did not learn anything from. Calls on one
  // communicator keep their order; two data calls (collective, send, recv) on a common or unknown
  // buffer keep theirs.
  Comms,
  // Calls of different host threads: already concurrent in the scenario (one `thread` block each);
  // listed so the summary says so.
  Threads,
};

// "registrations", "comms", "threads"; nullopt for anything else.
std::optional<OpenKind> parse_open_kind(const std::string& name);
const char* open_kind_name(OpenKind kind);
// Every kind, in the order above (the default of --open-orders).
std::vector<OpenKind> all_open_kinds();

// An order the user knows the program forces (the inverse of opening). Parsed from text by
// parse_keep_order:
//   "COMM"          every call on COMM keeps its recorded place among its neighbours
//   "COMM1,COMM2"   calls on COMM1 and on COMM2 keep their order relative to each other
//   "rank=R"        nothing of rank R is opened
// A communicator is named by its id, its label, or its name in the emitted scenario.
struct KeepOrder {
  std::vector<std::string> comms;  // as the user wrote them
  std::optional<int> rank;
  std::string text;  // the spec as given
};

// Throws std::invalid_argument (saying what was expected) for an empty or malformed spec.
KeepOrder parse_keep_order(const std::string& text);

struct OpenOrdersOptions {
  std::set<OpenKind> kinds;
  std::vector<KeepOrder> keep;
};

// One stretch of calls that was opened.
struct OpenedOrder {
  int rank = 0;
  std::string thread;        // the thread's name
  size_t begin = 0;          // first call index in the thread
  size_t end = 0;            // one past the last
  std::set<OpenKind> kinds;  // the kinds that freed its pairs
  std::string calls;         // "register split1, register split2"
  std::string why;           // one sentence: which kind opened it and what is assumed
  std::string origin;        // the first and last calls' origins
};

struct OpenOrdersResult {
  Trace trace;                            // the input, with ThreadTrace::open_spans filled in
  std::vector<OpenedOrder> opened;        // in rank, thread, position order
  std::vector<std::string> notes;         // what was not opened and why (kept orders, too many children)
  std::vector<std::string> already_open;  // orders the scenario leaves open anyway (host threads)
};

// Opens the orders `options.kinds` allow. Throws std::invalid_argument for a keep spec that names no
// communicator of the trace or a rank outside it. Spans already in the input are replaced.
OpenOrdersResult open_orders(const Trace& trace, const OpenOrdersOptions& options);

// Summary lines for the import: one per opened order ("rank 0: any order of register split1,
// register split2 (calls 11-13): registrations back to back ..."), then the notes.
std::vector<std::string> open_orders_summary(const OpenOrdersResult& result);

}  // namespace collmc::traces
