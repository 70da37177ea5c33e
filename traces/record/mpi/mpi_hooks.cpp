// The MPI calls the MPI recorder sees (docs/TRACES.md, "MPI recorder format"): the profiling interface.
// Each MPI_X defined here overrides the MPI library's (weak) MPI_X for the whole process when the
// library is preloaded, writes an entry line with the arguments, calls PMPI_X, and writes a return line
// with the result and the outputs. Communicators, windows, requests and groups are written as their
// handles' bits ("0x..."): the reader follows them through the process's own calls.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "call_record.h"

using collmc::recorder::CallRecord;
using collmc::recorder::JsonLine;

const char* const collmc::recorder::kTraceFormat = "collmc-mpi-recorder";

namespace {

// A handle's bits: a pointer in Open MPI, an int in MPICH.
template <class Handle>
uint64_t bits(const Handle& h) {
  uint64_t v = 0;
  // Open MPI's handles are pointers: their bits, not what they point to, are wanted.
  constexpr size_t kHandleBytes = sizeof(Handle);  // NOLINT(bugprone-sizeof-expression)
  std::memcpy(&v, &h, kHandleBytes < sizeof v ? kHandleBytes : sizeof v);
  return v;
}

template <class Handle>
JsonLine& handle(JsonLine& line, const char* key, const Handle& h) {
  return line.hex(key, bits(h), 0);
}

// Ranks as MPI takes them (in the communicator), with MPI's special values made portable:
// MPI_ANY_SOURCE is -1 and MPI_PROC_NULL is -2, whatever the implementation's numbers are.
int64_t peer_rank(int rank) {
  if (rank == MPI_ANY_SOURCE) return -1;
  if (rank == MPI_PROC_NULL) return -2;
  return rank;
}
int64_t tag_value(int tag) { return tag == MPI_ANY_TAG ? -1 : tag; }

// Request and rank lists as one string ("0x1a,0x2b", "0,3"): the trace's lines stay flat. A list longer
// than a line holds ends in "..." (the reader says so).
class ListText {
 public:
  void add_hex(uint64_t v) {
    char tmp[24];
    int n = 0;
    do {
      tmp[n++] = "0123456789abcdef"[v & 0xf];
      v >>= 4;
    } while (v != 0);
    separator();
    put('0');
    put('x');
    while (n > 0) put(tmp[--n]);
  }
  void add_int(int64_t v) {
    separator();
    append_int(v);
  }
  void add_name_times(const char* name, int64_t times) {  // "MPI_INT*3"
    separator();
    for (const char* c = name; *c != '\0'; ++c) put(*c);
    put('*');
    append_int(times);
  }
  bool full() const { return full_; }
  const char* text() {
    if (full_) std::memcpy(buf_ + kCut, "...", 4);
    buf_[full_ ? kCut + 3 : len_] = '\0';
    return buf_;
  }

