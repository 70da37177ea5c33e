// What every MPI recorder hook shares (record/mpi): handles' bits, rank and list texts, type signatures,
// buffers, groups, the one `recorded` template that writes a call's entry and return lines. Included by
// mpi_hooks.cpp (start and end, communicators, windows, collectives, point to point, completion) and
// mpi_hooks_more.cpp (every other constructor, send mode, datatype, RMA and per-peer collective).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "call_record.h"

namespace collmc::recorder::mpi_hooks {

using collmc::recorder::CallRecord;
using collmc::recorder::JsonLine;

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
inline int64_t peer_rank(int rank) {
  if (rank == MPI_ANY_SOURCE) return -1;
  if (rank == MPI_PROC_NULL) return -2;
  return rank;
}
inline int64_t tag_value(int tag) { return tag == MPI_ANY_TAG ? -1 : tag; }

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
inline JsonLine& dtype(JsonLine& line, const char* key, MPI_Datatype type, const char* sig_key = nullptr) {
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
inline int64_t span_bytes(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS || size < 0) return 0;
  return static_cast<int64_t>(count) * size;
}

// A buffer's address and the bytes MPI reads or writes there (issue 26: the reader finds RMA races and
// overlapping buffers with them). `key` names the address, `key` + "_bytes" its length.
inline JsonLine& memory(JsonLine& line, const char* addr_key, const char* bytes_key, const void* buf, int count,
                        MPI_Datatype type) {
  return line.ptr(addr_key, buf).i64(bytes_key, span_bytes(count, type));
}

inline JsonLine& op(JsonLine& line, MPI_Op o) {
  // MPI's predefined operations by the names the reader knows; any other is a user operation.
  const std::pair<MPI_Op, const char*> names[] = {
      {MPI_SUM, "sum"},        {MPI_PROD, "prod"},     {MPI_MAX, "max"},      {MPI_MIN, "min"},
      {MPI_LAND, "land"},      {MPI_LOR, "lor"},       {MPI_BAND, "band"},    {MPI_BOR, "bor"},
      {MPI_MAXLOC, "maxloc"},  {MPI_MINLOC, "minloc"}, {MPI_OP_NULL, "null"}, {MPI_NO_OP, "no_op"},
      {MPI_REPLACE, "replace"}};
  for (const auto& [known, name] : names)
    if (o == known) return line.str("op", name);
  return line.str("op", "user");
}

// The world ranks of a group's members, in the group's rank order ("0,2,3"; -1 for a process outside
// MPI_COMM_WORLD). Cut with "..." past a line's length: the reader then falls back on what members agree on.
inline void world_ranks(JsonLine& line, const char* key, MPI_Group group) {
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
inline void comm_groups(JsonLine& line, MPI_Comm c) {
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
inline void new_comm(JsonLine& line, int result, const MPI_Comm* comm, bool complete = true) {
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
inline void status_out(JsonLine& line, int result, const MPI_Status& status) {
  line.i64("source", result == MPI_SUCCESS ? peer_rank(status.MPI_SOURCE) : -1)
      .i64("tag", result == MPI_SUCCESS ? tag_value(status.MPI_TAG) : -1);
  int cancelled = 0;  // MPI_Cancel took effect (MPI 4.1 sec. 3.8.4): the operation moved no message
  if (result == MPI_SUCCESS && PMPI_Test_cancelled(&status, &cancelled) == MPI_SUCCESS && cancelled != 0)
    line.i64("cancelled", 1);
}

// The program's loads and stores (mpi_memory_hooks.cpp): memory an MPI call names is watched from then on;
// the accesses of this thread since its last MPI call are written before the next one enters.
void watch_memory(const void* buf, int64_t bytes);
void write_memory_accesses();

// One recorded call: `args` fills the entry line, `call` runs PMPI, `out` adds the outputs to the return
// line. When the process records nothing, only `call` runs.
template <class Args, class Call, class Out>
int recorded(const char* name, Args&& args, Call&& call, Out&& out) {
  write_memory_accesses();  // before the entry: they came between this thread's last MPI call and this one
  CallRecord rec(name);
  if (!rec.active()) return call();
  args(rec.args());
  rec.entered();
  const int r = call();
  out(rec.result(r), r);
  rec.returned();
  return r;
}

inline const auto no_args = [](JsonLine&) {};
inline const auto no_out = [](JsonLine&, int) {};

// Everything the reader needs to know of the process after MPI_Init: its world rank, the world's size
// and the handles of MPI_COMM_WORLD and MPI_COMM_SELF.
inline void init_out(JsonLine& line, int result) {
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

inline constexpr int kNotRooted = INT32_MIN;

// One side (send or receive) of a v-collective as MPI reads it on this rank: its type and the least and the
// greatest of its counts. MPI matches the type signature of each pair of ranks (MPI 4.1 sec. 6.5-6.8), and a
// pair with a zero count exchanges nothing, so the reader needs to know whether a count is zero; the counts
// themselves (one per rank of the comm) are not written.
struct VSide {
  bool read = false;  // false: MPI ignores this side here (MPI_IN_PLACE, the receive side of a non-root)
  MPI_Datatype type = MPI_DATATYPE_NULL;
  int64_t min = 0, max = 0;
  static VSide one(MPI_Datatype type, int count) { return {true, type, count, count}; }
  static VSide all(MPI_Datatype type, const int counts[], int n) {
    VSide side{true, type, 0, 0};
    for (int i = 0; i < n && counts != nullptr; ++i) {
      side.min = i == 0 ? counts[i] : std::min<int64_t>(side.min, counts[i]);
      side.max = i == 0 ? counts[i] : std::max<int64_t>(side.max, counts[i]);
    }
    return side;
  }
  void write(JsonLine& line, const char* prefix) const {
    if (!read) return;
    const std::string p = prefix;
    dtype(line, (p + "dtype").c_str(), type, (p + "dtype_sig").c_str());
    line.i64((p + "min").c_str(), min).i64((p + "max").c_str(), max);
  }
};

// The ranks a v-collective's count arrays have (the remote group's on an intercommunicator), and this rank.
inline int comm_peers(MPI_Comm comm) {
  int inter = 0, n = 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
  if ((inter != 0 ? PMPI_Comm_remote_size(comm, &n) : PMPI_Comm_size(comm, &n)) != MPI_SUCCESS) return 0;
  return n;
}
inline int comm_rank(MPI_Comm comm) {
  int rank = -1;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return -1;
  return rank;
}

// Collective arguments shared by the blocking and nonblocking forms.
struct Coll {
  MPI_Comm comm;
  int64_t count;  // -1: per-rank counts (the v variants)
  MPI_Datatype type;
  const MPI_Op* reduce_op;  // null: not a reduction
  int root;                 // kNotRooted: not rooted (a rooted call's root is written as given, even -1)
  bool in_place = false;    // MPI_IN_PLACE: count and type are the ones MPI reads (MPI 4.1 sec. 6.5-6.8)
  VSide vsend{}, vrecv{};   // a v-collective's sides ("v_send_*", "v_recv_*")
  void write(JsonLine& line) const {
    handle(line, "comm", comm).i64("count", count);
    dtype(line, "dtype", type, "dtype_sig");
    if (in_place) line.i64("in_place", 1);
    if (reduce_op != nullptr) op(line, *reduce_op);
    if (root != kNotRooted) line.i64("root", root);
    vsend.write(line, "v_send_");
    vrecv.write(line, "v_recv_");
  }
};

// The v-collectives' arguments, each side as MPI reads it on this rank (MPI 4.1 sec. 6.5, 6.6, 6.7, 6.8). On
// MPI_COMM_NULL nothing is asked of the comm (the call is erroneous; MPI's error handler would stop the run
// before its line is written).
inline bool is_inter(MPI_Comm comm) {
  int inter = 0;
  return PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && inter != 0;
}
inline Coll allgatherv_args(MPI_Comm comm, const void* s, int scount, MPI_Datatype stype, const int rcounts[],
                            MPI_Datatype rtype) {
  const bool ip = s == MPI_IN_PLACE;  // this rank's part is rcounts[rank] of rtype, in place in the receive buffer
  Coll c{comm, -1, ip ? rtype : stype, nullptr, kNotRooted, ip};
  if (comm == MPI_COMM_NULL) return c;
  const int n = comm_peers(comm), me = comm_rank(comm);
  if (!ip)
    c.vsend = VSide::one(stype, scount);
  else if (rcounts != nullptr && me >= 0 && me < n)
    c.vsend = VSide::one(rtype, rcounts[me]);
  c.vrecv = VSide::all(rtype, rcounts, n);
  return c;
}
inline Coll alltoallv_args(MPI_Comm comm, const void* s, const int scounts[], MPI_Datatype stype, const int rcounts[],
                           MPI_Datatype rtype) {
  const bool ip = s == MPI_IN_PLACE;  // sent from the receive buffer, as rcounts and rtype say (sec. 6.8)
  Coll c{comm, -1, ip ? rtype : stype, nullptr, kNotRooted, ip};
  if (comm == MPI_COMM_NULL) return c;
  const int n = comm_peers(comm);
  c.vsend = ip ? VSide::all(rtype, rcounts, n) : VSide::all(stype, scounts, n);
  c.vrecv = VSide::all(rtype, rcounts, n);
  return c;
}
// Gatherv: every rank sends, the root alone receives (on an intercommunicator the root group's MPI_ROOT
// receives, the other group sends); the root's MPI_IN_PLACE leaves its own part where it is.
inline Coll gatherv_args(MPI_Comm comm, const void* s, int scount, MPI_Datatype stype, const int rcounts[],
                         MPI_Datatype rtype, int root) {
  const bool ip = s == MPI_IN_PLACE;
  Coll c{comm, -1, ip ? rtype : stype, nullptr, root, ip};
  if (comm == MPI_COMM_NULL) return c;
  const bool inter = is_inter(comm);
  const bool receives = inter ? root == MPI_ROOT : root == comm_rank(comm);
  const bool sends = inter ? root != MPI_ROOT && root != MPI_PROC_NULL : !ip;
  if (sends) c.vsend = VSide::one(stype, scount);
  if (receives) c.vrecv = VSide::all(rtype, rcounts, comm_peers(comm));
  return c;
}
// Scatterv: the root alone sends, every rank receives (the root's MPI_IN_PLACE: its own part stays put).
inline Coll scatterv_args(MPI_Comm comm, const int scounts[], MPI_Datatype stype, const void* r, int rcount,
                          MPI_Datatype rtype, int root) {
  const bool ip = r == MPI_IN_PLACE;
  Coll c{comm, -1, ip ? stype : rtype, nullptr, root, ip};
  if (comm == MPI_COMM_NULL) return c;
  const bool inter = is_inter(comm);
  const bool sends = inter ? root == MPI_ROOT : root == comm_rank(comm);
  const bool receives = inter ? root != MPI_ROOT && root != MPI_PROC_NULL : !ip;
  if (sends) c.vsend = VSide::all(stype, scounts, comm_peers(comm));
  if (receives) c.vrecv = VSide::one(rtype, rcount);
  return c;
}

inline int blocking(const char* name, const Coll& c, auto&& call) {
  return recorded(
      name, [&](JsonLine& l) { c.write(l); }, call, no_out);
}
inline int nonblocking(const char* name, const Coll& c, MPI_Request* request, auto&& call) {
  return recorded(
      name, [&](JsonLine& l) { c.write(l); }, call,
      [&](JsonLine& l, int) { handle(l, "req", request != nullptr ? *request : MPI_REQUEST_NULL); });
}

inline int send_like(const char* name, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
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
inline int isend_like(const char* name, const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                      MPI_Request* request, auto&& call) {
  return recorded(
      name,
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("count", count);
        dtype(l, "dtype", type, "dtype_sig").i64("peer", peer_rank(dest)).i64("tag", tag_value(tag));
        memory(l, "buf", "bytes", buf, count, type);
        watch_memory(buf, span_bytes(count, type));  // in use until the request completes
      },
      call, [&](JsonLine& l, int) { handle(l, "req", request != nullptr ? *request : MPI_REQUEST_NULL); });
}

// Waitall and Testall: the requests on entry; on return, the source each one matched (-1: not a receive).
inline int all_of_requests(const char* name, int count, MPI_Request reqs[], MPI_Status statuses[], int* flag,
                           auto&& call) {
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
inline int some_of_requests(const char* name, int incount, MPI_Request reqs[], int* outcount, int indices[],
                            auto&& call) {
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

// The result buffer of a fetching RMA call (MPI_Get_accumulate, MPI_Fetch_and_op, ...): written by the call,
// watched until it completes.
inline void result_memory(JsonLine& l, const void* result, int count, MPI_Datatype type) {
  memory(l, "result_buf", "result_bytes", result, count, type);
  watch_memory(result, span_bytes(count, type));
}

// One-sided transfers: the origin buffer (read by a put, written by a get) and the target's bytes as a
// displacement in the target's window units; the reader makes addresses of them with the target's
// MPI_Win_create (issue 26: RMA races).
inline void rma_args(JsonLine& l, MPI_Win win, const void* origin, int origin_count, MPI_Datatype origin_type,
                     int target, MPI_Aint target_disp, int target_count, MPI_Datatype target_type) {
  handle(l, "win", win).i64("target", target).i64("count", origin_count);
  dtype(l, "dtype", origin_type, "dtype_sig");
  dtype(l, "target_dtype", target_type, "target_dtype_sig");
  memory(l, "buf", "bytes", origin, origin_count, origin_type);
  watch_memory(origin, span_bytes(origin_count, origin_type));  // in use until the transfer completes
  l.i64("target_disp", target_disp).i64("target_bytes", span_bytes(target_count, target_type));
}

// A datatype constructor: the new type and its flattened signature on return.
inline int type_made(const char* name, MPI_Datatype* newtype, auto&& call) {
  return recorded(name, no_args, call, [&](JsonLine& l, int r) {
    const MPI_Datatype t = (r == MPI_SUCCESS && newtype != nullptr) ? *newtype : MPI_DATATYPE_NULL;
    handle(l, "newtype", t);
    if (t != MPI_DATATYPE_NULL) dtype(l, "dtype", t, "dtype_sig");
  });
}

// A neighbourhood collective (MPI 4.1 sec. 8.6).
inline int neighbor(const char* name, MPI_Comm comm, auto&& call) {
  return recorded(
      name, [&](JsonLine& l) { handle(l, "comm", comm).i64("count", -1); }, call, no_out);
}

}  // namespace collmc::recorder::mpi_hooks
