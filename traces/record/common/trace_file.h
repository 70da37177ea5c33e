// The per-process trace file: opened on the first recorded call, written through with one write(2) per
// line, reopened in a forked child. Everything here is safe to call from any thread.
#pragma once

#include <cstdint>

#include "json_line.h"

namespace collmc::recorder {

// The `format` of this library's `process` line: the NCCL recorder and the MPI recorder share this file
// writer, and each defines its own name ("collmc-recorder", "collmc-mpi-recorder") so a reader knows
// which calls to expect.
extern const char* const kTraceFormat;

// True when COLLMC_TRACE_DIR is set and this process's trace file is open (opened now if needed).
// False means: pass every call straight through, write nothing.
bool recording();

// The next event sequence number of this process (pairs an entry with its return across threads).
uint64_t next_seq();

// Appends `line` to the trace file with one write(2): O_APPEND makes each line land whole, in one
// piece, even when several threads write at once, and nothing stays in a user-space buffer when the
// process hangs or is killed. Keeps errno as it was.
void write_line(JsonLine& line);

// Starts an event line: {"ev":EV,"seq":SEQ,"tid":...,"t_mono_ns":...,"t_wall_ns":...,"call":CALL
void begin_event(JsonLine& line, const char* ev, uint64_t seq, const char* call);

}  // namespace collmc::recorder