 private:
  static constexpr size_t kCut = JsonLine::kMaxString - 4;
  void append_int(int64_t v) {
    if (v < 0) {
      put('-');
      v = -v;
    }
    char tmp[24];
    int n = 0;
    do {
      tmp[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) put(tmp[--n]);
  }
  void separator() {
    if (len_ > 0) put(',');
  }
  void put(char c) {
    if (len_ < kCut)
      buf_[len_++] = c;
    else
      full_ = true;
  }
  char buf_[JsonLine::kMaxString + 1] = {};
  size_t len_ = 0;
  bool full_ = false;
};

// A derived datatype's type signature (MPI 4.1 sec. 5.1.1: the sequence of basic types, displacements
// dropped), flattened from its constructor's arguments (MPI_Type_get_envelope/get_contents), as runs
// "MPI_INT*3,MPI_DOUBLE*1". Empty when it cannot be said in a line (too many runs, too deep, a combiner
// whose signature needs more than its arguments): the reader then compares nothing about the type.
class Signature {
 public:
  bool add(MPI_Datatype type, int64_t times, int depth) {
    if (times == 0) return true;
    if (depth > 8 || times < 0) return false;
    int ni = 0, na = 0, nd = 0, combiner = 0;
    if (PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return false;
    if (combiner == MPI_COMBINER_NAMED) {
      char name[MPI_MAX_OBJECT_NAME] = {};
      int length = 0;
      if (PMPI_Type_get_name(type, name, &length) != MPI_SUCCESS || name[0] == '\0') return false;
      return run(name, times);
    }
    constexpr int kMax = 64;
    if (ni > kMax || na > kMax || nd > kMax) return false;
    int ints[kMax];
    MPI_Aint addrs[kMax];
    MPI_Datatype types[kMax];
    if (PMPI_Type_get_contents(type, ni, na, nd, ints, addrs, types) != MPI_SUCCESS) return false;
    bool ok = true;
    int64_t n = -1;  // how many times a single old type repeats
    switch (combiner) {
      case MPI_COMBINER_DUP:
      case MPI_COMBINER_RESIZED:
        n = 1;
        break;
      case MPI_COMBINER_CONTIGUOUS:
        n = ints[0];
        break;
      case MPI_COMBINER_VECTOR:
      case MPI_COMBINER_HVECTOR:
        n = static_cast<int64_t>(ints[0]) * ints[1];
        break;
      case MPI_COMBINER_INDEXED:
      case MPI_COMBINER_HINDEXED:
        n = 0;
        for (int i = 0; i < ints[0] && i + 1 < ni; ++i) n += ints[1 + i];
        break;
      case MPI_COMBINER_INDEXED_BLOCK:
      case MPI_COMBINER_HINDEXED_BLOCK:
        n = static_cast<int64_t>(ints[0]) * ints[1];
        break;
      case MPI_COMBINER_SUBARRAY: {
        n = 1;
        for (int i = 0; i < ints[0] && 1 + ints[0] + i < ni; ++i) n *= ints[1 + ints[0] + i];
        break;
      }
      case MPI_COMBINER_STRUCT:
        if (times > 1024) return false;
        for (int k = 0; k < times && ok; ++k)
          for (int i = 0; i < ints[0] && i + 1 < ni && ok; ++i) ok = add(types[i], ints[1 + i], depth + 1);
        break;
      default:
        ok = false;  // darray, F90 types, ...: not flattened here
    }
    if (n >= 0) ok = add(types[0], n * times, depth + 1);
    for (int i = 0; i < nd; ++i) {  // get_contents hands out new handles of derived types (MPI 4.1 sec. 5.1.13)
      int a = 0, b = 0, c = 0, comb = 0;
      if (PMPI_Type_get_envelope(types[i], &a, &b, &c, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        PMPI_Type_free(&types[i]);
    }
    return ok;
  }
  // The runs so far, once finished.
  const char* finish() {
    flush();
    return runs_ == 0 || list_.full() || runs_ > kMaxRuns ? "" : list_.text();
  }

 private:
  static constexpr int kMaxRuns = 24;
  bool run(const char* name, int64_t times) {
    if (runs_ > 0 && std::strcmp(last_, name) == 0) {
      last_times_ += times;
      return true;
    }
    if (runs_ > 0) list_.add_name_times(last_, last_times_);
    const size_t n = std::min(std::strlen(name), sizeof last_ - 1);
    std::memcpy(last_, name, n);
    last_[n] = '\0';
    last_times_ = times;
    return ++runs_ <= kMaxRuns;
  }
  void flush() {
    if (runs_ > 0) list_.add_name_times(last_, last_times_);
  }
  ListText list_;
  char last_[MPI_MAX_OBJECT_NAME] = {};
  int64_t last_times_ = 0;
  int runs_ = 0;
};

// The datatype's name as MPI gives it ("MPI_INT"; "" for a derived type nobody named, then its flattened
// signature as `sig_key`, issue 32). MPI_DATATYPE_NULL is written by that name (what MPI_Type_free leaves
// in the handle): passing it is an error.
JsonLine& dtype(JsonLine& line, const char* key, MPI_Datatype type, const char* sig_key = nullptr) {
  char name[MPI_MAX_OBJECT_NAME] = {};
  int length = 0;
  if (type == MPI_DATATYPE_NULL) return line.str(key, "MPI_DATATYPE_NULL");
  int ni = 0, na = 0, nd = 0, combiner = MPI_COMBINER_NAMED;
  PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
  if (combiner != MPI_COMBINER_NAMED) {
    line.str(key, "");
    if (sig_key != nullptr) {
      Signature sig;
      const bool ok = sig.add(type, 1, 0);
      const char* runs = sig.finish();
      line.str(sig_key, ok ? runs : "");
    }
    return line;
  }
  if (PMPI_Type_get_name(type, name, &length) != MPI_SUCCESS) name[0] = '\0';
  return line.str(key, name);
}

// The bytes `count` elements of `type` span (0 when MPI cannot say: a null or freed type, a negative count).
int64_t span_bytes(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0) return 0;
  return static_cast<int64_t>(count) * size;
}

// A buffer's address and the bytes MPI reads or writes there (issue 26: the reader finds RMA races and
// overlapping buffers with them). `key` names the address, `key` + "_bytes" its length.
JsonLine& memory(JsonLine& line, const char* addr_key, const char* bytes_key, const void* buf, int count,
                 MPI_Datatype type) {
  return line.ptr(addr_key, buf).i64(bytes_key, span_bytes(count, type));
}

JsonLine& op(JsonLine& line, MPI_Op o) {
  const char* name = "user";
  if (o == MPI_SUM)
    name = "sum";
  else if (o == MPI_PROD)
    name = "prod";
  else if (o == MPI_MAX)
    name = "max";
  else if (o == MPI_MIN)
    name = "min";
  else if (o == MPI_LAND)
    name = "land";
  else if (o == MPI_LOR)
    name = "lor";
  else if (o == MPI_BAND)
    name = "band";
  else if (o == MPI_BOR)
    name = "bor";
  else if (o == MPI_MAXLOC)
    name = "maxloc";
  else if (o == MPI_MINLOC)
    name = "minloc";
  else if (o == MPI_OP_NULL)
    name = "null";
  return line.str("op", name);
}

// The world ranks of a group's members, in the group's rank order ("0,2,3"; -1 for a process outside
// MPI_COMM_WORLD). Cut with "..." past a line's length: the reader then falls back on what members agree on.
void world_ranks(JsonLine& line, const char* key, MPI_Group group) {
  int n = 0;
  if (group == MPI_GROUP_NULL || PMPI_Group_size(group, &n) != MPI_SUCCESS) return;
  MPI_Group world = MPI_GROUP_NULL;
  if (PMPI_Comm_group(MPI_COMM_WORLD, &world) != MPI_SUCCESS) return;
  ListText list;
  constexpr int kChunk = 64;
  int in[kChunk], out[kChunk];
  for (int start = 0; start < n && !list.full(); start += kChunk) {
    const int m = n - start < kChunk ? n - start : kChunk;
    for (int i = 0; i < m; ++i) in[i] = start + i;
    if (PMPI_Group_translate_ranks(group, m, in, world, out) != MPI_SUCCESS) break;
    for (int i = 0; i < m; ++i) list.add_int(out[i] == MPI_UNDEFINED ? -1 : out[i]);
  }
  PMPI_Group_free(&world);
  line.str(key, list.text());
}

// A communicator's groups (issue 32): its members as world ranks and, for an intercommunicator, the remote
// group's, so that the reader names every communicator by what its members agree on, whichever call made it.
void comm_groups(JsonLine& line, MPI_Comm c) {
  MPI_Group g = MPI_GROUP_NULL;
  if (PMPI_Comm_group(c, &g) == MPI_SUCCESS) {
    world_ranks(line, "members", g);
    PMPI_Group_free(&g);
  }
  int inter = 0;
  if (PMPI_Comm_test_inter(c, &inter) != MPI_SUCCESS || inter == 0) return;
  line.i64("inter", 1);
  if (PMPI_Comm_remote_group(c, &g) == MPI_SUCCESS) {
    world_ranks(line, "remote", g);
    PMPI_Group_free(&g);
  }
}

// A new communicator's handle, this process's rank in it and its size (-1 for MPI_COMM_NULL), its groups.
// `complete` is false for MPI_Comm_idup, whose communicator may not be queried before its request completes.
void new_comm(JsonLine& line, int result, const MPI_Comm* comm, bool complete = true) {
  MPI_Comm c = (result == MPI_SUCCESS && comm != nullptr) ? *comm : MPI_COMM_NULL;
  int rank = -1, size = -1;
  if (c != MPI_COMM_NULL && complete) {
    PMPI_Comm_rank(c, &rank);
    PMPI_Comm_size(c, &size);
  }
  handle(line, "newcomm", c).i64("rank", rank).i64("size", size);
  if (c != MPI_COMM_NULL && complete) comm_groups(line, c);
}

// The ranks a status carries: the source matched (-1 when the caller's status was not filled).
void status_out(JsonLine& line, int result, const MPI_Status& status) {
  line.i64("source", result == MPI_SUCCESS ? peer_rank(status.MPI_SOURCE) : -1)
      .i64("tag", result == MPI_SUCCESS ? tag_value(status.MPI_TAG) : -1);
  int cancelled = 0;  // MPI_Cancel took effect (MPI 4.1 sec. 3.8.4): the operation moved no message
  if (result == MPI_SUCCESS && PMPI_Test_cancelled(&status, &cancelled) == MPI_SUCCESS && cancelled != 0)
    line.i64("cancelled", 1);
}

// One recorded call: `args` fills the entry line, `call` runs PMPI, `out` adds the outputs to the return
// line. When the process records nothing, only `call` runs.
template <class Args, class Call, class Out>
int recorded(const char* name, Args&& args, Call&& call, Out&& out) {
  CallRecord rec(name);
  if (!rec.active()) return call();
  args(rec.args());
  rec.entered();
  const int r = call();
  out(rec.result(r), r);
  rec.returned();
  return r;
}

auto no_args = [](JsonLine&) {};
auto no_out = [](JsonLine&, int) {};

// Everything the reader needs to know of the process after MPI_Init: its world rank, the world's size
// and the handles of MPI_COMM_WORLD and MPI_COMM_SELF.
void init_out(JsonLine& line, int result) {
  int rank = -1, size = -1;
  if (result == MPI_SUCCESS) {
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  line.i64("world_rank", rank).i64("world_size", size);
  handle(line, "world", MPI_COMM_WORLD);
  handle(line, "self", MPI_COMM_SELF);
  // What the reader's argument checks need (issue 26): MPI_COMM_NULL's bits and the largest valid tag.
  handle(line, "comm_null", MPI_COMM_NULL);
  int* tag_ub = nullptr;
  int found = 0;
  if (result == MPI_SUCCESS) PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
  line.i64("tag_ub", found != 0 && tag_ub != nullptr ? *tag_ub : -1);
}

constexpr int kNotRooted = INT32_MIN;

// Collective arguments shared by the blocking and nonblocking forms.
struct Coll {
  MPI_Comm comm;
  int64_t count;  // -1: per-rank counts (the v variants)
  MPI_Datatype type;
  const MPI_Op* reduce_op;  // null: not a reduction
  int root;                 // kNotRooted: not rooted (a rooted call's root is written as given, even -1)
  bool in_place = false;    // MPI_IN_PLACE: count and type are the ones MPI reads (MPI 4.1 sec. 6.5-6.8)
  void write(JsonLine& line) const {
    handle(line, "comm", comm).i64("count", count);
    dtype(line, "dtype", type, "dtype_sig");
    if (in_place) line.i64("in_place", 1);
    if (reduce_op != nullptr) op(line, *reduce_op);
    if (root != kNotRooted) line.i64("root", root);
  }
};

int blocking(const char* name, const Coll& c, auto&& call) {
  return recorded(
      name, [&](JsonLine& l) { c.write(l); }, call, no_out);
}
int nonblocking(const char* name, const Coll& c, MPI_Request* request, auto&& call) {
  return recorded(
      name, [&](JsonLine& l) { c.write(l); }, call,
      [&](JsonLine& l, int) { handle(l, "req", request != nullptr ? *request : MPI_REQUEST_NULL); });
}

int send_like(const char* name, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              auto&& call) {
  return recorded(
      name,
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("count", count);
        dtype(l, "dtype", type, "dtype_sig").i64("peer", peer_rank(dest)).i64("tag", tag_value(tag));
        memory(l, "buf", "bytes", buf, count, type);
      },
      call, no_out);
}
int isend_like(const char* name, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request* request, auto&& call) {
  return recorded(
      name,
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("count", count);
        dtype(l, "dtype", type, "dtype_sig").i64("peer", peer_rank(dest)).i64("tag", tag_value(tag));
        memory(l, "buf", "bytes", buf, count, type);
      },
      call, [&](JsonLine& l, int) { handle(l, "req", request != nullptr ? *request : MPI_REQUEST_NULL); });
}

// Waitall and Testall: the requests on entry; on return, the source each one matched (-1: not a receive).
int all_of_requests(const char* name, int count, MPI_Request reqs[], MPI_Status statuses[], int* flag, auto&& call) {
  constexpr int kOwn = 64;
  MPI_Status mine[kOwn];
  MPI_Status* st = statuses;
  if (statuses == MPI_STATUSES_IGNORE && count <= kOwn) st = mine;
  return recorded(
      name,
      [&](JsonLine& l) {
        ListText list;
        for (int i = 0; i < count && reqs != nullptr; ++i) list.add_hex(bits(reqs[i]));
        l.i64("n", count).str("reqs", list.text());
      },
      [&] { return call(st); },
      [&](JsonLine& l, int r) {
        if (flag != nullptr) l.i64("flag", *flag);
        if (st == MPI_STATUSES_IGNORE || r != MPI_SUCCESS || (flag != nullptr && *flag == 0)) return;
        ListText list, cancelled;
        for (int i = 0; i < count; ++i) {
          list.add_int(peer_rank(st[i].MPI_SOURCE));
          int c = 0;
          if (PMPI_Test_cancelled(&st[i], &c) == MPI_SUCCESS && c != 0) cancelled.add_int(i);
        }
        l.str("sources", list.text());
        if (cancelled.text()[0] != '\0') l.str("cancelled", cancelled.text());
      });
}

// Completions of some of a list (issue 26: the reader's check that every request is completed must see them):
// the requests on entry, the indices completed on return.
int some_of_requests(const char* name, int incount, MPI_Request reqs[], int* outcount, int indices[], auto&& call) {
  return recorded(
      name,
      [&](JsonLine& l) {
        ListText list;
        for (int i = 0; i < incount && reqs != nullptr; ++i) list.add_hex(bits(reqs[i]));
        l.i64("n", incount).str("reqs", list.text());
      },
      call,
      [&](JsonLine& l, int r) {
        ListText list;
        const int n = (r == MPI_SUCCESS && outcount != nullptr && *outcount != MPI_UNDEFINED) ? *outcount : 0;
        for (int i = 0; i < n && indices != nullptr; ++i) list.add_int(indices[i]);
        l.str("indices", list.text());
      });
}
}  // namespace

#pragma GCC visibility push(default)
extern "C" {

// ---- start and end ---------------------------------------------------------------------------------
int MPI_Init(int* argc, char*** argv) {
  return recorded(
      "MPI_Init", no_args, [&] { return PMPI_Init(argc, argv); }, init_out);
}
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return recorded(
      "MPI_Init_thread", [&](JsonLine& l) { l.i64("required", required); },
      [&] { return PMPI_Init_thread(argc, argv, required, provided); }, init_out);
}
int MPI_Finalize(void) {
  return recorded(
      "MPI_Finalize", no_args, [] { return PMPI_Finalize(); }, no_out);
}
int MPI_Abort(MPI_Comm comm, int errorcode) {
  return recorded(
      "MPI_Abort", [&](JsonLine& l) { handle(l, "comm", comm).i64("errorcode", errorcode); },
      [&] { return PMPI_Abort(comm, errorcode); }, no_out);
}

// ---- communicators ---------------------------------------------------------------------------------
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_split",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("color", color == MPI_UNDEFINED ? -1 : color).i64("key", key);
        if (color < 0 && color != MPI_UNDEFINED) l.i64("invalid_color", color);  // MPI 4.1 §7.4.2: erroneous
      },
      [&] { return PMPI_Comm_split(comm, color, key, newcomm); }, [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_split_type",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("color", split_type == MPI_UNDEFINED ? -1 : split_type).i64("key", key);
      },
      [&] { return PMPI_Comm_split_type(comm, split_type, key, info, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_dup", [&](JsonLine& l) { handle(l, "comm", comm); }, [&] { return PMPI_Comm_dup(comm, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_create",
      [&](JsonLine& l) {
        int size = -1;
        if (group != MPI_GROUP_NULL) PMPI_Group_size(group, &size);
        handle(l, "comm", comm);
        handle(l, "group", group).i64("group_size", size);
      },
      [&] { return PMPI_Comm_create(comm, group, newcomm); }, [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
// Cartesian topologies (issue 26): a creation is a communicator creation; a query on a communicator without
// a Cartesian topology, or a creation with a dimension below one, is erroneous (MPI 4.1 §8.5).
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Cart_create",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("ndims", ndims);
        int64_t bad = 0;
        for (int i = 0; i < ndims && dims != nullptr; ++i)
          if (dims[i] <= 0) bad = dims[i];
        if (ndims < 0 || bad != 0) l.i64("invalid_dim", ndims < 0 ? ndims : bad);
      },
      [&] { return PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  return recorded(
      "MPI_Cart_get",
      [&](JsonLine& l) {
        handle(l, "comm", comm);
        int topo = MPI_UNDEFINED;
        if (comm != MPI_COMM_NULL && PMPI_Topo_test(comm, &topo) == MPI_SUCCESS && topo != MPI_CART)
          l.i64("not_cartesian", 1);
      },
      [&] { return PMPI_Cart_get(comm, maxdims, dims, periods, coords); }, no_out);
}
int MPI_Comm_free(MPI_Comm* comm) {
  return recorded(
      "MPI_Comm_free", [&](JsonLine& l) { handle(l, "comm", comm != nullptr ? *comm : MPI_COMM_NULL); },
      [&] { return PMPI_Comm_free(comm); }, no_out);
}

// ---- windows ---------------------------------------------------------------------------------------
int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return recorded(
      "MPI_Win_create",
      [&](JsonLine& l) { handle(l, "comm", comm).ptr("base", base).i64("size", size).i64("disp_unit", disp_unit); },
      [&] { return PMPI_Win_create(base, size, disp_unit, info, comm, win); },
      [&](JsonLine& l, int) { handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL); });
}
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return recorded(
      "MPI_Win_allocate", [&](JsonLine& l) { handle(l, "comm", comm).i64("size", size).i64("disp_unit", disp_unit); },
      [&] { return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win); },
      [&](JsonLine& l, int r) {
        void* base = nullptr;
        if (r == MPI_SUCCESS && baseptr != nullptr) std::memcpy(&base, baseptr, sizeof base);
        handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL).ptr("base", base);
      });
}
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return recorded(
      "MPI_Win_allocate_shared",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("size", size).i64("disp_unit", disp_unit); },
      [&] { return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win); },
      [&](JsonLine& l, int r) {
        void* base = nullptr;
        if (r == MPI_SUCCESS && baseptr != nullptr) std::memcpy(&base, baseptr, sizeof base);
        handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL).ptr("base", base);
      });
}
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return recorded(
      "MPI_Win_create_dynamic", [&](JsonLine& l) { handle(l, "comm", comm).ptr("base", nullptr).i64("size", 0); },
      [&] { return PMPI_Win_create_dynamic(info, comm, win); },
      [&](JsonLine& l, int) { handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL); });
}
int MPI_Win_free(MPI_Win* win) {
  return recorded(
      "MPI_Win_free", [&](JsonLine& l) { handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL); },
      [&] { return PMPI_Win_free(win); }, no_out);
}
int MPI_Win_fence(int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_fence",
      [&](JsonLine& l) {
        handle(l, "win", win).i64("assert", assertion).i64("nosucceed", (assertion & MPI_MODE_NOSUCCEED) != 0 ? 1 : 0);
      },
      [&] { return PMPI_Win_fence(assertion, win); }, no_out);
}
int MPI_Win_lock(int lock_type, int rank, int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_lock",
      [&](JsonLine& l) {
        handle(l, "win", win).i64("target", rank).str("lock", lock_type == MPI_LOCK_EXCLUSIVE ? "exclusive" : "shared");
      },
      [&] { return PMPI_Win_lock(lock_type, rank, assertion, win); }, no_out);
}
int MPI_Win_unlock(int rank, MPI_Win win) {
  return recorded(
      "MPI_Win_unlock", [&](JsonLine& l) { handle(l, "win", win).i64("target", rank); },
      [&] { return PMPI_Win_unlock(rank, win); }, no_out);
}
int MPI_Win_lock_all(int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_lock_all", [&](JsonLine& l) { handle(l, "win", win).i64("assert", assertion); },
      [&] { return PMPI_Win_lock_all(assertion, win); }, no_out);
}
int MPI_Win_unlock_all(MPI_Win win) {
  return recorded(
      "MPI_Win_unlock_all", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_unlock_all(win); },
      no_out);
}
int MPI_Win_flush(int rank, MPI_Win win) {
  return recorded(
      "MPI_Win_flush", [&](JsonLine& l) { handle(l, "win", win).i64("target", rank); },
      [&] { return PMPI_Win_flush(rank, win); }, no_out);
}
int MPI_Win_flush_all(MPI_Win win) {
  return recorded(
      "MPI_Win_flush_all", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_flush_all(win); },
      no_out);
}
int MPI_Win_flush_local(int rank, MPI_Win win) {
  return recorded(
      "MPI_Win_flush_local", [&](JsonLine& l) { handle(l, "win", win).i64("target", rank); },
      [&] { return PMPI_Win_flush_local(rank, win); }, no_out);
}
// One-sided transfers: the origin buffer (read by a put, written by a get) and the target's bytes as a
// displacement in the target's window units; the reader makes addresses of them with the target's
// MPI_Win_create (issue 26: RMA races).
void rma_args(JsonLine& l, MPI_Win win, const void* origin, int origin_count, MPI_Datatype origin_type, int target,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_type) {
  handle(l, "win", win).i64("target", target).i64("count", origin_count);
  dtype(l, "dtype", origin_type, "dtype_sig");
  dtype(l, "target_dtype", target_type, "target_dtype_sig");
  memory(l, "buf", "bytes", origin, origin_count, origin_type);
  l.i64("target_disp", target_disp).i64("target_bytes", span_bytes(target_count, target_type));
}
int MPI_Put(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win) {
  return recorded(
      "MPI_Put",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
      },
      [&] { return PMPI_Put(origin, origin_count, origin_type, target, target_disp, target_count, target_type, win); },
      no_out);
}
int MPI_Get(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win) {
  return recorded(
      "MPI_Get",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
      },
      [&] { return PMPI_Get(origin, origin_count, origin_type, target, target_disp, target_count, target_type, win); },
      no_out);
}
int MPI_Accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
                   int target_count, MPI_Datatype target_type, MPI_Op o, MPI_Win win) {
  return recorded(
      "MPI_Accumulate",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
        op(l, o);
      },
      [&] {
        return PMPI_Accumulate(origin, origin_count, origin_type, target, target_disp, target_count, target_type, o,
                               win);
      },
      no_out);
}

