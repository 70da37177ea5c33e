// Reading the MPI recorder's traces (libcollmc_record_mpi.so; docs/TRACES.md, "MPI recorder format") into
// a Trace for the mpi profile: each process's world rank from its MPI_Init, communicators followed from
// MPI_COMM_WORLD through dup, split and create (named by what every member agrees on: the parent, the
// creation's number on it, the color), windows by the communicator they were made on, nonblocking
// operations grouped with what runs until their completion, and each call's state (returned, or entered
// and never returned: where the process stopped).
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "collmc/traces/recorder_reader.h"
#include "mpi_usage_rules.h"

namespace collmc::traces {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kAnySource = -1;  // the recorder writes MPI_ANY_SOURCE as -1
constexpr int64_t kProcNull = -2;   // and MPI_PROC_NULL as -2
constexpr int64_t kMaxWorld = 4096;

std::string hex(uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kHex[v & 0xf]);
    v >>= 4;
  } while (v != 0);
  return s;
}

// MPI's predefined datatypes that the language names; others (derived types, MPI_SHORT, ...) are left out.
std::string language_dtype(const std::string& mpi) {
  static const std::map<std::string, std::string> names = {
      {"MPI_INT", "int32"},           {"MPI_INT32_T", "int32"},       {"MPI_UNSIGNED", "uint32"},
      {"MPI_UINT32_T", "uint32"},     {"MPI_LONG", "int64"},          {"MPI_LONG_LONG", "int64"},
      {"MPI_LONG_LONG_INT", "int64"}, {"MPI_INT64_T", "int64"},       {"MPI_UNSIGNED_LONG", "uint64"},
      {"MPI_UINT64_T", "uint64"},     {"MPI_FLOAT", "float32"},       {"MPI_DOUBLE", "float64"},
      {"MPI_CHAR", "int8"},           {"MPI_SIGNED_CHAR", "int8"},    {"MPI_INT8_T", "int8"},
      {"MPI_BYTE", "uint8"},          {"MPI_UNSIGNED_CHAR", "uint8"}, {"MPI_UINT8_T", "uint8"},
  };
  auto it = names.find(mpi);
  return it == names.end() ? "" : it->second;
}

struct Kind {
  CallKind kind;
  bool nonblocking;
  bool reduces;
};

