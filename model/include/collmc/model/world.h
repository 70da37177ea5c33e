// The resolved scenario (the IR the checker and the replay engine consume): communicator families
// expanded into instances, every name resolved per rank, `when` decided and `repeat` unrolled.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collmc/model/ast.h"
#include "collmc/model/operations.h"
#include "collmc/model/source.h"

namespace collmc::model {

constexpr uint64_t kDefaultBufferSize = 4ull << 20;  // LANGUAGE.md: sizes default to 4MiB

// A rank list as the language writes it: "[0, 2, 4]" (reports, generators and printers share it).
inline std::string rank_list_text(const std::vector<int>& ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

// A sorted rank list written compactly for people: runs of three or more consecutive ranks as
// "a..b", the rest one by one, joined by `separator` ("0..3, 5" in reports, "0..3,5" in notes).
inline std::string rank_ranges_text(const std::vector<int>& ranks, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += separator;
    if (j >= i + 2) {
      out += std::to_string(ranks[i]) + ".." + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      out += std::to_string(ranks[i]);
      ++i;
    }
  }
  return out;
}

// One communicator: a plain comm, or one instance of a family.
struct CommInstance {
  int id = 0;
  std::string name;  // "A", or "dp{0,1}" for the instance of family dp holding ranks 0 and 1
  std::string decl_name;
  int instance = 0;          // index within its family
  std::vector<int> members;  // sorted world ranks
  CommMode mode = CommMode::Blocking;
  bool uninit = false;
  SourceLoc loc;

  bool has_member(int rank) const;
  int member_index(int rank) const;  // -1 if not a member
};

// One operation of one rank, with every name resolved.
struct Call {
  int id = 0;
  int rank = 0;
  int thread = 0;
  OpKind kind = OpKind::Alloc;
  int comm = -1;    // communicator instance (the parent for split)
  int child = -1;   // split: the child instance this rank joins, -1 for `none`
  int buffer = -1;  // buffer id
  int buffer2 = -1;
  uint64_t size = kDefaultBufferSize;  // alloc, cuda_malloc
  RegFlag flag = RegFlag::Symmetric;
  int peer = -1;            // send/recv, world rank
  bool any_source = false;  // recv from whichever member sends first (MPI_ANY_SOURCE); `peer` is -1
  int root = -1;            // world rank, -1 when not given
  int64_t count = -1;       // -1: derived from the buffer's size
  int dtype = 0;            // index into World::dtypes
  int redop = 0;            // index into World::redops
  int stream = 0;           // index into World::streams; 0 is `main`
  SourceLoc loc;
  std::string text;         // the statement as written
  std::string usage_error;  // a problem found without search; the checker reports it when reached
};

// A rank's program as a tree; the checker compiles it into a control automaton.
struct ProgramNode {
  enum class Kind : uint8_t { Call, Seq, Group, AnyOrder, Either, Spawn };
  Kind kind = Kind::Seq;
  int call = -1;                      // Kind::Call
  int thread = -1;                    // Kind::Spawn
  std::vector<ProgramNode> children;  // Seq, Group (calls), AnyOrder, Either (one per alternative)
};

struct ThreadProgram {
  std::string name;  // "main" for the rank body itself
  ProgramNode body;
};

struct RankProgram {
  int rank = 0;
  std::vector<ThreadProgram> threads;  // [0] is the main thread
};

struct Diagnostic {
  SourceLoc loc;
  std::string message;
};

struct World {
  std::shared_ptr<const SourceFile> source;
  std::string name;
  int ranks = 0;
  Knobs knobs;
  std::optional<Verdict> expect;
  std::vector<CommInstance> comms;
  std::vector<std::string> buffers;  // names, one id space for every rank
  std::vector<std::string> streams;  // names; [0] = "main"
  std::vector<std::string> dtypes;   // [0] = "float32"
  std::vector<std::string> redops;   // [0] = "sum"
  std::vector<Call> calls;
  std::vector<RankProgram> programs;       // one per rank
  std::vector<Diagnostic> usage_problems;  // the static usage errors (also on their calls)
  std::vector<std::string> notes;          // assumptions the verdict depends on

  uint64_t dtype_size(int dtype) const;
  std::string comm_name(int comm) const { return comm >= 0 ? comms[comm].name : std::string("-"); }
};

// Resolves a parsed scenario. Throws InputError for what makes the scenario meaningless (unknown
// communicator, `thread` nested in a block, unknown datatype); records usage errors that NCCL would
// reject (a comm the rank is not in, a peer or root outside the comm) on the call instead.
World resolve(const Scenario& scenario);

// parse + resolve.
World load_world(const std::string& path);

}  // namespace collmc::model