// ---- generalized active target synchronisation (post, start, complete, wait) ---------------------------
int MPI_Win_post(MPI_Group group, int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_post", [&](JsonLine& l) { handle(l, "win", win).i64("assert", assertion); },
      [&] { return PMPI_Win_post(group, assertion, win); }, no_out);
}
int MPI_Win_start(MPI_Group group, int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_start", [&](JsonLine& l) { handle(l, "win", win).i64("assert", assertion); },
      [&] { return PMPI_Win_start(group, assertion, win); }, no_out);
}
int MPI_Win_complete(MPI_Win win) {
  return recorded(
      "MPI_Win_complete", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_complete(win); }, no_out);
}
int MPI_Win_wait(MPI_Win win) {
  return recorded(
      "MPI_Win_wait", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_wait(win); }, no_out);
}

// ---- blocking collectives --------------------------------------------------------------------------
int MPI_Barrier(MPI_Comm comm) {
  return blocking("MPI_Barrier", {comm, 0, MPI_DATATYPE_NULL, nullptr, kNotRooted}, [&] { return PMPI_Barrier(comm); });
}
int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return blocking("MPI_Bcast", {comm, count, type, nullptr, root},
                  [&] { return PMPI_Bcast(buf, count, type, root, comm); });
}
int MPI_Reduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, int root, MPI_Comm comm) {
  return blocking("MPI_Reduce", {comm, count, type, &o, root},
                  [&] { return PMPI_Reduce(s, r, count, type, o, root, comm); });
}
int MPI_Allreduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Allreduce", {comm, count, type, &o, kNotRooted},
                  [&] { return PMPI_Allreduce(s, r, count, type, o, comm); });
}
int MPI_Scan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Scan", {comm, count, type, &o, kNotRooted},
                  [&] { return PMPI_Scan(s, r, count, type, o, comm); });
}
int MPI_Exscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Exscan", {comm, count, type, &o, kNotRooted},
                  [&] { return PMPI_Exscan(s, r, count, type, o, comm); });
}
int MPI_Reduce_scatter_block(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Reduce_scatter_block", {comm, count, type, &o, kNotRooted},
                  [&] { return PMPI_Reduce_scatter_block(s, r, count, type, o, comm); });
}
int MPI_Reduce_scatter(const void* s, void* r, const int counts[], MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Reduce_scatter", {comm, -1, type, &o, kNotRooted},
                  [&] { return PMPI_Reduce_scatter(s, r, counts, type, o, comm); });
}
int MPI_Allgather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  const bool ip = s == MPI_IN_PLACE;  // the send count and type are ignored (MPI 4.1 sec. 6.7)
  return blocking("MPI_Allgather", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, kNotRooted, ip},
                  [&] { return PMPI_Allgather(s, scount, stype, r, rcount, rtype, comm); });
}
int MPI_Allgatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[], const int displs[],
                   MPI_Datatype rtype, MPI_Comm comm) {
  const bool ip = s == MPI_IN_PLACE;
  return blocking("MPI_Allgatherv", {comm, -1, ip ? rtype : stype, nullptr, kNotRooted, ip},
                  [&] { return PMPI_Allgatherv(s, scount, stype, r, rcounts, displs, rtype, comm); });
}
int MPI_Gather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  const bool ip = s == MPI_IN_PLACE;  // at the root: its send arguments are ignored (MPI 4.1 sec. 6.5)
  return blocking("MPI_Gather", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, root, ip},
                  [&] { return PMPI_Gather(s, scount, stype, r, rcount, rtype, root, comm); });
}
int MPI_Gatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  const bool ip = s == MPI_IN_PLACE;
  return blocking("MPI_Gatherv", {comm, -1, ip ? rtype : stype, nullptr, root, ip},
                  [&] { return PMPI_Gatherv(s, scount, stype, r, rcounts, displs, rtype, root, comm); });
}
int MPI_Scatter(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  const bool ip = r == MPI_IN_PLACE;  // at the root: its receive arguments are ignored (MPI 4.1 sec. 6.6)
  return blocking("MPI_Scatter", {comm, ip ? scount : rcount, ip ? stype : rtype, nullptr, root, ip},
                  [&] { return PMPI_Scatter(s, scount, stype, r, rcount, rtype, root, comm); });
}
int MPI_Scatterv(const void* s, const int scounts[], const int displs[], MPI_Datatype stype, void* r, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
  const bool ip = r == MPI_IN_PLACE;
  return blocking("MPI_Scatterv", {comm, -1, ip ? stype : rtype, nullptr, root, ip},
                  [&] { return PMPI_Scatterv(s, scounts, displs, stype, r, rcount, rtype, root, comm); });
}
int MPI_Alltoall(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  const bool ip = s == MPI_IN_PLACE;  // the send count and type are ignored (MPI 4.1 sec. 6.8)
  return blocking("MPI_Alltoall", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, kNotRooted, ip},
                  [&] { return PMPI_Alltoall(s, scount, stype, r, rcount, rtype, comm); });
}
int MPI_Alltoallv(const void* s, const int scounts[], const int sdispls[], MPI_Datatype stype, void* r,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  const bool ip = s == MPI_IN_PLACE;
  return blocking("MPI_Alltoallv", {comm, -1, ip ? rtype : stype, nullptr, kNotRooted, ip},
                  [&] { return PMPI_Alltoallv(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm); });
}

