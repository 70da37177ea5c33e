// Reading the MPI recorder's traces (libcollmc_record_mpi.so; docs/TRACES.md, "MPI recorder format") into
// a Trace for the mpi profile: each process's world rank from its MPI_Init, communicators followed from
// MPI_COMM_WORLD through dup, split and create (named by what every member agrees on: the parent, the
// creation's number on it, the color), windows by the communicator they were made on, nonblocking
// operations grouped with what runs until their completion, and each call's state (returned, or entered
// and never returned: where the process stopped).
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "collmc/traces/recorder_reader.h"
#include "message_form.h"
#include "mpi_calls.h"
#include "mpi_usage_rules.h"
#include "thread_order.h"

namespace collmc::traces {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kAnySource = -1;  // the recorder writes MPI_ANY_SOURCE as -1
constexpr int64_t kProcNull = -2;   // and MPI_PROC_NULL as -2
constexpr int64_t kMaxWorld = 4096;

// Lowercase hex digits without a prefix, as the recorder writes addresses after its "0x".
std::string hex(uint64_t v) { return absl::StrCat(absl::Hex(v)); }

// A call whose root or peer is still a rank of its communicator (made world ranks once every member is known).
struct PendingCall {
  Call call;
  std::optional<int64_t> root_comm_rank, peer_comm_rank;
  size_t source = SIZE_MAX;  // the recorded call it came from (its index in the process's calls)
  uint64_t request = 0;      // the request a nonblocking operation was posted with (MPI_Cancel finds it)
  int64_t thread = 0;        // the recorded thread ("tid") that made it
};

struct Membership {
  size_t process = 0;
  int64_t rank = -1;  // -1: unknown (the creation never returned)
  int64_t key = 0;
};

struct CommInfo {
  Communicator comm;
  std::vector<Membership> members;
  bool inter = false;            // an intercommunicator: both groups are its members, peers are remote ranks
  bool size_known = true;        // false: a communicator the trace never saw made (it stands alone)
  std::vector<int> union_ranks;  // world ranks of every member, ascending, when the recorder wrote them
};

// "0,2,-1" (the recorder's rank lists); nullopt when cut ("...") or not written.
std::optional<std::vector<int>> rank_list(const RecorderLine* l, const char* key) {
  const auto* f = recorder_field(l, key);
  if (f == nullptr || !f->is_string()) return std::nullopt;
  const std::string s = f->get<std::string>();
  if (s.find("...") != std::string::npos) return std::nullopt;
  std::vector<int> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t comma = s.find(',', start);
    out.push_back(std::atoi(s.c_str() + start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

class MpiAssembler {
 public:
  // `one_body`: processes whose threads are taken as one body whatever their recorded synchronization says
  // (a first reading found it cannot be kept: the reason by process).
  explicit MpiAssembler(const std::vector<RecorderFile>& files, std::map<size_t, std::string> one_body = {})
      : files_(files), one_body_(std::move(one_body)) {}

  Trace run() {
    processes_ = split_recorded_processes(files_, notes_);
    world_rank_.assign(processes_.size(), -1);
    for (size_t p = 0; p < processes_.size(); ++p) find_init(p);
    assign_world_ranks();
    thread_orders_.resize(processes_.size());
    for (size_t p = 0; p < processes_.size(); ++p) {
      if (world_rank_[p] < 0) continue;
      thread_orders_[p] = order_threads(processes_[p]);
    }
    // The race rules judge one thread's access against another's transfer by the recorded order, even where the
    // scenario keeps the process one body: the order between the threads is the run's all the same.
    for (size_t p = 0; p < processes_.size(); ++p) usage_rules_.thread_order(p, &thread_orders_[p]);
    std::vector<std::vector<PendingCall>> calls(processes_.size());
    for (size_t p = 0; p < processes_.size(); ++p)
      if (world_rank_[p] >= 0) calls[p] = read_process(p);
    for (const auto& rp : processes_)
      if (recorder_field(rp.header, "host") == nullptr ||
          *recorder_field(rp.header, "host") != *recorder_field(processes_.front().header, "host"))
        usage_rules_.several_hosts();
    insert_usage_errors(calls);
    Trace t = build(calls);
    if (!split_failed_.empty()) {  // read again, those processes as one body (deterministic: the same reading)
      std::map<size_t, std::string> again = one_body_;
      again.insert(split_failed_.begin(), split_failed_.end());
      return MpiAssembler(files_, again).run();
    }
    for (const auto& note : usage_rules_.notes()) t.notes.push_back(note);
    if (!unmodelled_.empty()) {
      std::string names;
      for (const auto& [name, n] : unmodelled_)
        names += (names.empty() ? "" : ", ") + name + (n > 1 ? " x" + std::to_string(n) : "");
      t.notes.push_back("MPI calls recorded but not modelled (comments in the scenario; no verdict rests on them): " +
                        names);
    }
    t.notes.push_back(
        "MPI calls the recorder does not see (PMPI hooks it has none for: MPI_Comm_spawn, MPI_Comm_connect/accept, "
        "file I/O, persistent collectives, MPI_Sendrecv_replace, ...) leave no trace; a wait on a request one of "
        "them made is noted, never an error");
    t.notes.push_back(loads_and_stores_note());
    return t;
  }

  // What the import knows of the program's own loads and stores (an MPI 4.1 sec. 12.7 race needs them).
  std::string loads_and_stores_note() const {
    size_t runs = 0, with = 0;
    bool left_out = false;
    for (const auto& p : processes_) {
      runs += p.accesses.size();
      with += p.accesses.empty() ? 0 : 1;
      for (const auto& a : p.accesses)
        left_out = left_out || recorder_field(a.line, "runs_left_out") != nullptr ||
                   recorder_field(a.line, "watch_full") != nullptr;
    }
    if (runs == 0)
      return "the program's own loads and stores were not recorded: races of a load or store with an RMA transfer "
             "(MPI 4.1 sec. 12.7) are not checked; compile with scripts/mpicc-loads-stores.sh to record them";
    return "the program's own loads and stores of memory it gave MPI: " + std::to_string(runs) + " runs in " +
           std::to_string(with) + " of " + std::to_string(processes_.size()) +
           " processes, checked against RMA transfers in flight (MPI 4.1 sec. 12.7)" +
           (left_out ? "; some were left out (more runs between two calls, or more buffers, than the recorder keeps)"
                     : "");
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
  int64_t int_or(const RecorderLine* l, const char* key, int64_t fallback) const {
    const Json* f = field(l, key);
    return f != nullptr && f->is_number_integer() ? f->get<int64_t>() : fallback;
  }
  std::string string_field(size_t p, const RecorderLine* l, const char* key) const {
    return RecorderFields(*processes_[p].file, l).string(key);
  }
  std::string string_or(const RecorderLine* l, const char* key) const {
    const Json* f = field(l, key);
    return f != nullptr && f->is_string() ? f->get<std::string>() : std::string();
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
  std::vector<uint64_t> handles_field(size_t p, const RecorderLine* l, const char* key) const {
    std::vector<uint64_t> out;
    for (const auto& s : list_field(p, l, key))
      if (auto v = parse_hex_field(s)) out.push_back(*v);
    return out;
  }
  static void set_message(Call& c, const MessageForm& m) {
    c.dtype = m.dtype;
    c.count = m.count;
    if (!m.signature.empty()) c.detail += " (type signature " + m.signature + ")";
  }

  // --- processes and world ranks -----------------------------------------------------------------------
  void find_init(size_t p) {
    for (const auto& rc : processes_[p].calls) {
      const auto info = mpi_call_of(rc.enter->event["call"].get<std::string>());
      if (!info || info->family != MpiFamily::Init) continue;
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
    std::map<std::string, int> creations_on;     // parent id -> communicators made from it so far
    std::map<std::string, int> group_creations;  // (key of a group-only creation) -> how many so far
    std::map<uint64_t, std::pair<std::string, std::string>> window_of;  // handle -> (comm id, buffer)
    std::map<std::string, int> windows_on;             // comm id -> windows made on it and not yet freed
    std::map<std::string, PendingCall> deferred_free;  // comm id -> its MPI_Comm_free, taken at its last window's
    int windows = 0;
    std::set<uint64_t> outstanding;  // requests posted and not completed
    // Persistent requests (MPI_Send_init, MPI_Recv_init, ...): the operation each MPI_Start of it starts;
    // nullopt for one with MPI_PROC_NULL, whose starts communicate nothing.
    std::map<uint64_t, std::optional<PendingCall>> persistent;
    std::set<uint64_t> local_requests;  // MPI_Imrecv, MPI_Grequest_start: completed without a peer
    std::set<uint64_t> cancelled;       // MPI_Cancel was called on it
    int unseen_requests = 0;            // waits on requests never seen posted
    bool group_open = false;
    // Threads kept apart (their OpenMP synchronization recorded): each thread has its own group and requests;
    // `group_open` and `outstanding` are the current thread's, the others' wait here.
    bool by_thread = false;
    int64_t thread = 0;
    std::map<int64_t, std::pair<bool, std::set<uint64_t>>> other_threads;
    void switch_to(int64_t tid) {
      if (!by_thread || tid == thread) return;
      auto& mine = other_threads[thread];
      mine.first = group_open;
      mine.second.swap(outstanding);
      auto& next = other_threads[tid];
      group_open = next.first;
      outstanding.swap(next.second);
      next.second.clear();
      thread = tid;
    }
    bool outstanding_elsewhere(uint64_t request) const {
      for (const auto& [tid, groups] : other_threads)
        if (tid != thread && groups.second.count(request)) return true;
      return false;
    }
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
    for (int k = 2; comms_.count(id) && !self; ++k)  // a handle value seen before, freed, and made again unseen
      id = "handle" + std::to_string(world_rank_[p]) + "_" + hex(handle) + "_" + std::to_string(k);
    st.comm_of[handle] = id;
    auto& info = comm_info(id, CommOrigin::Preexisting);
    info.comm.label = id;
    info.comm.size = 1;
    info.size_known = self;
    info.members.push_back(Membership{p, 0, 0});
    if (!self)
      notes_.push_back(processes_[p].file->name + ":" + std::to_string(l->line) + ": communicator 0x" + hex(handle) +
                       " was never created in this trace; it stands alone in the scenario (no usage rule "
                       "judges its size or ranks)");
    return id;
  }
  const CommInfo* comm_by_id(const std::string& id) const {
    auto it = comms_.find(id);
    return it == comms_.end() ? nullptr : &it->second;
  }
  bool is_comm_null(size_t p, const RecorderLine* in) const {
    auto null = comm_null_handle_.find(p);
    return field(in, "comm") != nullptr && null != comm_null_handle_.end() &&
           handle_field(p, in, "comm") == null->second;
  }

  bool is_inter(const std::string& id) const {
    const CommInfo* c = comm_by_id(id);
    return c != nullptr && c->inter;
  }

  std::vector<PendingCall> read_process(size_t p) {
    ProcessState st;
    st.comm_of[world_handle_[p]] = "world";
    auto& world = comm_info("world", CommOrigin::Preexisting);
    world.comm.label = "world";
    world.members.push_back(Membership{p, world_rank_[p], 0});
    std::vector<PendingCall> out;
    const ThreadOrder& order = thread_orders_[p];
    st.by_thread = kept_apart(p);
    if (!processes_[p].calls.empty()) st.thread = processes_[p].calls.front().enter->event["tid"].get<int64_t>();
    const auto& accesses = processes_[p].accesses;  // the program's loads and stores, by the call after them
    size_t next_access = 0;
    for (size_t i = 0; i < processes_[p].calls.size(); ++i) {
      for (; next_access < accesses.size() && accesses[next_access].before_call <= i; ++next_access)
        usage_rules_.program_access(p, accesses[next_access], processes_[p].file->name);
      const RecordedCall& rc = processes_[p].calls[i];
      const int64_t tid = rc.enter->event["tid"].get<int64_t>();
      st.switch_to(tid);
      const std::string name = rc.enter->event["call"].get<std::string>();
      const auto info = mpi_call_of(name);
      const size_t before = out.size();
      if (!info) {
        ++unmodelled_[name];
        PendingCall pc;
        pc.call.detail = name + " (not modelled)";
        pc.call.origin = processes_[p].file->name + ":" + std::to_string(rc.enter->line);
        pc.source = i;
        out.push_back(std::move(pc));
      } else {
        usage_rules_.observe(p, i, rc, usage_context(p, st, rc, *info));
        read_call(p, st, rc, *info, out);
      }
      for (size_t k = before; k < out.size(); ++k) {
        if (out[k].source == SIZE_MAX) out[k].source = i;
        out[k].thread = tid;
      }
    }
    if (st.by_thread) {  // each thread's group that no wait closed ends with that thread
      for (const auto& [tid, groups] : std::map<int64_t, std::pair<bool, std::set<uint64_t>>>(st.other_threads)) {
        if (tid == st.thread || !groups.first) continue;
        st.switch_to(tid);
        end_open_group(p, st, out);
      }
    }
    end_open_group(p, st, out);
    const std::string label = "rank " + std::to_string(world_rank_[p]);
    // Which OpenMP runtime recorded the threads (the OMPT tool's "tool_start" line), or why none did.
    const std::string runtime = omp_runtime(p);
    if (kept_apart(p))
      notes_.push_back("threads of " + label + " (" + std::to_string(order.threads.size()) +
                       ") ordered by their recorded OpenMP synchronization only" +
                       (runtime.empty() ? "" : " (recorded through OMPT by " + runtime + ")") + ": " +
                       std::to_string(order.edges.size()) + " cross-thread order(s), as host store keys");
    else if (order.threads.size() > 1)
      notes_.push_back("threads of " + label + " taken in the order their calls were entered: " +
                       (order.recorded ? one_body_.at(p) : order.why_not) +
                       (runtime.empty() && !order.recorded
                            ? " (no OpenMP runtime with OMPT ran: gcc's libgomp has none; collmc record preloads "
                              "an installed LLVM libomp into a program linked to libgomp, or --openmp-runtime LIB)"
                            : ""));
    return out;
  }

  // The OpenMP runtime that started the recorder's OMPT tool in process p (its "tool_start" line), or "".
  std::string omp_runtime(size_t p) const {
    for (const auto& e : processes_[p].omp_events)
      if (string_or(e.line, "call") == "tool_start") return string_or(e.line, "runtime");
    return "";
  }

  void end_open_group(size_t p, ProcessState& st, std::vector<PendingCall>& out) {
    if (st.group_open) {
      // Operations no wait completed (a request freed while active, MPI 4.1 sec. 3.7.3, or never completed:
      // an mpi_error at MPI_Finalize says so): the rank waits for them at its end. That end is where it
      // stopped only when its last call never returned; a process that returned from every call did not hang.
      const RecordedCall* last = nullptr;  // the process's last call; kept apart, this thread's
      for (const auto& rc : processes_[p].calls)
        if (!st.by_thread || rc.enter->event["tid"].get<int64_t>() == st.thread) last = &rc;
      const bool returned = last != nullptr && last->ret != nullptr;
      close_group(st, out, returned ? CallState::Completed : CallState::Started);
      if (!st.outstanding.empty())
        rank_notes_[world_rank_[p]].push_back(std::to_string(st.outstanding.size()) +
                                              " nonblocking operation(s) never completed by a wait");
    }
  }

  // Whether read_call writes the call as a statement carrying its communicator, datatype, op and tag as the
  // program passed them (MpiCallContext::arguments_in_statement): a collective on an intracommunicator (on
  // MPI_COMM_NULL too: `barrier null`), a blocking or nonblocking send, receive or MPI_Probe, a sendrecv,
  // each with a peer that is a rank of its communicator (not MPI_PROC_NULL). Kept in step with read_call.
  bool arguments_in_statement(size_t p, const RecorderLine* in, const MpiCallInfo& info,
                              const MpiCallContext& ctx) const {
    if (info.has(kPersistent) || ctx.inter) return false;
    auto peer_written = [&](const char* key) {
      if (field(in, key) == nullptr) return false;
      const int64_t peer = int_field(p, in, key);
      return peer == kAnySource || (peer >= 0 && ctx.comm_size >= 0 && peer < ctx.comm_size);
    };
    switch (info.family) {
      case MpiFamily::Collective:
        return true;
      case MpiFamily::Send:
      case MpiFamily::Recv:
      case MpiFamily::Probe:
        return !ctx.comm_null && peer_written("peer");
      case MpiFamily::Sendrecv:
        return !ctx.comm_null && peer_written("peer") && peer_written("recv_peer");
      default:
        return false;
    }
  }

  // --- MPI usage errors (issue 26; mpi_usage_rules.h) ----------------------------------------------------
  // What the rules need of a call beyond its lines: its communicator's size, MPI_COMM_NULL, its window.
  MpiCallContext usage_context(size_t p, const ProcessState& st, const RecordedCall& rc, const MpiCallInfo& info) {
    MpiCallContext ctx;
    ctx.info = &info;
    ctx.world_rank = world_rank_[p];
    const RecorderLine* in = rc.enter;
    auto comm_id = [&](uint64_t h) -> std::string {
      auto it = st.comm_of.find(h);
      return it == st.comm_of.end() ? std::string() : it->second;
    };
    if (field(in, "comm") != nullptr) {
      const uint64_t h = handle_field(p, in, "comm");
      ctx.comm_null = is_comm_null(p, in);
      const std::string id = comm_id(h);
      ctx.world_comm = id == "world";
      ctx.inter = is_inter(id);
      if (id == "world")
        ctx.comm_size = world_size_;
      else if (h == self_handle_[p])
        ctx.comm_size = 1;
      else if (const CommInfo* c = comm_by_id(id); c != nullptr && c->size_known && c->comm.size > 0 && !c->inter)
        ctx.comm_size = c->comm.size;
      if (info.family == MpiFamily::WinCreate && !id.empty())  // a window's creation: the id it will get
        ctx.window = id + "/win" + std::to_string(st.windows + 1);
    }
    ctx.arguments_in_statement = arguments_in_statement(p, in, info, ctx);
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
      const RecordedCall& rc = processes_[p].calls[index];
      const int64_t tid = rc.enter->event["tid"].get<int64_t>();
      const bool by_thread = kept_apart(p);  // threads kept apart: each has its own groups
      size_t group_start = SIZE_MAX;
      for (size_t k = 0; k < at; ++k) {
        if (by_thread && out[k].thread != tid) continue;
        if (out[k].call.kind == CallKind::GroupStart) group_start = k;
        if (out[k].call.kind == CallKind::GroupEnd) group_start = SIZE_MAX;
      }
      if (group_start != SIZE_MAX) at = group_start;
      std::vector<PendingCall> inserted;
      for (const MpiUsageError& error : e->second) {
        PendingCall pc;
        pc.call.kind = CallKind::MpiError;
        pc.call.key = error.message;
        pc.call.mpi_rule = error.rule;
        pc.call.detail = rc.enter->event["call"].get<std::string>();
        pc.call.origin = processes_[p].file->name + ":" + std::to_string(rc.enter->line);
        pc.source = index;
        pc.thread = tid;
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
  void close_group(ProcessState& st, std::vector<PendingCall>& out, CallState state) {
    PendingCall end;
    end.call.kind = CallKind::GroupEnd;
    end.call.state = state;
    end.thread = st.thread;
    out.push_back(end);
    st.group_open = false;
  }
  // A request completes: a cancelled operation (MPI 4.1 sec. 3.8.4: it moved no message) leaves the group.
  void complete(ProcessState& st, uint64_t request, bool cancelled, std::vector<PendingCall>& out, CallState state) {
    if (cancelled)
      for (auto it = out.rbegin(); it != out.rend(); ++it)
        if (it->request == request && (it->call.kind == CallKind::Send || it->call.kind == CallKind::Recv)) {
          it->call.kind = CallKind::Other;
          it->call.detail += " (cancelled: MPI_Cancel took effect, no message moved)";
          break;
        }
    st.outstanding.erase(request);
    st.cancelled.erase(request);
    if (st.group_open && st.outstanding.empty()) close_group(st, out, state);
  }
  // A nonblocking operation posted with request `r` (none: 0).
  void post(ProcessState& st, std::vector<PendingCall>& out, PendingCall pc, uint64_t r) {
    open_group(st, out);
    if (r != 0) st.outstanding.insert(r);
    pc.request = r;
    out.push_back(std::move(pc));
  }
  // The peer of a point-to-point call: on an intercommunicator a rank of the remote group (MPI 4.1 sec. 7.6),
  // made a world rank here; on an intracommunicator a rank of it, made one in build().
  void set_peer(size_t p, PendingCall& pc, int64_t peer) {
    const CommInfo* info = comm_by_id(pc.call.comm);
    if (info != nullptr && info->inter) {
      auto r = remote_.find({pc.call.comm, world_rank_[p]});
      if (r != remote_.end() && peer >= 0 && static_cast<size_t>(peer) < r->second.size())
        pc.call.peer = r->second[static_cast<size_t>(peer)];
      return;
    }
    pc.peer_comm_rank = peer;
  }

  // A communicator made by this process (`child`; its members from the return line when written).
  void made_comm(size_t p, ProcessState& st, const RecordedCall& rc, const std::string& child, CommOrigin origin,
                 const std::string& parent, int64_t key, bool dup_of_parent) {
    const RecorderLine* ret = rc.ret;
    auto& info = comm_info(child, origin);
    info.comm.parent = parent;
    info.comm.label = child;
    int64_t rank = -1;
    const CommInfo* par = comm_by_id(parent);
    if (ret != nullptr && int_or(ret, "result", 0) == 0) {
      st.comm_of[handle_field(p, ret, "newcomm")] = child;
      rank = int_or(ret, "rank", -1);
      const int64_t size = int_or(ret, "size", -1);
      if (size > 0) info.comm.size = static_cast<int>(size);
      auto members = rank_list(ret, "members");
      auto remote = rank_list(ret, "remote");
      if (int_or(ret, "inter", 0) != 0 || (dup_of_parent && par != nullptr && par->inter)) info.inter = true;
      if (members && (remote || !info.inter)) {
        std::vector<int> all = *members;
        if (remote) all.insert(all.end(), remote->begin(), remote->end());
        std::sort(all.begin(), all.end());
        info.union_ranks = all;
        if (remote) remote_[{child, world_rank_[p]}] = *remote;
      } else if (dup_of_parent && par != nullptr) {
        info.union_ranks = par->union_ranks;
        auto r = remote_.find({parent, world_rank_[p]});
        if (r != remote_.end()) remote_[{child, world_rank_[p]}] = r->second;
      }
    }
    if (info.inter || (rank < 0 && !info.union_ranks.empty())) {
      // One numbering for both groups of an intercommunicator: by world rank.
      auto at = std::find(info.union_ranks.begin(), info.union_ranks.end(), world_rank_[p]);
      rank = at == info.union_ranks.end() ? -1 : at - info.union_ranks.begin();
      if (!info.union_ranks.empty()) info.comm.size = static_cast<int>(info.union_ranks.size());
    }
    if (dup_of_parent && rank < 0) key = world_rank_[p];
    info.members.push_back(Membership{p, rank, key});
  }

  void read_call(size_t p, ProcessState& st, const RecordedCall& rc, const MpiCallInfo& info,
                 std::vector<PendingCall>& out) {
    const RecorderLine* in = rc.enter;
    const RecorderLine* ret = rc.ret;
    const std::string& name = std::string(info.name);
    PendingCall pc;
    Call& c = pc.call;
    c.state = ret != nullptr ? CallState::Completed : CallState::Started;
    c.seq = static_cast<int64_t>(in->event["seq"].get<uint64_t>());
    c.origin = processes_[p].file->name + ":" + std::to_string(in->line);
    if (const Json* t = field(in, "t_wall_ns"); t != nullptr && t->is_number_unsigned()) c.time_ns = t->get<uint64_t>();
    if (const Json* t = field(ret, "t_wall_ns"); t != nullptr && t->is_number_unsigned())
      c.return_ns = t->get<uint64_t>();
    c.detail = name;
    const int64_t result = ret != nullptr ? int_field(p, ret, "result") : 0;
    if (result != 0) c.detail += " returned error " + std::to_string(result);
    const bool ok = ret != nullptr && result == 0;
    auto request_out = [&]() -> uint64_t {
      if (!ok || field(ret, "req") == nullptr) return 0;
      return handle_field(p, ret, "req");
    };
    auto comm = [&](const char* key = "comm") { return comm_of(p, st, handle_field(p, in, key), in); };

    switch (info.family) {
      case MpiFamily::Init:
        return;
      case MpiFamily::Collective: {
        c.kind = info.kind;
        c.mpi_call = name.substr(4);  // `call=`: ranks meeting in one slot with different functions mismatch
        c.comm = is_comm_null(p, in) ? std::string(kTraceNullComm) : comm();
        if (info.kind != CallKind::Barrier) {
          // The count and type MPI reads on this rank (the recorder takes the receive side where MPI_IN_PLACE
          // makes the send side ignored); on an intercommunicator the two groups pass different ones (a root
          // group sends, the other receives): not compared.
          if (!is_inter(c.comm))
            set_message(c, int_or(in, "count", -1) < 0 && string_or(in, "dtype") != "MPI_DATATYPE_NULL"
                               ? recorded_v_message(in)
                               : recorded_message(in, "", "count"));
          else
            c.dtype = "any";
        }
        if (info.has(kReduces)) {
          const std::string o = string_or(in, "op");
          if (o == "sum" || o == "prod" || o == "max" || o == "min" || o == "null") c.redop = o;
        }
        // Written for rooted calls only (older traces: -1 when not rooted). On an intercommunicator the root
        // is MPI_ROOT, MPI_PROC_NULL or a remote rank: not one rank that every member names.
        if (field(in, "root") != nullptr && !is_inter(c.comm))
          if (const int64_t root = int_field(p, in, "root"); root >= 0) pc.root_comm_rank = root;
        if (info.has(kNonblocking)) {
          post(st, out, std::move(pc), request_out());
          return;
        }
        out.push_back(std::move(pc));
        return;
      }
      case MpiFamily::Send:
      case MpiFamily::Recv: {
        const bool send = info.family == MpiFamily::Send;
        c.kind = send ? CallKind::Send : CallKind::Recv;
        c.comm = comm();
        set_message(c, recorded_message(in, "", "count"));
        if (send && info.has(kBuffered)) c.buffered = true;  // MPI 4.1 sec. 3.4: completes locally
        const int64_t peer = int_field(p, in, "peer");
        if (peer == kProcNull) {  // MPI_PROC_NULL: no communication at all
          if (info.has(kPersistent) && ok) st.persistent[handle_field(p, ret, "req")] = std::nullopt;
          if (info.has(kNonblocking) && ok) st.local_requests.insert(request_out());
          return;
        }
        if (field(in, "tag") != nullptr) c.tag = int_field(p, in, "tag");
        if (peer == kAnySource && !send) {
          c.any_source = true;
          if (ok && !info.has(kNonblocking) && !info.has(kPersistent))
            c.detail += " matched source " + std::to_string(int_field(p, ret, "source"));
        } else {
          set_peer(p, pc, peer);
        }
        if (info.has(kPersistent)) {
          if (ok) st.persistent[handle_field(p, ret, "req")] = std::move(pc);
          return;
        }
        if (info.has(kNonblocking)) {
          post(st, out, std::move(pc), request_out());
          return;
        }
        out.push_back(std::move(pc));
        return;
      }
      case MpiFamily::Sendrecv: {
        const std::string cm = comm();
        const bool was_open = st.group_open;
        open_group(st, out);
        const int64_t dest = int_field(p, in, "peer"), source = int_field(p, in, "recv_peer");
        if (dest != kProcNull) {
          PendingCall s = pc;
          s.call.kind = CallKind::Send;
          s.call.comm = cm;
          set_message(s.call, recorded_message(in, "", "count"));
          if (field(in, "tag") != nullptr) s.call.tag = int_field(p, in, "tag");
          set_peer(p, s, dest);
          out.push_back(std::move(s));
        }
        if (source != kProcNull) {
          PendingCall r = pc;
          r.call.kind = CallKind::Recv;
          r.call.comm = cm;
          set_message(r.call, recorded_message(in, "recv_", "recv_count"));
          if (field(in, "recv_tag") != nullptr) r.call.tag = int_field(p, in, "recv_tag");
          if (source == kAnySource)
            r.call.any_source = true;
          else
            set_peer(p, r, source);
          out.push_back(std::move(r));
        }
        if (!was_open) close_group(st, out, c.state);
        return;
      }
      case MpiFamily::Probe: {
        // A blocking probe waits for a message it matches (MPI 4.1 sec. 3.8.1). Between a nonblocking call and
        // its wait (a `group`, which holds only what is posted together) it is left as a comment.
        const int64_t peer = int_field(p, in, "peer");
        if (peer == kProcNull || st.group_open) {
          if (st.group_open) c.detail += " (between a nonblocking call and its wait: left out)";
          out.push_back(std::move(pc));
          return;
        }
        c.kind = CallKind::Probe;
        c.comm = comm();
        if (field(in, "tag") != nullptr) c.tag = int_field(p, in, "tag");
        if (peer == kAnySource)
          c.any_source = true;
        else
          set_peer(p, pc, peer);
        out.push_back(std::move(pc));
        return;
      }
      case MpiFamily::Mprobe: {
        // A matched probe dequeues the message it matches (MPI 4.1 sec. 3.8.2): the receive happens here, from
        // the probe's source (or any); MPI_Mrecv then only copies it. MPI_Improbe that found none did nothing.
        if (info.has(kNonblocking) && (!ok || int_or(ret, "flag", 0) == 0)) return;
        const int64_t peer = int_field(p, in, "peer");
        if (peer == kProcNull) return;
        c.kind = CallKind::Recv;
        c.comm = comm();
        c.dtype = "any";  // the count and type are the MPI_Mrecv's, later: not compared
        if (field(in, "tag") != nullptr) c.tag = int_field(p, in, "tag");
        if (info.has(kNonblocking)) {  // it found a message: take that one
          c.peer = std::nullopt;
          if (const int64_t s = int_or(ret, "source", -1); s >= 0) set_peer(p, pc, s);
          if (const int64_t t = int_or(ret, "tag", -1); t >= 0) c.tag = t;
        } else if (peer == kAnySource) {
          c.any_source = true;
        } else {
          set_peer(p, pc, peer);
        }
        if (st.group_open) {
          post(st, out, std::move(pc), 0);
          return;
        }
        out.push_back(std::move(pc));
        return;
      }
      case MpiFamily::Mrecv:
        if (info.has(kNonblocking) && ok) st.local_requests.insert(request_out());
        out.push_back(std::move(pc));
        return;
      case MpiFamily::Wait:
      case MpiFamily::WaitAll:
      case MpiFamily::WaitSome: {
        const bool test = info.has(kNonblocking);
        if (test && (!ok || int_or(ret, "flag", 0) == 0) && info.family != MpiFamily::WaitSome) return;
        std::vector<uint64_t> reqs;
        std::vector<size_t> picked;
        std::set<size_t> cancelled_at;
        if (info.family == MpiFamily::Wait) {
          reqs.push_back(handle_field(p, in, "req"));
          if (ret != nullptr) picked.push_back(0);
          if (ok && int_or(ret, "cancelled", 0) != 0) cancelled_at.insert(0);
        } else {
          reqs = handles_field(p, in, "reqs");
          if (info.family == MpiFamily::WaitAll) {
            if (ret == nullptr) return;  // never returned: the group stays open to the end, where it stopped
            for (size_t k = 0; k < reqs.size(); ++k) picked.push_back(k);
            if (ok && field(ret, "cancelled") != nullptr)
              for (const auto& s : list_field(p, ret, "cancelled"))
                cancelled_at.insert(static_cast<size_t>(std::atoll(s.c_str())));
          } else if (info.call == MpiCall::Waitany) {
            if (!ok) return;  // stopped in a Waitany: it waits for any one of them; the group holds them all
            const int64_t index = int_field(p, ret, "index");
            if (index >= 0) picked.push_back(static_cast<size_t>(index));
            if (int_or(ret, "cancelled", 0) != 0 && index >= 0) cancelled_at.insert(static_cast<size_t>(index));
          } else if (ok && field(ret, "indices") != nullptr) {
            for (const auto& s : list_field(p, ret, "indices"))
              picked.push_back(static_cast<size_t>(std::atoll(s.c_str())));
          }
        }
        for (size_t k : picked) {
          if (k >= reqs.size()) continue;
          const uint64_t r = reqs[k];
          if (st.outstanding.count(r)) {
            complete(st, r, cancelled_at.count(k) > 0, out, c.state);
          } else if (st.by_thread && st.outstanding_elsewhere(r)) {
            // A thread completes a request another thread started: one group spans both (MPI 4.1 sec. 3.7.3
            // allows it); the threads are then read as one body.
            split_failed_.emplace(p, "a request started by one thread was completed by another (" + c.origin + ")");
          } else if (r != 0 && !st.local_requests.count(r) && info.family == MpiFamily::Wait && !st.unseen_requests++) {
            rank_notes_[world_rank_[p]].push_back(
                "a wait on a request the trace never saw posted (a call the recorder does not see)");
          }
        }
        return;
      }
      case MpiFamily::Start: {
        // Each started request posts its operation, as MPI_Isend or MPI_Irecv would (MPI 4.1 sec. 3.9), and
        // is completed by a wait like theirs.
        std::vector<uint64_t> reqs;
        if (info.has(kAll))
          reqs = handles_field(p, in, "reqs");
        else
          reqs.push_back(handle_field(p, in, "req"));
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
          post(st, out, std::move(started), r);
        }
        return;
      }
      case MpiFamily::RequestFree:
        if (ok) st.persistent.erase(handle_field(p, in, "req"));
        out.push_back(std::move(pc));
        return;
      case MpiFamily::Cancel:
        st.cancelled.insert(handle_field(p, in, "req"));
        out.push_back(std::move(pc));
        return;
      case MpiFamily::Grequest:
        if (ok) st.local_requests.insert(request_out());
        out.push_back(std::move(pc));
        return;
      case MpiFamily::CommCreate: {
        // Collective over the parent's members (MPI 4.1 sec. 7.4.2, 7.6.2, 8.5): each one's n-th creation on
        // the parent is the same call; the child is named by that, the color of a split, and for a call that
        // may make several children (MPI_Comm_create with disjoint groups, MPI_Cart_sub) its lowest member.
        c.kind = CallKind::CommSplit;
        c.comm = comm();
        const int n = st.creations_on[c.comm]++;
        std::string child = c.comm + "/" + std::to_string(n);
        const bool split = info.call == MpiCall::Comm_split || info.call == MpiCall::Comm_split_type;
        const bool dup = info.call == MpiCall::Comm_dup || info.call == MpiCall::Comm_dup_with_info ||
                         info.call == MpiCall::Comm_idup;
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
        if (ok && !dup && !split) {
          if (int_or(ret, "rank", -1) < 0 && handle_field(p, ret, "newcomm") == comm_null_handle_[p]) {
            out.push_back(std::move(pc));  // MPI_COMM_NULL: this process is in no child
            return;
          }
          if (auto m = rank_list(ret, "members");
              m && !m->empty() && (info.call == MpiCall::Comm_create || info.call == MpiCall::Cart_sub))
            child += ".m" + std::to_string(*std::min_element(m->begin(), m->end()));
        }
        if (ok && split && int_or(ret, "rank", -1) < 0) {
          out.push_back(std::move(pc));
          return;
        }
        made_comm(p, st, rc, child, CommOrigin::Split, c.comm, key, dup);
        c.child_comm = child;
        if (info.has(kNonblocking)) {  // MPI_Comm_idup: posted here, completed by its request
          post(st, out, std::move(pc), request_out());
          return;
        }
        out.push_back(std::move(pc));
        return;
      }
      case MpiFamily::CommCreateGroup: {
        // Collective over the new communicator's members only (MPI_Comm_create_group: the group; MPI_Intercomm_create:
        // both groups), so they agree on no count of the parent's creations: the child is named by its members
        // (world ranks), the tag and how many such creations this process made before.
        c.kind = CallKind::CommInit;
        const std::string parent = comm();
        std::string members_key;
        if (ok) {
          auto m = rank_list(ret, "members");
          auto r = rank_list(ret, "remote");
          if (m) {
            std::vector<int> all = *m;
            if (r) all.insert(all.end(), r->begin(), r->end());
            std::sort(all.begin(), all.end());
            for (int w : all) members_key += (members_key.empty() ? "" : "_") + std::to_string(w);
          }
          if (int_or(ret, "rank", -1) < 0) {
            out.push_back(std::move(pc));
            return;
          }
        }
        if (members_key.empty()) members_key = parent;  // cut or never returned: what the caller passed
        const std::string base = (info.call == MpiCall::Intercomm_create ? "inter_" : "group_") + members_key + "_t" +
                                 std::to_string(int_or(in, "tag", 0));
        const std::string child = base + "_" + std::to_string(st.group_creations[base]++);
        made_comm(p, st, rc, child, CommOrigin::Init, "", 0, false);
        c.comm = child;
        out.push_back(std::move(pc));
        return;
      }
      case MpiFamily::CommFree: {
        c.kind = CallKind::CommDestroy;
        const uint64_t h = handle_field(p, in, "comm");
        c.comm = comm();
        // A handle value MPI hands out again after a free is a new communicator (MPI 4.1 sec. 2.5.4).
        if (ok) st.comm_of.erase(h);
        // MPI_Comm_free marks the communicator for deallocation; a window made on it keeps working (MPI 4.1
        // sec. 7.4.3, 12.2): the comm's end is taken at its last window's free.
        if (st.windows_on[c.comm] > 0) {
          c.detail += " (before the communicator's windows were freed: taken at the last one's MPI_Win_free)";
          st.deferred_free[c.comm] = std::move(pc);
          return;
        }
        out.push_back(std::move(pc));
        return;
      }
      case MpiFamily::WinCreate:
        c.kind = CallKind::WindowRegister;
        c.comm = comm();
        c.buffer = "win" + std::to_string(++st.windows);
        if (ok) {
          st.window_of[handle_field(p, ret, "win")] = {c.comm, c.buffer};
          ++st.windows_on[c.comm];
        }
        out.push_back(std::move(pc));
        return;
      case MpiFamily::WinFree:
      case MpiFamily::WinFence: {
        auto it = st.window_of.find(handle_field(p, in, "win"));
        if (it == st.window_of.end()) {
          c.detail += " on a window the trace never saw created";
          out.push_back(std::move(pc));
          return;
        }
        c.kind = info.kind;
        c.comm = it->second.first;
        c.buffer = it->second.second;
        if (info.family == MpiFamily::WinFence && int_or(in, "nosucceed", 0) != 0)
          c.win_mode = model::WinMode::NoSucceed;
        const std::string on = it->second.first;
        if (info.family == MpiFamily::WinFree && ok) st.window_of.erase(it);
        out.push_back(std::move(pc));
        if (info.family == MpiFamily::WinFree && ok && --st.windows_on[on] == 0) {
          auto d = st.deferred_free.find(on);
          if (d != st.deferred_free.end()) {
            out.push_back(std::move(d->second));
            st.deferred_free.erase(d);
          }
        }
        return;
      }
      case MpiFamily::Rma:
      case MpiFamily::WinLock:
      case MpiFamily::WinUnlock:
      case MpiFamily::WinFlush:
      case MpiFamily::WinStart:
      case MpiFamily::WinComplete:
      case MpiFamily::WinPost:
      case MpiFamily::WinWait:
        read_one_sided(p, st, rc, info, std::move(pc), out);
        return;
      case MpiFamily::Finalize:
        finalize(p, st, std::move(pc), out);
        return;
      default:
        // Datatypes, MPI_Abort, queries: kept as comments (the language has no statement for them; the usage
        // rules read what they need).
        out.push_back(std::move(pc));
        return;
    }
  }

  // MPI_Finalize, where every epoch is closed and every request completed or freed (MPI 4.1 sec. 3.7.3,
  // 11.2.2): the semantics judges both. A request left is written as `mpi_finalize` inside the group that
  // holds what is posted and not yet waited for (request_not_completed); with none left, that group (requests
  // freed while active) ends here: MPI_Finalize returns once their operations have.
  void finalize(size_t p, ProcessState& st, PendingCall pc, std::vector<PendingCall>& out) {
    pc.call.kind = CallKind::MpiFinalize;
    const std::vector<std::string> pending = usage_rules_.pending_requests(p);
    if (!pending.empty()) {
      open_group(st, out);
      PendingCall left;
      left.call.origin = pc.call.origin;
      left.call.detail = "the request handles MPI_Finalize leaves never completed by a wait or test, nor freed: " +
                         absl::StrJoin(pending, ", ");
      out.push_back(std::move(left));
    } else if (st.group_open) {
      rank_notes_[world_rank_[p]].push_back(std::to_string(st.outstanding.size()) +
                                            " nonblocking operation(s) freed while active, waited for at MPI_Finalize");
      close_group(st, out, pc.call.state);
      st.outstanding.clear();
    }
    out.push_back(std::move(pc));
  }

  // One-sided calls as made (issue 32 item 3): the semantics follows the epochs. A transfer to MPI_PROC_NULL
  // moves nothing, a target outside the window's group is the reader's rule (rma_argument: no world rank to
  // write), an MPI_Win_test that returned false closed nothing: comments.
  void read_one_sided(size_t p, ProcessState& st, const RecordedCall& rc, const MpiCallInfo& info, PendingCall pc,
                      std::vector<PendingCall>& out) {
    const RecorderLine* in = rc.enter;
    const RecorderLine* ret = rc.ret;
    const bool ok = ret != nullptr && int_field(p, ret, "result") == 0;
    const std::string name(info.name);
    Call& c = pc.call;
    // An R-transfer's request (MPI_Rput, ...) completes locally, by a wait that is then no unknown request's.
    if (info.has(kRequest) && ok && field(ret, "req") != nullptr) st.local_requests.insert(handle_field(p, ret, "req"));
    auto it = st.window_of.find(handle_field(p, in, "win"));
    if (it == st.window_of.end()) {
      c.detail += " on a window the trace never saw created";
      out.push_back(std::move(pc));
      return;
    }
    if (info.family == MpiFamily::WinWait && info.has(kNonblocking) && (!ok || int_or(ret, "flag", 0) == 0)) {
      c.detail += " (returned false: the exposure epoch stays open)";
      out.push_back(std::move(pc));
      return;
    }
    const bool targeted =
        info.family == MpiFamily::Rma || ((info.family == MpiFamily::WinLock || info.family == MpiFamily::WinUnlock ||
                                           info.family == MpiFamily::WinFlush) &&
                                          !info.has(kAll));
    if (targeted) {
      const int64_t target = int_or(in, "target", -1);
      const CommInfo* wc = comm_by_id(it->second.first);
      const int size = it->second.first == "world"                     ? world_size_
                       : wc != nullptr && wc->size_known && !wc->inter ? wc->comm.size
                                                                       : 0;
      if (target < 0 || (size > 0 && target >= size)) {
        c.detail += target == kProcNull ? " to MPI_PROC_NULL (no transfer)" : " to no rank of the window's group";
        out.push_back(std::move(pc));
        return;
      }
      pc.peer_comm_rank = target;
    }
    c.kind = info.kind;
    c.comm = it->second.first;
    c.buffer = it->second.second;
    // `call=` where one statement stands for several functions (put for MPI_Rput, accumulate for
    // MPI_Fetch_and_op, ...); the statement's own function needs none.
    if (info.family == MpiFamily::Rma && name != model::op_info(*op_kind_of(info.kind)).mpi_name)
      c.mpi_call = name.substr(4);
    if (info.family == MpiFamily::WinLock && !info.has(kAll) && string_or(in, "lock") == "shared")
      c.win_mode = model::WinMode::Shared;
    if (info.family == MpiFamily::WinFlush && info.has(kLocalOnly)) c.win_mode = model::WinMode::Local;
    out.push_back(std::move(pc));
  }

  // --- communicators and the Trace ----------------------------------------------------------------------
  Trace build(std::vector<std::vector<PendingCall>>& calls) {
    Trace t;
    t.format = "mpi-recorder";
    t.mpi = true;
    t.world_size = world_size_;
    t.mpi_tag_ub = usage_rules_.tag_upper_bound();
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
      for (auto& pc : calls[p]) {
        auto to_world = [&](int64_t comm_rank, std::optional<int>& out) {
          auto& m = world_of[pc.call.comm];
          auto it = m.find(static_cast<int>(comm_rank));
          if (it != m.end()) out = it->second;
        };
        if (pc.root_comm_rank) to_world(*pc.root_comm_rank, pc.call.root);
        if (pc.peer_comm_rank) to_world(*pc.peer_comm_rank, pc.call.peer);
      }
      if (kept_apart(p)) {
        if (auto threads = ordered_threads(p, calls[p])) rt.threads = std::move(*threads);
        continue;
      }
      ThreadTrace th;
      th.name = "main";
      for (auto& pc : calls[p]) th.calls.push_back(std::move(pc.call));
      rt.threads.push_back(std::move(th));
    }
    for (auto& n : notes_) t.notes.push_back(n);
    return t;
  }

  // Whether process p's threads are threads of the scenario (their synchronization recorded, and no first
  // reading found that they cannot be kept apart).
  bool kept_apart(size_t p) const {
    return thread_orders_[p].recorded && thread_orders_[p].threads.size() > 1 && one_body_.count(p) == 0;
  }

  // A process's threads kept apart (thread_order.h, threads_with_keys): nullopt, and the process marked to be
  // read again as one body, when a key would fall inside a group.
  std::optional<std::vector<ThreadTrace>> ordered_threads(size_t p, std::vector<PendingCall>& calls) {
    const ThreadOrder& order = thread_orders_[p];
    std::map<int64_t, size_t> slot;
    for (int64_t tid : order.threads) slot.emplace(tid, slot.size());
    std::vector<std::vector<ThreadEntry>> lists(order.threads.size());
    for (auto& pc : calls) {
      auto it = slot.find(pc.thread);  // none: a thread with no MPI call of its own; the rank body's
      lists[it == slot.end() ? 0 : it->second].push_back(ThreadEntry{std::move(pc.call), pc.source});
    }
    auto threads = threads_with_keys(order, world_rank_[p], std::move(lists));
    if (!threads) split_failed_.emplace(p, "a thread synchronization falls between a nonblocking call and its wait");
    return threads;
  }

  const std::vector<RecorderFile>& files_;
  std::map<size_t, std::string> one_body_;
  std::vector<ThreadOrder> thread_orders_;
  std::map<size_t, std::string> split_failed_;  // processes to read again as one body, and why
  std::vector<RecordedProcess> processes_;
  std::vector<int> world_rank_;
  std::map<size_t, uint64_t> world_handle_, self_handle_, comm_null_handle_;
  MpiUsageRules usage_rules_;
  int world_size_ = 0;
  std::map<std::string, CommInfo> comms_;
  std::vector<std::string> order_;                                  // comms in order of first sight
  std::map<std::pair<std::string, int>, std::vector<int>> remote_;  // (intercomm, world rank) -> remote group
  std::map<int, std::vector<std::string>> rank_notes_;
  std::map<std::string, int> unmodelled_;  // recorded names the call table does not hold
  std::vector<std::string> notes_;
};

}  // namespace

Trace read_mpi_recorder_files(const std::vector<RecorderFile>& files) { return MpiAssembler(files).run(); }

}  // namespace collmc::traces