// The MPI collectives as statements. Gather and scatter have no statement of their own: like the Flight
// Recorder reader, they become all_to_all (same members, same matching); scans become all_reduce (they
// reduce over the same members).
std::optional<Kind> collective_kind(const std::string& name) {
  static const std::map<std::string, Kind> kinds = {
      {"MPI_Barrier", {CallKind::Barrier, false, false}},
      {"MPI_Bcast", {CallKind::Broadcast, false, false}},
      {"MPI_Reduce", {CallKind::Reduce, false, true}},
      {"MPI_Allreduce", {CallKind::AllReduce, false, true}},
      {"MPI_Scan", {CallKind::AllReduce, false, true}},
      {"MPI_Exscan", {CallKind::AllReduce, false, true}},
      {"MPI_Reduce_scatter", {CallKind::ReduceScatter, false, true}},
      {"MPI_Reduce_scatter_block", {CallKind::ReduceScatter, false, true}},
      {"MPI_Allgather", {CallKind::AllGather, false, false}},
      {"MPI_Allgatherv", {CallKind::AllGather, false, false}},
      {"MPI_Gather", {CallKind::AllToAll, false, false}},
      {"MPI_Gatherv", {CallKind::AllToAll, false, false}},
      {"MPI_Scatter", {CallKind::AllToAll, false, false}},
      {"MPI_Scatterv", {CallKind::AllToAll, false, false}},
      {"MPI_Alltoall", {CallKind::AllToAll, false, false}},
      {"MPI_Alltoallv", {CallKind::AllToAll, false, false}},
      {"MPI_Ibarrier", {CallKind::Barrier, true, false}},
      {"MPI_Ibcast", {CallKind::Broadcast, true, false}},
      {"MPI_Ireduce", {CallKind::Reduce, true, true}},
      {"MPI_Iallreduce", {CallKind::AllReduce, true, true}},
      {"MPI_Iscan", {CallKind::AllReduce, true, true}},
      {"MPI_Iexscan", {CallKind::AllReduce, true, true}},
      {"MPI_Ireduce_scatter_block", {CallKind::ReduceScatter, true, true}},
      {"MPI_Iallgather", {CallKind::AllGather, true, false}},
      {"MPI_Igather", {CallKind::AllToAll, true, false}},
      {"MPI_Iscatter", {CallKind::AllToAll, true, false}},
      {"MPI_Ialltoall", {CallKind::AllToAll, true, false}},
      {"MPI_Ireduce_scatter", {CallKind::ReduceScatter, true, true}},
      {"MPI_Iallgatherv", {CallKind::AllGather, true, false}},
      {"MPI_Igatherv", {CallKind::AllToAll, true, false}},
      {"MPI_Iscatterv", {CallKind::AllToAll, true, false}},
      {"MPI_Ialltoallv", {CallKind::AllToAll, true, false}},
  };
  auto it = kinds.find(name);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

bool is_send(const std::string& n) {
  return n == "MPI_Send" || n == "MPI_Ssend" || n == "MPI_Bsend" || n == "MPI_Rsend" || n == "MPI_Isend" ||
         n == "MPI_Issend";
}

// A call whose root or peer is still a rank of its communicator (made world ranks once every member is known).
struct PendingCall {
  Call call;
  std::optional<int64_t> root_comm_rank, peer_comm_rank;
  size_t source = SIZE_MAX;  // the recorded call it came from (its index in the process's calls)
};

struct Membership {
  size_t process = 0;
  int64_t rank = -1;  // -1: unknown (the creation never returned)
  int64_t key = 0;
};

struct CommInfo {
  Communicator comm;
  std::vector<Membership> members;
};

class MpiAssembler {
 public:
  explicit MpiAssembler(const std::vector<RecorderFile>& files) : files_(files) {}

  Trace run() {
    processes_ = split_recorded_processes(files_, notes_);
    world_rank_.assign(processes_.size(), -1);
    for (size_t p = 0; p < processes_.size(); ++p) find_init(p);
    assign_world_ranks();
    std::vector<std::vector<PendingCall>> calls(processes_.size());
    for (size_t p = 0; p < processes_.size(); ++p)
      if (world_rank_[p] >= 0) calls[p] = read_process(p);
    insert_usage_errors(calls);
    return build(calls);
  }

 private:
  // --- fields ----------------------------------------------------------------------------------------
  static const Json* field(const RecorderLine* l, const char* key) { return recorder_field(l, key); }
  [[noreturn]] void fail(size_t p, const RecorderLine* l, const std::string& message) const {
    RecorderFields(*processes_[p].file, l).fail(message);
  }
  int64_t int_field(size_t p, const RecorderLine* l, const char* key) const {
    return RecorderFields(*processes_[p].file, l).integer(key);
  }
  std::string string_field(size_t p, const RecorderLine* l, const char* key) const {
    return RecorderFields(*processes_[p].file, l).string(key);
  }
  uint64_t handle_field(size_t p, const RecorderLine* l, const char* key) const {
    return RecorderFields(*processes_[p].file, l).hex(key);
  }
  // A list of handles ("0x1,0x2") or ranks ("0,-1"), as the recorder writes Waitall's.
  std::vector<std::string> list_field(size_t p, const RecorderLine* l, const char* key) const {
    std::vector<std::string> out;
    const std::string s = string_field(p, l, key);
    size_t start = 0;
    while (start < s.size()) {
      size_t comma = s.find(',', start);
      out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
    return out;
  }

  // --- processes and world ranks -----------------------------------------------------------------------
  void find_init(size_t p) {
    for (const auto& rc : processes_[p].calls) {
      const std::string name = rc.enter->event["call"].get<std::string>();
      if (name != "MPI_Init" && name != "MPI_Init_thread") continue;
      if (rc.ret == nullptr) return;  // stopped inside MPI_Init: its rank is not known
      const int64_t rank = int_field(p, rc.ret, "world_rank");
      const int64_t size = int_field(p, rc.ret, "world_size");
      if (rank < 0 || size <= 0 || rank >= size || size > kMaxWorld)
        fail(p, rc.ret, "expected 0 <= world_rank < world_size <= " + std::to_string(kMaxWorld));
      world_rank_[p] = static_cast<int>(rank);
      world_size_ = std::max(world_size_, static_cast<int>(size));
      world_handle_[p] = handle_field(p, rc.ret, "world");
      self_handle_[p] = handle_field(p, rc.ret, "self");
      if (field(rc.ret, "comm_null") != nullptr) comm_null_handle_[p] = handle_field(p, rc.ret, "comm_null");
      return;
    }
  }

  void assign_world_ranks() {
    std::set<int> taken;
    for (size_t p = 0; p < processes_.size(); ++p) {
      if (world_rank_[p] < 0) continue;
      if (!taken.insert(world_rank_[p]).second)
        throw TraceInputError(processes_[p].file->name, processes_[p].header->line, 1, 0,
                              "a second process with world rank " + std::to_string(world_rank_[p]) +
                                  ": import the traces of one run at a time");
    }
    for (size_t p = 0; p < processes_.size(); ++p) {
      if (world_rank_[p] >= 0) continue;
      bool any_mpi = !processes_[p].calls.empty();
      if (!any_mpi) continue;  // a process with no MPI call (mpirun itself, a helper): not a rank
      int r = 0;
      while (taken.count(r)) ++r;
      world_rank_[p] = r;
      taken.insert(r);
      world_size_ = std::max(world_size_, r + 1);
      notes_.push_back(processes_[p].file->name + ": the process never returned from MPI_Init; taken as rank " +
                       std::to_string(r));
    }
  }

  // --- one process ---------------------------------------------------------------------------------------
  struct ProcessState {
    std::map<uint64_t, std::string> comm_of;
    std::map<std::string, int> creations_on;  // parent id -> communicators made from it so far
    std::map<uint64_t, std::pair<std::string, std::string>> window_of;  // handle -> (comm id, buffer)
    int windows = 0;
    std::set<uint64_t> outstanding;  // requests posted and not completed
    // Persistent requests (MPI_Send_init, MPI_Recv_init, ...): the operation each MPI_Start of it starts;
    // nullopt for one with MPI_PROC_NULL, whose starts communicate nothing.
    std::map<uint64_t, std::optional<PendingCall>> persistent;
    int unseen_requests = 0;  // waits on requests never seen posted
    bool group_open = false;
  };

  CommInfo& comm_info(const std::string& id, CommOrigin origin) {
    auto [it, fresh] = comms_.try_emplace(id);
    if (fresh) {
      it->second.comm.id = id;
      it->second.comm.origin = origin;
      order_.push_back(id);
    }
    return it->second;
  }

  std::string comm_of(size_t p, ProcessState& st, uint64_t handle, const RecorderLine* l) {
    auto it = st.comm_of.find(handle);
    if (it != st.comm_of.end()) return it->second;
    // A communicator the trace never saw made (MPI_COMM_SELF, one from a call the recorder does not
    // see): it stands alone in the scenario.
    const bool self = handle == self_handle_[p];
    std::string id =
        self ? "self" + std::to_string(world_rank_[p]) : "handle" + std::to_string(world_rank_[p]) + "_" + hex(handle);
    st.comm_of[handle] = id;
    auto& info = comm_info(id, CommOrigin::Preexisting);
    info.comm.label = id;
    info.comm.size = 1;
    info.members.push_back(Membership{p, 0, 0});
    if (!self)
      notes_.push_back(processes_[p].file->name + ":" + std::to_string(l->line) + ": communicator 0x" + hex(handle) +
                       " was never created in this trace; it stands alone in the scenario");
    return id;
  }

  std::vector<PendingCall> read_process(size_t p) {
    ProcessState st;
    st.comm_of[world_handle_[p]] = "world";
    auto& world = comm_info("world", CommOrigin::Preexisting);
    world.comm.label = "world";
    world.members.push_back(Membership{p, world_rank_[p], 0});
    std::vector<PendingCall> out;
    std::set<int64_t> threads;
    for (size_t i = 0; i < processes_[p].calls.size(); ++i) {
      const RecordedCall& rc = processes_[p].calls[i];
      threads.insert(rc.enter->event["tid"].get<int64_t>());
      usage_rules_.observe(p, i, rc, usage_context(p, st, rc));
      const size_t before = out.size();
      read_call(p, st, rc, out);
      for (size_t k = before; k < out.size(); ++k) out[k].source = i;
    }
    if (st.group_open) {
      // Operations no wait completed (a request freed while active, MPI 4.1 sec. 3.7.3, or never completed:
      // an mpi_error at MPI_Finalize says so): the rank waits for them at its end. That end is where it
      // stopped only when its last call never returned; a process that returned from every call did not hang.
      const auto& recorded_calls = processes_[p].calls;
      const bool returned = !recorded_calls.empty() && recorded_calls.back().ret != nullptr;
      PendingCall end;
      end.call.kind = CallKind::GroupEnd;
      end.call.state = returned ? CallState::Completed : CallState::Started;
      out.push_back(end);
      rank_notes_[world_rank_[p]].push_back(std::to_string(st.outstanding.size()) +
                                            " nonblocking operation(s) never completed by a wait");
    }
    if (threads.size() > 1)
      rank_notes_[world_rank_[p]].push_back("calls from " + std::to_string(threads.size()) +
                                            " threads are taken in the order they were entered");
    return out;
  }

  // --- MPI usage errors (issue 26; mpi_usage_rules.h) ----------------------------------------------------
  // What the rules need of a call beyond its lines: its communicator's size, MPI_COMM_NULL, its window.
  MpiCallContext usage_context(size_t p, const ProcessState& st, const RecordedCall& rc) {
    MpiCallContext ctx;
    ctx.world_rank = world_rank_[p];
    const RecorderLine* in = rc.enter;
    const std::string name = in->event["call"].get<std::string>();
    auto comm_id = [&](uint64_t h) -> std::string {
      auto it = st.comm_of.find(h);
      return it == st.comm_of.end() ? std::string() : it->second;
    };
    if (field(in, "comm") != nullptr) {
      const uint64_t h = handle_field(p, in, "comm");
      auto null = comm_null_handle_.find(p);
      ctx.comm_null = null != comm_null_handle_.end() && h == null->second;
      const std::string id = comm_id(h);
      ctx.world_comm = id == "world";
      if (id == "world")
        ctx.comm_size = world_size_;
      else if (h == self_handle_[p])
        ctx.comm_size = 1;
      else if (auto c = comms_.find(id); !id.empty() && c != comms_.end() && c->second.comm.size > 0)
        ctx.comm_size = c->second.comm.size;
      if (name.rfind("MPI_Win_", 0) == 0 && !id.empty())  // a window's creation: the id it will get
        ctx.window = id + "/win" + std::to_string(st.windows + 1);
    }
    if (field(in, "win") != nullptr) {
      auto it = st.window_of.find(handle_field(p, in, "win"));
      if (it != st.window_of.end()) {
        ctx.window = it->second.first + "/" + it->second.second;
        ctx.world_comm = it->second.first == "world";
      }
    }
    return ctx;
  }

  // Each error becomes an `mpi_error` statement just before the call it is about (before its group, when
  // the call is inside one: a group holds communication only).
  void insert_usage_errors(std::vector<std::vector<PendingCall>>& calls) {
    const auto errors = usage_rules_.errors();
    for (auto e = errors.rbegin(); e != errors.rend(); ++e) {
      const auto [p, index] = e->first;
      auto& out = calls[p];
      size_t at = 0;
      while (at < out.size() && (out[at].source == SIZE_MAX || out[at].source < index)) ++at;
      size_t group_start = SIZE_MAX;
      for (size_t k = 0; k < at; ++k) {
        if (out[k].call.kind == CallKind::GroupStart) group_start = k;
        if (out[k].call.kind == CallKind::GroupEnd) group_start = SIZE_MAX;
      }
      if (group_start != SIZE_MAX) at = group_start;
      const RecordedCall& rc = processes_[p].calls[index];
      std::vector<PendingCall> inserted;
      for (const std::string& message : e->second) {
        PendingCall pc;
        pc.call.kind = CallKind::MpiError;
        pc.call.key = message;
        pc.call.detail = rc.enter->event["call"].get<std::string>();
        pc.call.origin = processes_[p].file->name + ":" + std::to_string(rc.enter->line);
        pc.source = index;
        inserted.push_back(std::move(pc));
      }
      out.insert(out.begin() + static_cast<std::ptrdiff_t>(at), inserted.begin(), inserted.end());
    }
  }

  void open_group(ProcessState& st, std::vector<PendingCall>& out) {
    if (st.group_open) return;
    PendingCall start;
    start.call.kind = CallKind::GroupStart;
    out.push_back(start);
    st.group_open = true;
  }
  void complete(ProcessState& st, uint64_t request, std::vector<PendingCall>& out, CallState state) {
    st.outstanding.erase(request);
    if (st.group_open && st.outstanding.empty()) {
      PendingCall end;
      end.call.kind = CallKind::GroupEnd;
      end.call.state = state;
      out.push_back(end);
      st.group_open = false;
    }
  }

  void read_call(size_t p, ProcessState& st, const RecordedCall& rc, std::vector<PendingCall>& out) {
    const RecorderLine* in = rc.enter;
    const RecorderLine* ret = rc.ret;
    const std::string name = in->event["call"].get<std::string>();
    PendingCall pc;
    Call& c = pc.call;
    c.state = ret != nullptr ? CallState::Completed : CallState::Started;
    c.seq = static_cast<int64_t>(in->event["seq"].get<uint64_t>());
    c.origin = processes_[p].file->name + ":" + std::to_string(in->line);
    if (const Json* t = field(in, "t_wall_ns"); t != nullptr && t->is_number_unsigned()) c.time_ns = t->get<uint64_t>();
    c.detail = name;
    const int64_t result = ret != nullptr ? int_field(p, ret, "result") : 0;
    if (result != 0) c.detail += " returned error " + std::to_string(result);
    const bool ok = ret != nullptr && result == 0;
    auto request_out = [&]() -> std::optional<uint64_t> {
      if (!ok) return std::nullopt;
      return handle_field(p, ret, "req");
    };

    if (name == "MPI_Init" || name == "MPI_Init_thread") return;
    if (auto k = collective_kind(name)) {
      c.kind = k->kind;
      c.mpi_call = name.substr(4);  // `call=`: ranks meeting in one slot with different functions mismatch
      c.comm = comm_of(p, st, handle_field(p, in, "comm"), in);
      if (const int64_t n = int_field(p, in, "count"); n >= 0 && k->kind != CallKind::Barrier)
        c.count = static_cast<uint64_t>(n);
      c.dtype = language_dtype(string_field(p, in, "dtype"));
      if (k->reduces) {
        const std::string o = string_field(p, in, "op");
        if (o == "sum" || o == "prod" || o == "max" || o == "min") c.redop = o;
      }
      if (field(in, "root") != nullptr)  // written for rooted calls only (older traces: -1 when not rooted)
        if (const int64_t root = int_field(p, in, "root"); root >= 0) pc.root_comm_rank = root;
      if (k->nonblocking) {
        open_group(st, out);
        if (auto r = request_out()) st.outstanding.insert(*r);
      }
      out.push_back(std::move(pc));
      return;
    }
    // A persistent request's creation reads like its operation; it is kept for the MPI_Starts of it.
    const bool persistent_init = name == "MPI_Send_init" || name == "MPI_Ssend_init" || name == "MPI_Bsend_init" ||
                                 name == "MPI_Rsend_init" || name == "MPI_Recv_init";
    const std::string operation = persistent_init ? name.substr(0, name.size() - 5) : name;
    const bool send = is_send(operation);
    if (send || operation == "MPI_Recv" || name == "MPI_Irecv") {
      c.kind = send ? CallKind::Send : CallKind::Recv;
      c.comm = comm_of(p, st, handle_field(p, in, "comm"), in);
      c.dtype = language_dtype(string_field(p, in, "dtype"));
      const int64_t peer = int_field(p, in, "peer");
      if (peer == kProcNull) {  // MPI_PROC_NULL: no communication at all
        if (persistent_init && ok) st.persistent[handle_field(p, ret, "req")] = std::nullopt;
        return;
      }
      if (field(in, "tag") != nullptr) c.tag = int_field(p, in, "tag");
      if (peer == kAnySource && !send) {
        c.any_source = true;
        if (ok && name == "MPI_Recv") c.detail += " matched source " + std::to_string(int_field(p, ret, "source"));
      } else {
        pc.peer_comm_rank = peer;
      }
      if (persistent_init) {
        if (ok) st.persistent[handle_field(p, ret, "req")] = std::move(pc);
        return;
      }
      const bool nonblocking = name == "MPI_Isend" || name == "MPI_Issend" || name == "MPI_Irecv";
      if (nonblocking) {
        open_group(st, out);
        if (auto r = request_out()) st.outstanding.insert(*r);
      }
      out.push_back(std::move(pc));
      return;
    }
    if (name == "MPI_Sendrecv") {
      const std::string comm = comm_of(p, st, handle_field(p, in, "comm"), in);
      const bool was_open = st.group_open;
      open_group(st, out);
      const int64_t dest = int_field(p, in, "peer"), source = int_field(p, in, "recv_peer");
      if (dest != kProcNull) {
        PendingCall s = pc;
        s.call.kind = CallKind::Send;
        s.call.comm = comm;
        s.call.dtype = language_dtype(string_field(p, in, "dtype"));
        if (field(in, "tag") != nullptr) s.call.tag = int_field(p, in, "tag");
        s.peer_comm_rank = dest;
        out.push_back(std::move(s));
      }
      if (source != kProcNull) {
        PendingCall r = pc;
        r.call.kind = CallKind::Recv;
        r.call.comm = comm;
        r.call.dtype = language_dtype(string_field(p, in, "recv_dtype"));
        if (field(in, "recv_tag") != nullptr) r.call.tag = int_field(p, in, "recv_tag");
        if (source == kAnySource)
          r.call.any_source = true;
        else
          r.peer_comm_rank = source;
        out.push_back(std::move(r));
      }
      if (!was_open) {
        PendingCall end;
        end.call.kind = CallKind::GroupEnd;
        end.call.state = c.state;
        out.push_back(end);
        st.group_open = false;
      }
      return;
    }
    if (name == "MPI_Wait" || name == "MPI_Test") {
      const uint64_t r = handle_field(p, in, "req");
      if (name == "MPI_Test" && (!ok || int_field(p, ret, "flag") == 0)) return;
      if (!st.outstanding.count(r)) {
        if (r != 0 && !st.unseen_requests++)
          rank_notes_[world_rank_[p]].push_back(
              "a wait on a request the trace never saw posted (a call the "
              "recorder does not see, such as MPI_Start)");
        return;
      }
      complete(st, r, out, c.state);
      return;
    }
    if (name == "MPI_Waitall" || name == "MPI_Testall" || name == "MPI_Waitany") {
      if (name == "MPI_Testall" && (!ok || int_field(p, ret, "flag") == 0)) return;
      std::vector<uint64_t> reqs;
      for (const auto& s : list_field(p, in, "reqs"))
        if (auto v = parse_hex_field(s)) reqs.push_back(*v);
      if (name == "MPI_Waitany") {
        if (!ok) {
          // Stopped in a Waitany: it waits for any one of them; the group holds them all.
          return;
        }
        const int64_t index = int_field(p, ret, "index");
        if (index >= 0 && static_cast<size_t>(index) < reqs.size())
          complete(st, reqs[static_cast<size_t>(index)], out, c.state);
        return;
      }
      if (ret == nullptr) return;  // never returned: the group stays open to the end, where it stopped
      for (uint64_t r : reqs)
        if (st.outstanding.count(r)) complete(st, r, out, c.state);
      return;
    }
    if (name == "MPI_Probe") {
      // A blocking probe waits for a message it matches (MPI 4.1 sec. 3.8.1). Between a nonblocking call and
      // its wait (a `group`, which holds only what is posted together) it is left as a comment.
      const int64_t peer = int_field(p, in, "peer");
      if (peer == kProcNull || st.group_open) {
        if (st.group_open) c.detail += " (between a nonblocking call and its wait: left out)";
        out.push_back(std::move(pc));
        return;
      }
      c.kind = CallKind::Probe;
      c.comm = comm_of(p, st, handle_field(p, in, "comm"), in);
      if (field(in, "tag") != nullptr) c.tag = int_field(p, in, "tag");
      if (peer == kAnySource)
        c.any_source = true;
      else
        pc.peer_comm_rank = peer;
      out.push_back(std::move(pc));
      return;
    }
    if (name == "MPI_Start" || name == "MPI_Startall") {
      // Each started request posts its operation, as MPI_Isend or MPI_Irecv would (MPI 4.1 sec. 3.9), and
      // is completed by a wait like theirs.
      std::vector<uint64_t> reqs;
      if (name == "MPI_Start") {
        reqs.push_back(handle_field(p, in, "req"));
      } else {
        for (const auto& s : list_field(p, in, "reqs"))
          if (auto v = parse_hex_field(s)) reqs.push_back(*v);
      }
      for (uint64_t r : reqs) {
        auto it = st.persistent.find(r);
        if (it == st.persistent.end()) {
          rank_notes_[world_rank_[p]].push_back(c.origin + ": " + name +
                                                " of a request the trace never saw made (left out)");
          continue;
        }
        if (!it->second) continue;  // MPI_PROC_NULL
        PendingCall started = *it->second;
        started.call.state = c.state;
        started.call.seq = c.seq;
        started.call.time_ns = c.time_ns;
        started.call.detail = name + " of " + started.call.detail;
        started.call.origin = c.origin;
        open_group(st, out);
        st.outstanding.insert(r);
        out.push_back(std::move(started));
      }
      return;
    }
    if (name == "MPI_Request_free") {
      if (ok) st.persistent.erase(handle_field(p, in, "req"));
      return;
    }
    if (name == "MPI_Comm_split" || name == "MPI_Comm_split_type" || name == "MPI_Comm_dup" ||
        name == "MPI_Comm_create" || name == "MPI_Cart_create") {
      c.kind = CallKind::CommSplit;
      c.comm = comm_of(p, st, handle_field(p, in, "comm"), in);
      const int n = st.creations_on[c.comm]++;
      std::string child = c.comm + "/" + std::to_string(n);
      const bool split = name == "MPI_Comm_split" || name == "MPI_Comm_split_type";
      int64_t key = 0;
      if (split) {
        const int64_t color = int_field(p, in, "color");
        key = int_field(p, in, "key");
        if (color < 0) {
          out.push_back(std::move(pc));  // MPI_UNDEFINED: joins no child
          return;
        }
        child += ".c" + std::to_string(color);
      }
      int64_t rank = -1;
      if (ok) {
        const uint64_t handle = handle_field(p, ret, "newcomm");
        rank = int_field(p, ret, "rank");
        if (rank < 0) {  // MPI_COMM_NULL: this process is not in the new communicator
          out.push_back(std::move(pc));
          return;
        }
        st.comm_of[handle] = child;
      }
      auto& info = comm_info(child, CommOrigin::Split);
      info.comm.parent = c.comm;
      info.comm.label = child;
      if (ok) info.comm.size = static_cast<int>(int_field(p, ret, "size"));
      if (name == "MPI_Comm_dup" && rank < 0) key = world_rank_[p];
      info.members.push_back(Membership{p, rank, key});
      c.child_comm = child;
      out.push_back(std::move(pc));
      return;
    }
    if (name == "MPI_Comm_free") {
      c.kind = CallKind::CommDestroy;
      c.comm = comm_of(p, st, handle_field(p, in, "comm"), in);
      out.push_back(std::move(pc));
      return;
    }
    if (name == "MPI_Win_create" || name == "MPI_Win_allocate" || name == "MPI_Win_allocate_shared" ||
        name == "MPI_Win_create_dynamic") {
      c.kind = CallKind::WindowRegister;
      c.comm = comm_of(p, st, handle_field(p, in, "comm"), in);
      c.buffer = "win" + std::to_string(++st.windows);
      if (ok) st.window_of[handle_field(p, ret, "win")] = {c.comm, c.buffer};
      out.push_back(std::move(pc));
      return;
    }
    if (name == "MPI_Win_free" || name == "MPI_Win_fence") {
      auto it = st.window_of.find(handle_field(p, in, "win"));
      if (it == st.window_of.end()) {
        c.detail += " on a window the trace never saw created";
      } else {
        c.kind = name == "MPI_Win_free" ? CallKind::WindowDeregister : CallKind::Barrier;
        if (name == "MPI_Win_fence") c.mpi_call = "Win_fence";  // a fence meets fences only
        c.comm = it->second.first;
        c.buffer = it->second.second;
        if (name == "MPI_Win_free" && ok) st.window_of.erase(it);
      }
      out.push_back(std::move(pc));
      return;
    }
    // Passive-target synchronisation, one-sided transfers, MPI_Finalize, MPI_Abort: kept as
    // comments (the language has no statement for them).
    out.push_back(std::move(pc));
  }

  // --- communicators and the Trace ----------------------------------------------------------------------
  Trace build(std::vector<std::vector<PendingCall>>& calls) {
    Trace t;
    t.format = "mpi-recorder";
    t.mpi = true;
    t.world_size = world_size_;
    for (const auto& id : order_) {
      CommInfo& info = comms_[id];
      Communicator& comm = info.comm;
      // Members with a known rank first; a creation that never returned gets the next free ranks, in the
      // order MPI gives them (key, then rank in the parent, here the world rank).
      std::set<int64_t> used;
      for (const auto& m : info.members)
        if (m.rank >= 0) used.insert(m.rank);
      std::vector<const Membership*> unknown;
      for (const auto& m : info.members)
        if (m.rank >= 0)
          comm.members[world_rank_[m.process]] = static_cast<int>(m.rank);
        else
          unknown.push_back(&m);
      std::sort(unknown.begin(), unknown.end(), [&](const Membership* a, const Membership* b) {
        return std::make_pair(a->key, world_rank_[a->process]) < std::make_pair(b->key, world_rank_[b->process]);
      });
      int64_t next = 0;
      for (const Membership* m : unknown) {
        while (used.count(next)) ++next;
        comm.members[world_rank_[m->process]] = static_cast<int>(next);
        used.insert(next);
      }
      if (id == "world") comm.size = world_size_;
      if (comm.size < static_cast<int>(comm.members.size())) comm.size = static_cast<int>(comm.members.size());
      if (comm.size > static_cast<int>(comm.members.size()) && id != "world")
        notes_.push_back("communicator " + id + ": " + std::to_string(comm.size - comm.members.size()) +
                         " member(s) left no trace of its creation");
      t.comms.push_back(comm);
    }
    // Comm rank -> world rank, for roots and peers.
    std::map<std::string, std::map<int, int>> world_of;
    for (const auto& c : t.comms)
      for (const auto& [g, r] : c.members) world_of[c.id][r] = g;
    for (int r = 0; r < world_size_; ++r) {
      RankTrace rt;
      rt.rank = r;
      rt.present = false;
      t.ranks[r] = rt;
    }
    for (size_t p = 0; p < processes_.size(); ++p) {
      if (world_rank_[p] < 0) continue;
      RankTrace& rt = t.ranks[world_rank_[p]];
      rt.present = true;
      rt.source = processes_[p].file->name;
      rt.notes = rank_notes_[world_rank_[p]];
      ThreadTrace th;
      th.name = "main";
      for (auto& pc : calls[p]) {
        auto to_world = [&](int64_t comm_rank, std::optional<int>& out) {
          auto& m = world_of[pc.call.comm];
          auto it = m.find(static_cast<int>(comm_rank));
          if (it != m.end()) out = it->second;
        };
        if (pc.root_comm_rank) to_world(*pc.root_comm_rank, pc.call.root);
        if (pc.peer_comm_rank) to_world(*pc.peer_comm_rank, pc.call.peer);
        th.calls.push_back(std::move(pc.call));
      }
      rt.threads.push_back(std::move(th));
    }
    t.notes = notes_;
    return t;
  }

  const std::vector<RecorderFile>& files_;
  std::vector<RecordedProcess> processes_;
  std::vector<int> world_rank_;
  std::map<size_t, uint64_t> world_handle_, self_handle_, comm_null_handle_;
  MpiUsageRules usage_rules_;
  int world_size_ = 0;
  std::map<std::string, CommInfo> comms_;
  std::vector<std::string> order_;  // comms in order of first sight
  std::map<int, std::vector<std::string>> rank_notes_;
  std::vector<std::string> notes_;
};

}  // namespace

Trace read_mpi_recorder_files(const std::vector<RecorderFile>& files) { return MpiAssembler(files).run(); }

}  // namespace collmc::traces