// ---- nonblocking collectives -----------------------------------------------------------------------
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Ibarrier", {comm, 0, MPI_DATATYPE_NULL, nullptr, kNotRooted}, req,
                     [&] { return PMPI_Ibarrier(comm, req); });
}
int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Ibcast", {comm, count, type, nullptr, root}, req,
                     [&] { return PMPI_Ibcast(buf, count, type, root, comm, req); });
}
int MPI_Ireduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, int root, MPI_Comm comm,
                MPI_Request* req) {
  return nonblocking("MPI_Ireduce", {comm, count, type, &o, root}, req,
                     [&] { return PMPI_Ireduce(s, r, count, type, o, root, comm, req); });
}
int MPI_Iallreduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Iallreduce", {comm, count, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Iallreduce(s, r, count, type, o, comm, req); });
}
int MPI_Iscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Iscan", {comm, count, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Iscan(s, r, count, type, o, comm, req); });
}
int MPI_Iexscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Iexscan", {comm, count, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Iexscan(s, r, count, type, o, comm, req); });
}
int MPI_Ireduce_scatter_block(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm,
                              MPI_Request* req) {
  return nonblocking("MPI_Ireduce_scatter_block", {comm, count, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Ireduce_scatter_block(s, r, count, type, o, comm, req); });
}
int MPI_Iallgather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request* req) {
  const bool ip = s == MPI_IN_PLACE;
  return nonblocking("MPI_Iallgather", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, kNotRooted, ip}, req,
                     [&] { return PMPI_Iallgather(s, scount, stype, r, rcount, rtype, comm, req); });
}
int MPI_Igather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm, MPI_Request* req) {
  const bool ip = s == MPI_IN_PLACE;
  return nonblocking("MPI_Igather", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, root, ip}, req,
                     [&] { return PMPI_Igather(s, scount, stype, r, rcount, rtype, root, comm, req); });
}
int MPI_Iscatter(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request* req) {
  const bool ip = r == MPI_IN_PLACE;
  return nonblocking("MPI_Iscatter", {comm, ip ? scount : rcount, ip ? stype : rtype, nullptr, root, ip}, req,
                     [&] { return PMPI_Iscatter(s, scount, stype, r, rcount, rtype, root, comm, req); });
}
int MPI_Ialltoall(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, MPI_Comm comm,
                  MPI_Request* req) {
  const bool ip = s == MPI_IN_PLACE;
  return nonblocking("MPI_Ialltoall", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, kNotRooted, ip}, req,
                     [&] { return PMPI_Ialltoall(s, scount, stype, r, rcount, rtype, comm, req); });
}

