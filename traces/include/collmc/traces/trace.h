// The common trace model: what real programs did, as read from a recorder trace, a PyTorch Flight
// Recorder dump or an NCCL debug log. Every reader produces a Trace; one emitter turns a Trace into an
// ordinary scenario (LANGUAGE.md) that `collmc check` and `collmc replay` accept.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collmc/model/operations.h"

namespace collmc::traces {

// Bad trace input: names the file and where in it (line and column for text formats, byte offset for
// binary ones; 0 where it does not apply) and what was expected. Readers throw only this for bad input.
class TraceInputError : public std::runtime_error {
 public:
  TraceInputError(std::string file, int line, int column, uint64_t byte_offset, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  uint64_t byte_offset() const { return byte_offset_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_ = 0, column_ = 0;
  uint64_t byte_offset_ = 0;
  std::string message_;
};

// How a communicator came to exist in the traced program.
enum class CommOrigin {
  Preexisting,  // existed before the trace starts (a Flight Recorder process group): declared, not created
  Init,         // created by an `init` call (ncclCommInitRank / InitRankConfig / InitAll)
  Split,        // created by a `split` call on `parent`
};

struct Communicator {
  // Identity across processes: the NCCL unique-id hash ("uid:<hex>"), a Flight Recorder process group
  // ("pg:<name>"), an NCCL log commId ("commid:<hex>"), or for splits something every member agrees on
  // (parent id + color + the split's sequence number on the parent). Unique within a Trace.
  std::string id;
  std::string label;  // a human name when the source has one (PG desc "default_pg", ...); may be empty
  int size = 0;       // nranks (0: unknown)
  // Global (world) rank -> rank inside the communicator, for every member the trace knows about.
  // A member missing here (a rank with no file) is said in Trace::notes.
  std::map<int, int> members;
  CommOrigin origin = CommOrigin::Preexisting;
  std::string parent;  // split: the parent's id
  std::optional<int64_t> split_color;
  // Its calls block the host as MPI's do (SEMANTICS.md §6): a gloo process group (the torch shim), written
  // `comm NAME = [...] mpi` in an nccl-profile scenario.
  bool host_blocking = false;
  // Collectives every member completed that the import left out before the first kept one (trim_history).
  uint64_t dropped_collectives = 0;
  // One of them ran with a regular kernel: the comm is connected (warm) when the kept calls start. The
  // scenario says both as `history NAME device=N connected` (LANGUAGE.md), so that the kept calls take the
  // device slots they took in the run and a destroy waits as it did.
  bool history_connected = false;
};

// What a call was, in the terms of the scenario language (LANGUAGE.md statements): one kind per row of
// model/operations.def (in its order, under the trace readers' names: CommInit is `init COMM`, MemAlloc
// `alloc BUF SIZE`, StreamSync `sync STREAM`, ...), then the group delimiters and Other.
enum class CallKind {
#define COLLMC_OP(kind, keyword, form, nccl_class, mpi_class, symmetric, reduction, rooted, trace_kind, ...) trace_kind,
#include "collmc/model/operations.def"
#undef COLLMC_OP
  GroupStart,
  GroupEnd,
  Other,  // something the language cannot express (emitted as a comment); `detail` says what
};

// The scenario operation a call kind stands for; none for GroupStart, GroupEnd and Other.
std::optional<model::OpKind> op_kind_of(CallKind kind);
// The call kind of a scenario operation.
CallKind call_kind_of(model::OpKind op);

// Where a call stood when the trace ends.
enum class CallState {
  Completed,  // returned (recorder) / completed (Flight Recorder) / logged (NCCL log)
  Started,    // entered but never returned, or a kernel that started and never finished: where it stopped
  Scheduled,  // issued but not started (Flight Recorder "scheduled": queued behind earlier work)
};

// Call::tag of a receive with MPI_ANY_TAG (the MPI recorder writes it as -1).
inline constexpr int64_t kTraceAnyTag = -1;

// Call::comm of an MPI collective called on MPI_COMM_NULL: written `null` (the semantics reports it).
inline constexpr const char* kTraceNullComm = "MPI_COMM_NULL";

struct Call {
  CallKind kind = CallKind::Other;
  CallState state = CallState::Completed;
  std::string comm;         // communicator id (Communicator::id); empty for calls without one
  std::string child_comm;   // split: the child's id; empty = the rank joined no child
  std::string buffer;       // per-rank buffer name (readers name them, e.g. "buf_7f3a00000000"); may be empty
  std::string recv_buffer;  // a distinct output buffer, if any
  uint64_t bytes = 0;       // alloc / register size (0: unknown)
  uint64_t address = 0;     // register: the device address registered, when the source has it (0: unknown)
  std::optional<uint64_t> count;
  std::string dtype;        // scenario dtype name (float32, bfloat16, ...); empty: unknown
  std::string redop;        // sum | prod | max | min | avg; empty: unknown or not a reduction
  std::string mpi_call;     // MPI collectives: the function without "MPI_" (`call=`); empty: not MPI
  std::string coll_config;  // NCCL 2.31 nccl*Config: the per-collective config's name (`config=`); empty: none
  std::optional<int> root;  // world rank
  std::optional<int> peer;  // world rank
  bool any_source = false;  // recv: MPI_ANY_SOURCE, matched by whichever sender comes (`recv COMM any BUF`)
  bool buffered = false;    // MPI send in buffered mode (MPI_Bsend, MPI_Ibsend): completes locally (`mode=buffered`)
  model::WinMode win_mode = model::WinMode::Plain;  // MPI window calls: a shared lock, a local flush, NOSUCCEED
  std::optional<int64_t> tag;              // MPI send/recv: the message tag, kTraceAnyTag for MPI_ANY_TAG (`tag=`)
  std::string stream;                      // stream name; empty: the default stream ("main")
  std::string key;                         // store_set / store_wait / host_barrier: the host store key
  std::vector<int> members;                // host_barrier: the world ranks it waits for (empty: every rank)
  bool symmetric = true;                   // window register flag: NCCL_WIN_COLL_SYMMETRIC or not
  std::optional<int64_t> seq;              // the source's sequence number (record_id, opCount, line order)
  std::string origin;                      // where it came from, for comments: "rank0.pkl entry 12", "log:123"
  std::string detail;                      // free text for comments (profiling name, unknown call name, ...)
  std::optional<model::MpiRule> mpi_rule;  // an MPI usage error (CallKind::MpiError): the rule it breaks
  uint64_t time_ns = 0;                    // entry time when known (0: unknown)
  uint64_t return_ns = 0;  // return time, on the clock of time_ns, when the reader keeps it (0: unknown)
};

// A stretch of a thread's calls whose recorded order the program does not force (open_orders.h): the
// scenario writes it as `any_order { BLOCK; BLOCK; ... }`, each block its calls in recorded order.
struct OpenSpan {
  size_t begin = 0, end = 0;                // call indices [begin, end) of the thread
  std::vector<std::vector<size_t>> blocks;  // a partition of [begin, end), each block ascending
  std::string why;                          // for the comment on the any_order
};

// One host thread's calls, in call order.
struct ThreadTrace {
  std::string name;  // thread id as the source names it ("main" when there is only one)
  std::vector<Call> calls;
  std::vector<OpenSpan> open_spans = {};  // disjoint, ascending; empty unless open_orders ran
  // Its order with the rank's other threads is all in its calls (host store keys: the MPI recorder's OpenMP
  // threads): its `thread` block starts where the rank body does, not where the run's timing puts it.
  bool starts_with_rank = false;
};

struct RankTrace {
  int rank = 0;         // global (world) rank
  bool present = true;  // false: no file for this rank (its body is emitted empty, with a comment)
  std::vector<ThreadTrace> threads;
  std::vector<std::string> notes;  // per-rank partiality: "ring buffer dropped entries before record_id 40"
  std::string source;              // the file(s) it came from
};

// What the recorded run did, as far as its traces say.
enum class RunOutcome {
  Unknown,    // the traces do not say
  Completed,  // every process ended normally / every call finished
  Hung,       // a process sat in a call that never finished (entries started and never completed, the
              // recorder's hang stop, fixture outcome evidence)
  Killed,     // a process was stopped by a signal or a time limit
};
const char* run_outcome_name(RunOutcome outcome);  // "unknown", "completed", "hung", "killed"

struct Trace {
  std::string format;  // "recorder", "mpi-recorder", "flight-recorder", "nccl-log"
  bool mpi = false;    // MPI calls: the scenario is written for `set profile = mpi`
  // MPI_TAG_UB of the run's library (the least over its processes), written `set mpi_tag_ub`; nullopt: not
  // recorded (older traces), and no tag is judged against it.
  std::optional<int64_t> mpi_tag_ub = std::nullopt;
  int world_size = 0;
  std::vector<Communicator> comms;
  std::map<int, RankTrace> ranks;  // by global rank; every rank 0..world_size-1 present as a key
  std::vector<std::string> notes;  // what is partial or guessed, said plainly
  // What the reader saw beyond the calls, printed first by summarize(): files skipped, a rank that looks
  // stuck or faulted, a call on a group the rank's own dump says excludes it.
  std::vector<std::string> findings = {};
  // History left out because it cannot take part in a hang (trim_history), one line each; empty with
  // --full-history or when nothing was left out.
  std::vector<std::string> dropped = {};
  // What this source cannot see, said plainly ("NCCL INFO logs carry no ncclCommWindowRegister ..."), and
  // the command that would see it.
  std::vector<std::string> cannot_see = {};
  RunOutcome outcome = RunOutcome::Unknown;
  std::string outcome_evidence = {};  // why the outcome is what it is ("rank 3's entry 41 started, never completed")
};

// Leaves out, per communicator, the collectives every member completed before the earliest one some
// member did not complete (docs/TRACES.md, "What the import keeps"); appends a line to `dropped` saying
// what. `completion_seen`: the source tells a finished call from one only made (false for NCCL logs: the
// last call every member made is then kept). Ranks with several threads, and comms such a rank or a rank
// without a trace belongs to, are left whole.
void trim_history(Trace& trace, bool completion_seen);

// The outcome line for the summary and the scenario ("the recorded run hung: ..."), empty when unknown.
std::string outcome_line(const Trace& trace);

struct EmitOptions {
  std::string name;                               // scenario title; empty: derived from the format
  bool include_origins = true;                    // a `# origin` comment on each call
  std::vector<std::string> header_comments = {};  // extra `# ` lines under the title (e.g. the opened orders)
};

// The scenario for a trace: explicit comms (declared `uninit` when the trace creates them), one body
// per rank in call order, threads kept apart (`thread NAME { ... }`), group start/end as `group { }`,
// comments saying where each rank stopped and what was partial. Calls after the point a rank stopped
// are still emitted so the check can find the hang. Never throws for a well-formed Trace.
std::string emit_scenario(const Trace& trace, const EmitOptions& options = {});

// The name the emitted scenario gives a trace's buffer ("buf" for none).
std::string scenario_buffer_name(const std::string& buffer);

// The name each declared communicator gets in the emitted scenario, by Communicator::id (a comm with no
// known member is not declared and not in the map).
std::map<std::string, std::string> scenario_comm_names(const Trace& trace);

// Plain findings for the import summary, one line each, e.g.
// "collective #3 on pg 0 (all_reduce): ranks 0,2 entered, rank 1 never did" and "rank 1 stopped in ...".
// At most about 40 lines at any world size: ranks in the same role and state are one line ("ranks
// 0..1022 (1023 of 1024) stopped in all_reduce on their tp group ..."); `verbose`: every line.
std::vector<std::string> summarize(const Trace& trace, bool verbose = false);

// What `collmc trace import` prints about a trace, one line each: "imported FORMAT traces: N ranks, M
// communicators", then (indented) the run's outcome, what is partial, summarize(), what was left out and
// what the source cannot see.
std::vector<std::string> import_summary(const Trace& trace, bool verbose = false);

// Readers. `files` are the trace files (one per rank/process, or one interleaved file for NCCL logs).
// Each throws TraceInputError for bad input and never runs code from it.
// Recorder traces are read in parallel (`threads` workers, 0: one per core), each file's calls held compactly
// and, unless `full_history`, trimmed before the calls are built (traces/read/recorder/recorder_reader.cpp).
Trace read_recorder_traces(const std::vector<std::string>& files, bool full_history = true, unsigned threads = 0);
// Flight Recorder dumps are read in parallel (`threads` workers, 0: one per core) and, unless
// `full_history`, trimmed before the calls are built, so memory follows what is kept.
Trace read_flight_recorder(const std::vector<std::string>& files, bool full_history = true, unsigned threads = 0);
// NCCL logs are read in parallel too (`threads` workers, 0: one per core) and, unless `full_history`, trimmed
// before the calls are built.
Trace read_nccl_logs(const std::vector<std::string>& files, bool full_history = true, unsigned threads = 0);

// In-memory variants (used by the fuzz targets and tests): `name` stands for the file name in errors.
// `tree_reader_only`: read a dump the slow way (a whole tree, then its fields) even where the fast way
// (simdjson On-Demand for JSON, a pass over torch's pickle opcodes) would: the fuzz target and the tests
// check that the two read every dump alike.
Trace read_flight_recorder_buffer(const std::string& name, const std::string& bytes, bool full_history = true,
                                  bool tree_reader_only = false);
Trace read_nccl_log_buffer(const std::string& name, const std::string& text, bool full_history = true);

// The scenario language's statement keyword for a call kind ("all_reduce", "register", ...).
const char* call_kind_name(CallKind kind);

}  // namespace collmc::traces