int MPI_Ireduce_scatter(const void* s, void* r, const int counts[], MPI_Datatype type, MPI_Op o, MPI_Comm comm,
                        MPI_Request* req) {
  return nonblocking("MPI_Ireduce_scatter", {comm, -1, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Ireduce_scatter(s, r, counts, type, o, comm, req); });
}
int MPI_Iallgatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[], const int displs[],
                    MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  const bool ip = s == MPI_IN_PLACE;
  return nonblocking("MPI_Iallgatherv", {comm, -1, ip ? rtype : stype, nullptr, kNotRooted, ip}, req,
                     [&] { return PMPI_Iallgatherv(s, scount, stype, r, rcounts, displs, rtype, comm, req); });
}
int MPI_Igatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[], const int displs[],
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  const bool ip = s == MPI_IN_PLACE;
  return nonblocking("MPI_Igatherv", {comm, -1, ip ? rtype : stype, nullptr, root, ip}, req,
                     [&] { return PMPI_Igatherv(s, scount, stype, r, rcounts, displs, rtype, root, comm, req); });
}
int MPI_Iscatterv(const void* s, const int scounts[], const int displs[], MPI_Datatype stype, void* r, int rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  const bool ip = r == MPI_IN_PLACE;
  return nonblocking("MPI_Iscatterv", {comm, -1, ip ? stype : rtype, nullptr, root, ip}, req,
                     [&] { return PMPI_Iscatterv(s, scounts, displs, stype, r, rcount, rtype, root, comm, req); });
}
int MPI_Ialltoallv(const void* s, const int scounts[], const int sdispls[], MPI_Datatype stype, void* r,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  const bool ip = s == MPI_IN_PLACE;
  return nonblocking("MPI_Ialltoallv", {comm, -1, ip ? rtype : stype, nullptr, kNotRooted, ip}, req, [&] {
    return PMPI_Ialltoallv(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm, req);
  });
}

// ---- point to point --------------------------------------------------------------------------------
int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return send_like("MPI_Send", buf, count, type, dest, tag, comm,
                   [&] { return PMPI_Send(buf, count, type, dest, tag, comm); });
}
int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return send_like("MPI_Ssend", buf, count, type, dest, tag, comm,
                   [&] { return PMPI_Ssend(buf, count, type, dest, tag, comm); });
}
int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return send_like("MPI_Bsend", buf, count, type, dest, tag, comm,
                   [&] { return PMPI_Bsend(buf, count, type, dest, tag, comm); });
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return send_like("MPI_Rsend", buf, count, type, dest, tag, comm,
                   [&] { return PMPI_Rsend(buf, count, type, dest, tag, comm); });
}
int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Isend", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Isend(buf, count, type, dest, tag, comm, req); });
}
int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Issend", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Issend(buf, count, type, dest, tag, comm, req); });
}
int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Recv",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("count", count);
        dtype(l, "dtype", type, "dtype_sig").i64("peer", peer_rank(source)).i64("tag", tag_value(tag));
        memory(l, "buf", "bytes", buf, count, type);
      },
      [&] { return PMPI_Recv(buf, count, type, source, tag, comm, st); },
      [&](JsonLine& l, int r) { status_out(l, r, *st); });
}
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Irecv", buf, count, type, source, tag, comm, req,
                    [&] { return PMPI_Irecv(buf, count, type, source, tag, comm, req); });
}
int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Sendrecv",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("count", scount);
        dtype(l, "dtype", stype, "dtype_sig").i64("peer", peer_rank(dest)).i64("tag", tag_value(stag));
        l.i64("recv_count", rcount);
        dtype(l, "recv_dtype", rtype, "recv_dtype_sig")
            .i64("recv_peer", peer_rank(source))
            .i64("recv_tag", tag_value(rtag));
        memory(l, "buf", "bytes", sbuf, scount, stype);
        memory(l, "recv_buf", "recv_bytes", rbuf, rcount, rtype);
      },
      [&] { return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, st); },
      [&](JsonLine& l, int r) { status_out(l, r, *st); });
}
// Persistent requests (issue 26): the reader keeps each one's operation and turns every MPI_Start of the
// request into it (MPI 4.1 sec. 3.9).
int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Send_init", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Send_init(buf, count, type, dest, tag, comm, req); });
}
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Ssend_init", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Ssend_init(buf, count, type, dest, tag, comm, req); });
}
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Bsend_init", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Bsend_init(buf, count, type, dest, tag, comm, req); });
}
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Rsend_init", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Rsend_init(buf, count, type, dest, tag, comm, req); });
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Recv_init", buf, count, type, source, tag, comm, req,
                    [&] { return PMPI_Recv_init(buf, count, type, source, tag, comm, req); });
}
int MPI_Start(MPI_Request* req) {
  return recorded(
      "MPI_Start", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Start(req); }, no_out);
}
int MPI_Startall(int count, MPI_Request reqs[]) {
  return recorded(
      "MPI_Startall",
      [&](JsonLine& l) {
        ListText list;
        for (int i = 0; i < count && reqs != nullptr; ++i) list.add_hex(bits(reqs[i]));
        l.i64("n", count).str("reqs", list.text());
      },
      [&] { return PMPI_Startall(count, reqs); }, no_out);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Probe",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("peer", peer_rank(source)).i64("tag", tag_value(tag)); },
      [&] { return PMPI_Probe(source, tag, comm, st); }, [&](JsonLine& l, int r) { status_out(l, r, *st); });
}

// ---- completion ------------------------------------------------------------------------------------
int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Wait", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Wait(req, st); }, [&](JsonLine& l, int r) { status_out(l, r, *st); });
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  return all_of_requests("MPI_Waitall", count, reqs, statuses, nullptr,
                         [&](MPI_Status* st) { return PMPI_Waitall(count, reqs, st); });
}
int MPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  return all_of_requests("MPI_Testall", count, reqs, statuses, flag,
                         [&](MPI_Status* st) { return PMPI_Testall(count, reqs, flag, st); });
}
int MPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Waitany",
      [&](JsonLine& l) {
        ListText list;
        for (int i = 0; i < count && reqs != nullptr; ++i) list.add_hex(bits(reqs[i]));
        l.i64("n", count).str("reqs", list.text());
      },
      [&] { return PMPI_Waitany(count, reqs, index, st); },
      [&](JsonLine& l, int r) {
        l.i64("index", index != nullptr && *index != MPI_UNDEFINED ? *index : -1);
        status_out(l, r, *st);
      });
}
int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Test", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Test(req, flag, st); },
      [&](JsonLine& l, int r) {
        l.i64("flag", flag != nullptr ? *flag : 0);
        status_out(l, r, *st);
      });
}
int MPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  return some_of_requests("MPI_Waitsome", incount, reqs, outcount, indices,
                          [&] { return PMPI_Waitsome(incount, reqs, outcount, indices, statuses); });
}
int MPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  return some_of_requests("MPI_Testsome", incount, reqs, outcount, indices,
                          [&] { return PMPI_Testsome(incount, reqs, outcount, indices, statuses); });
}
int MPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  int one = 0;
  int done = 0;
  return some_of_requests("MPI_Testany", count, reqs, &done, &one, [&] {
    const int r = PMPI_Testany(count, reqs, index, flag, status);
    if (r == MPI_SUCCESS && flag != nullptr && *flag != 0 && index != nullptr && *index != MPI_UNDEFINED) {
      one = *index;
      done = 1;
    }
    return r;
  });
}
int MPI_Request_free(MPI_Request* req) {
  return recorded(
      "MPI_Request_free", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Request_free(req); }, no_out);
}

// ---- issue 32: every constructor and destructor of a communicator ----------------------------------------
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_create_group",
      [&](JsonLine& l) {
        int size = -1;
        if (group != MPI_GROUP_NULL) PMPI_Group_size(group, &size);
        handle(l, "comm", comm).i64("tag", tag).i64("group_size", size);
      },
      [&] { return PMPI_Comm_create_group(comm, group, tag, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_dup_with_info", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] { return PMPI_Comm_dup_with_info(comm, info, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
// A nonblocking dup: its communicator may be used once the request completed (MPI 4.1 sec. 7.4.2).
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* req) {
  return recorded(
      "MPI_Comm_idup", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] { return PMPI_Comm_idup(comm, newcomm, req); },
      [&](JsonLine& l, int r) {
        new_comm(l, r, newcomm, false);
        handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL);
      });
}
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm* newintercomm) {
  return recorded(
      "MPI_Intercomm_create",
      [&](JsonLine& l) {
        handle(l, "comm", local_comm).i64("local_leader", local_leader).i64("remote_leader", remote_leader);
        handle(l, "peer_comm", peer_comm).i64("tag", tag);
      },
      [&] { return PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newintercomm); });
}
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return recorded(
      "MPI_Intercomm_merge", [&](JsonLine& l) { handle(l, "comm", intercomm).i64("high", high); },
      [&] { return PMPI_Intercomm_merge(intercomm, high, newintracomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newintracomm); });
}
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return recorded(
      "MPI_Cart_sub", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] { return PMPI_Cart_sub(comm, remain_dims, newcomm); }, [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Graph_create", [&](JsonLine& l) { handle(l, "comm", comm).i64("nnodes", nnodes); },
      [&] { return PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Dist_graph_create", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] { return PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Dist_graph_create_adjacent", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] {
        return PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations,
                                               destweights, info, reorder, newcomm);
      },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_disconnect(MPI_Comm* comm) {
  return recorded(
      "MPI_Comm_disconnect", [&](JsonLine& l) { handle(l, "comm", comm != nullptr ? *comm : MPI_COMM_NULL); },
      [&] { return PMPI_Comm_disconnect(comm); }, no_out);
}

// ---- issue 32: every send mode, cancel, matched probes ------------------------------------------------
int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Ibsend", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Ibsend(buf, count, type, dest, tag, comm, req); });
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Irsend", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Irsend(buf, count, type, dest, tag, comm, req); });
}
int MPI_Cancel(MPI_Request* req) {
  return recorded(
      "MPI_Cancel", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Cancel(req); }, no_out);
}
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Iprobe",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("peer", peer_rank(source)).i64("tag", tag_value(tag)); },
      [&] { return PMPI_Iprobe(source, tag, comm, flag, st); },
      [&](JsonLine& l, int r) {
        l.i64("flag", flag != nullptr ? *flag : 0);
        if (flag != nullptr && *flag != 0) status_out(l, r, *st);
      });
}
// A matched probe takes the message out of matching (MPI 4.1 sec. 3.8.2): the receive happens here; the
// MPI_Mrecv or MPI_Imrecv of its message handle only copies it.
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Mprobe",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("peer", peer_rank(source)).i64("tag", tag_value(tag)); },
      [&] { return PMPI_Mprobe(source, tag, comm, message, st); },
      [&](JsonLine& l, int r) {
        handle(l, "message", message != nullptr ? *message : MPI_MESSAGE_NULL);
        status_out(l, r, *st);
      });
}
int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Improbe",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("peer", peer_rank(source)).i64("tag", tag_value(tag)); },
      [&] { return PMPI_Improbe(source, tag, comm, flag, message, st); },
      [&](JsonLine& l, int r) {
        l.i64("flag", flag != nullptr ? *flag : 0);
        if (flag == nullptr || *flag == 0) return;
        handle(l, "message", message != nullptr ? *message : MPI_MESSAGE_NULL);
        status_out(l, r, *st);
      });
}
int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Mrecv",
      [&](JsonLine& l) {
        handle(l, "message", message != nullptr ? *message : MPI_MESSAGE_NULL).i64("count", count);
        dtype(l, "dtype", type, "dtype_sig");
        memory(l, "buf", "bytes", buf, count, type);
      },
      [&] { return PMPI_Mrecv(buf, count, type, message, st); }, [&](JsonLine& l, int r) { status_out(l, r, *st); });
}
int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* req) {
  return recorded(
      "MPI_Imrecv",
      [&](JsonLine& l) {
        handle(l, "message", message != nullptr ? *message : MPI_MESSAGE_NULL).i64("count", count);
        dtype(l, "dtype", type, "dtype_sig");
        memory(l, "buf", "bytes", buf, count, type);
      },
      [&] { return PMPI_Imrecv(buf, count, type, message, req); },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
int MPI_Buffer_attach(void* buffer, int size) {
  return recorded(
      "MPI_Buffer_attach", [&](JsonLine& l) { l.ptr("buf", buffer).i64("size", size); },
      [&] { return PMPI_Buffer_attach(buffer, size); }, no_out);
}
int MPI_Buffer_detach(void* buffer, int* size) {
  return recorded(
      "MPI_Buffer_detach", no_args, [&] { return PMPI_Buffer_detach(buffer, size); }, no_out);
}

// ---- issue 32: datatypes: constructors (with the new type's flattened signature), commit, free ----------
int type_made(const char* name, MPI_Datatype* newtype, auto&& call) {
  return recorded(name, no_args, call, [&](JsonLine& l, int r) {
    const MPI_Datatype t = (r == MPI_SUCCESS && newtype != nullptr) ? *newtype : MPI_DATATYPE_NULL;
    handle(l, "newtype", t);
    if (t != MPI_DATATYPE_NULL) dtype(l, "dtype", t, "dtype_sig");
  });
}
int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_contiguous", t, [&] { return PMPI_Type_contiguous(count, old, t); });
}
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_vector", t, [&] { return PMPI_Type_vector(count, blocklength, stride, old, t); });
}
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_create_hvector", t,
                   [&] { return PMPI_Type_create_hvector(count, blocklength, stride, old, t); });
}
int MPI_Type_indexed(int count, const int blocklengths[], const int displs[], MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_indexed", t, [&] { return PMPI_Type_indexed(count, blocklengths, displs, old, t); });
}
int MPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displs[], MPI_Datatype old,
                             MPI_Datatype* t) {
  return type_made("MPI_Type_create_hindexed", t,
                   [&] { return PMPI_Type_create_hindexed(count, blocklengths, displs, old, t); });
}
int MPI_Type_create_indexed_block(int count, int blocklength, const int displs[], MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_create_indexed_block", t,
                   [&] { return PMPI_Type_create_indexed_block(count, blocklength, displs, old, t); });
}
int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displs[], MPI_Datatype old,
                                   MPI_Datatype* t) {
  return type_made("MPI_Type_create_hindexed_block", t,
                   [&] { return PMPI_Type_create_hindexed_block(count, blocklength, displs, old, t); });
}
int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displs[], const MPI_Datatype types[],
                           MPI_Datatype* t) {
  return type_made("MPI_Type_create_struct", t,
                   [&] { return PMPI_Type_create_struct(count, blocklengths, displs, types, t); });
}
int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                             MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_create_subarray", t,
                   [&] { return PMPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old, t); });
}
int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* t) {
  return type_made("MPI_Type_create_resized", t, [&] { return PMPI_Type_create_resized(old, lb, extent, t); });
}
int MPI_Type_dup(MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_dup", t, [&] { return PMPI_Type_dup(old, t); });
}
int MPI_Type_commit(MPI_Datatype* t) {
  return recorded(
      "MPI_Type_commit", [&](JsonLine& l) { handle(l, "type", t != nullptr ? *t : MPI_DATATYPE_NULL); },
      [&] { return PMPI_Type_commit(t); }, no_out);
}
int MPI_Type_free(MPI_Datatype* t) {
  return recorded(
      "MPI_Type_free", [&](JsonLine& l) { handle(l, "type", t != nullptr ? *t : MPI_DATATYPE_NULL); },
      [&] { return PMPI_Type_free(t); }, no_out);
}

// ---- issue 32: the other RMA calls -------------------------------------------------------------------
int MPI_Win_flush_local_all(MPI_Win win) {
  return recorded(
      "MPI_Win_flush_local_all", [&](JsonLine& l) { handle(l, "win", win); },
      [&] { return PMPI_Win_flush_local_all(win); }, no_out);
}
int MPI_Win_sync(MPI_Win win) {
  return recorded(
      "MPI_Win_sync", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_sync(win); }, no_out);
}
int MPI_Win_test(MPI_Win win, int* flag) {
  return recorded(
      "MPI_Win_test", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_test(win, flag); },
      [&](JsonLine& l, int) { l.i64("flag", flag != nullptr ? *flag : 0); });
}
// Request-based transfers (MPI 4.1 sec. 12.3.5): an RMA call of its epoch whose request completes it locally.
int MPI_Rput(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* req) {
  return recorded(
      "MPI_Rput",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
      },
      [&] {
        return PMPI_Rput(origin, origin_count, origin_type, target, target_disp, target_count, target_type, win, req);
      },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
int MPI_Rget(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* req) {
  return recorded(
      "MPI_Rget",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
      },
      [&] {
        return PMPI_Rget(origin, origin_count, origin_type, target, target_disp, target_count, target_type, win, req);
      },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
int MPI_Raccumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
                    int target_count, MPI_Datatype target_type, MPI_Op o, MPI_Win win, MPI_Request* req) {
  return recorded(
      "MPI_Raccumulate",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
        op(l, o);
      },
      [&] {
        return PMPI_Raccumulate(origin, origin_count, origin_type, target, target_disp, target_count, target_type, o,
                                win, req);
      },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
int MPI_Rget_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result, int result_count,
                        MPI_Datatype result_type, int target, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_type, MPI_Op o, MPI_Win win, MPI_Request* req) {
  return recorded(
      "MPI_Rget_accumulate",
      [&](JsonLine& l) {
        const bool no_op = o == MPI_NO_OP;  // the origin arguments are ignored (MPI 4.1 sec. 12.3.4)
        rma_args(l, win, no_op ? result : origin, no_op ? result_count : origin_count,
                 no_op ? result_type : origin_type, target, target_disp, target_count, target_type);
        memory(l, "result_buf", "result_bytes", result, result_count, result_type);
        op(l, o);
      },
      [&] {
        return PMPI_Rget_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target,
                                    target_disp, target_count, target_type, o, win, req);
      },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
// Atomic read-modify-write transfers: accesses like MPI_Accumulate's (they do not race with each other).
int MPI_Get_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result, int result_count,
                       MPI_Datatype result_type, int target, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_type, MPI_Op o, MPI_Win win) {
  return recorded(
      "MPI_Get_accumulate",
      [&](JsonLine& l) {
        // With MPI_NO_OP the origin arguments are ignored (MPI 4.1 sec. 12.3.4): the result's are written.
        const bool no_op = o == MPI_NO_OP;
        rma_args(l, win, no_op ? result : origin, no_op ? result_count : origin_count,
                 no_op ? result_type : origin_type, target, target_disp, target_count, target_type);
        memory(l, "result_buf", "result_bytes", result, result_count, result_type);
        op(l, o);
      },
      [&] {
        return PMPI_Get_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target,
                                   target_disp, target_count, target_type, o, win);
      },
      no_out);
}
int MPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype type, int target, MPI_Aint target_disp, MPI_Op o,
                     MPI_Win win) {
  return recorded(
      "MPI_Fetch_and_op",
      [&](JsonLine& l) {
        rma_args(l, win, origin, 1, type, target, target_disp, 1, type);
        memory(l, "result_buf", "result_bytes", result, 1, type);
        op(l, o);
      },
      [&] { return PMPI_Fetch_and_op(origin, result, type, target, target_disp, o, win); }, no_out);
}
int MPI_Compare_and_swap(const void* origin, const void* compare, void* result, MPI_Datatype type, int target,
                         MPI_Aint target_disp, MPI_Win win) {
  return recorded(
      "MPI_Compare_and_swap",
      [&](JsonLine& l) {
        rma_args(l, win, origin, 1, type, target, target_disp, 1, type);
        memory(l, "result_buf", "result_bytes", result, 1, type);
      },
      [&] { return PMPI_Compare_and_swap(origin, compare, result, type, target, target_disp, win); }, no_out);
}

// ---- issue 32: collectives with a type per peer (their types are not compared) -------------------------
int MPI_Alltoallw(const void* s, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* r,
                  const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
  return recorded(
      "MPI_Alltoallw", [&](JsonLine& l) { handle(l, "comm", comm).i64("count", -1); },
      [&] { return PMPI_Alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm); }, no_out);
}
int MPI_Ialltoallw(const void* s, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* r,
                   const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                   MPI_Request* req) {
  return recorded(
      "MPI_Ialltoallw", [&](JsonLine& l) { handle(l, "comm", comm).i64("count", -1); },
      [&] { return PMPI_Ialltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, req); },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
// Neighbourhood collectives (MPI 4.1 sec. 8.6): every member of the topology communicator calls them.
int neighbor(const char* name, MPI_Comm comm, auto&& call) {
  return recorded(
      name, [&](JsonLine& l) { handle(l, "comm", comm).i64("count", -1); }, call, no_out);
}
int MPI_Neighbor_allgather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                           MPI_Comm comm) {
  return neighbor("MPI_Neighbor_allgather", comm,
                  [&] { return PMPI_Neighbor_allgather(s, scount, stype, r, rcount, rtype, comm); });
}
int MPI_Neighbor_allgatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[],
                            const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  return neighbor("MPI_Neighbor_allgatherv", comm,
                  [&] { return PMPI_Neighbor_allgatherv(s, scount, stype, r, rcounts, displs, rtype, comm); });
}
int MPI_Neighbor_alltoall(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                          MPI_Comm comm) {
  return neighbor("MPI_Neighbor_alltoall", comm,
                  [&] { return PMPI_Neighbor_alltoall(s, scount, stype, r, rcount, rtype, comm); });
}
int MPI_Neighbor_alltoallv(const void* s, const int scounts[], const int sdispls[], MPI_Datatype stype, void* r,
                           const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  return neighbor("MPI_Neighbor_alltoallv", comm, [&] {
    return PMPI_Neighbor_alltoallv(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm);
  });
}
int MPI_Neighbor_alltoallw(const void* s, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                           void* r, const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                           MPI_Comm comm) {
  return neighbor("MPI_Neighbor_alltoallw", comm, [&] {
    return PMPI_Neighbor_alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm);
  });
}
// A generalized request (MPI 4.1 sec. 13.2): completed by the program itself, not by a peer.
int MPI_Grequest_start(MPI_Grequest_query_function* query, MPI_Grequest_free_function* free_fn,
                       MPI_Grequest_cancel_function* cancel, void* extra, MPI_Request* req) {
  return recorded(
      "MPI_Grequest_start", no_args, [&] { return PMPI_Grequest_start(query, free_fn, cancel, extra, req); },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}

}  // extern "C"
#pragma GCC visibility pop
