// Reading the recorder's JSON-lines traces (recorder_reader.h) into a Trace (trace.h): communicators
// matched across processes by the unique-id hash (splits by parent, color and the split's number on
// the parent), buffers named by the allocation that holds them, per-rank programs in call order with
// threads kept apart, and each call's state (returned, or entered and never returned: where it stopped).
#include "collmc/traces/recorder_reader.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <set>

#include "file_io.h"

namespace collmc::traces {
namespace {

using Json = nlohmann::ordered_json;

constexpr uint64_t kFormatVersion = 1;
constexpr const char* kNcclFormat = "collmc-recorder";     // libcollmc_record.so
constexpr const char* kMpiFormat = "collmc-mpi-recorder";  // libcollmc_record_mpi.so
constexpr int64_t kNcclInProgress = 7;
constexpr int64_t kSplitNoColor = -1;

// What the reader makes of a recorded function: the call kind, and for entry points that are no
// operation of their own, what becomes of them.
enum class Recorded {
  Operation,   // the call kind's operation (its arguments read by the kind)
  GroupStart,  // ncclGroupStart / ncclGroupEnd: delimit what is issued together
  GroupEnd,
  Ignored,     // local and naming nothing a scenario needs (ncclGetUniqueId)
  Unmodelled,  // no statement for it: an Other call, with a note said once
};

struct RecordedName {
  CallKind kind = CallKind::Other;
  Recorded what = Recorded::Unmodelled;
  const char* note = nullptr;  // Unmodelled: what the scenario then lacks
};

// Every recorded name: operations.def's NCCL and CUDA names, then the entry points that are another
// form of an operation or none.
const std::map<std::string, RecordedName, std::less<>>& recorded_names() {
  static const auto names = [] {
    std::map<std::string, RecordedName, std::less<>> m;
    for (const model::OpInfo& op : model::kOperations)
      if (!op.nccl_name.empty())
        m.emplace(std::string(op.nccl_name), RecordedName{call_kind_of(op.kind), Recorded::Operation});
    m.emplace("ncclCommInitRankConfig", RecordedName{CallKind::CommInit, Recorded::Operation});
    m.emplace("ncclCommInitRankScalable", RecordedName{CallKind::CommInit, Recorded::Operation});
    m.emplace("ncclBcast", RecordedName{CallKind::Broadcast, Recorded::Operation});
    m.emplace("ncclGroupStart", RecordedName{CallKind::GroupStart, Recorded::GroupStart});
    m.emplace("ncclGroupEnd", RecordedName{CallKind::GroupEnd, Recorded::GroupEnd});
    m.emplace("ncclGetUniqueId", RecordedName{CallKind::Other, Recorded::Ignored});
    m.emplace(
        "ncclCommInitAll",
        RecordedName{CallKind::Other, Recorded::Unmodelled,
                     "ncclCommInitAll (several ranks in one process) is not modelled; its communicators are unknown"});
    // The scenario has shrink and grow (issue 23), but their children's members are not in the trace
    // yet (the excluded ranks, the new ranks): named, not read, until the reader learns them.
    m.insert_or_assign("ncclCommShrink",
                       RecordedName{CallKind::Other, Recorded::Unmodelled,
                                    "ncclCommShrink is not read yet; calls on the shrunk communicator name a "
                                    "communicator of its own"});
    m.insert_or_assign("ncclCommGrow",
                       RecordedName{CallKind::Other, Recorded::Unmodelled,
                                    "ncclCommGrow is not read yet; calls on the grown communicator name a "
                                    "communicator of its own"});
    return m;
  }();
  return names;
}
// More ranks than a scenario is checked with: a trace that claims them is refused, not emitted.
constexpr int64_t kMaxWorld = 4096;

// ---------------------------------------------------------------------------------------------------
// Lines

// The column of the first byte that makes `text` more than one flat object ('[' or a nested '{' outside
// strings), or 0. The recorder never writes nesting, and refusing it bounds the parser's work.
int nesting_column(const std::string& text) {
  bool in_string = false, escaped = false;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || (c == '{' && ++depth > 1)) {
      return static_cast<int>(i) + 1;
    } else if (c == '}') {
      --depth;
    }
  }
  return 0;
}

int column_of(const std::string& text, const char* key) {
  size_t at = text.find(std::string("\"") + key + "\"");
  return at == std::string::npos ? 1 : static_cast<int>(at) + 1;
}

// Field checks for one line, with errors that point at the field.
class LineFields {
 public:
  LineFields(const std::string& file, int line, const std::string& text, const Json& j)
      : file_(file), line_(line), text_(text), j_(j) {}

  [[noreturn]] void fail(const char* key, const std::string& message) const {
    throw TraceInputError(file_, line_, key ? column_of(text_, key) : 1, 0, message);
  }
  const Json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  void require_string(const char* key) const {
    const Json* v = find(key);
    if (v == nullptr) fail(nullptr, std::string("expected a \"") + key + "\" member (a string)");
    if (!v->is_string()) fail(key, std::string("expected \"") + key + "\" to be a string");
  }
  void require_integer(const char* key, bool unsigned_only) const {
    const Json* v = find(key);
    if (v == nullptr) fail(nullptr, std::string("expected a \"") + key + "\" member (an integer)");
    if (!v->is_number_integer() || (unsigned_only && !v->is_number_unsigned()))
      fail(key,
           std::string("expected \"") + key + "\" to be " + (unsigned_only ? "a non-negative integer" : "an integer"));
  }

 private:
  const std::string& file_;
  int line_;
  const std::string& text_;
  const Json& j_;
};

RecorderLine parse_line(const std::string& name, int number, const std::string& text) {
  if (int col = nesting_column(text); col > 0)
    throw TraceInputError(name, number, col, 0, "expected one flat JSON object per line (no arrays or nesting)");
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    int col = static_cast<int>(std::min<size_t>(e.byte == 0 ? 1 : e.byte, text.size() + 1));
    throw TraceInputError(name, number, col, 0, std::string("expected a JSON object: ") + e.what());
  } catch (const Json::exception& e) {  // a number too large for a double, ...
    throw TraceInputError(name, number, 1, 0, std::string("expected a JSON object: ") + e.what());
  }
  if (!j.is_object()) throw TraceInputError(name, number, 1, 0, "expected a JSON object");
  LineFields f(name, number, text, j);
  f.require_string("ev");
  const std::string ev = j["ev"].get<std::string>();
  if (ev == "process") {
    f.require_string("format");
    if (j["format"] != kNcclFormat && j["format"] != kMpiFormat)
      f.fail("format", "expected \"format\":\"collmc-recorder\" or \"collmc-mpi-recorder\"");
    f.require_integer("version", true);
    if (j["version"].get<uint64_t>() != kFormatVersion)
      f.fail("version", "this collmc reads recorder format version " + std::to_string(kFormatVersion));
    f.require_integer("pid", false);
    f.require_string("host");
  } else if (ev == "enter" || ev == "return") {
    f.require_integer("seq", true);
    f.require_integer("tid", false);
    f.require_string("call");
    if (ev == "return") f.require_integer("result", false);
  } else {
    f.fail("ev", "expected \"ev\" to be \"process\", \"enter\" or \"return\"");
  }
  return RecorderLine{number, std::move(j)};
}

// ---------------------------------------------------------------------------------------------------
// From lines to a Trace

std::string hex(uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), kHex[v & 0xf]);
    v >>= 4;
  } while (v != 0);
  return s;
}

using RawCall = RecordedCall;

// One process (RecordedProcess) and its world rank.
struct Process {
  const RecorderFile* file = nullptr;
  const RecorderLine* header = nullptr;
  std::vector<RawCall> calls;  // in entry order
  int world_rank = -1;
};

// A rank of a communicator as one process saw it at creation.
struct Membership {
  size_t process = 0;
  int64_t comm_rank = -1;  // -1: not known (a split that never returned)
  int64_t nranks = -1;
  int64_t key = 0;  // split key: orders the members when their ranks are unknown
};

struct CommInfo {
  Communicator comm;
  std::vector<Membership> members;
  size_t first_seen = 0;  // creation order across processes, for a stable listing
};

// A call whose root or peer is still a rank of its communicator (converted once every member is known).
struct PendingCall {
  Call call;
  std::optional<int64_t> root_comm_rank, peer_comm_rank;
};

struct PendingThread {
  std::string name;
  std::vector<PendingCall> calls;
};

class Assembler {
 public:
  explicit Assembler(const std::vector<RecorderFile>& files) : files_(files) {}

  Trace run() {
    split_processes();
    for (size_t p = 0; p < processes_.size(); ++p) threads_.push_back(read_process(p));
    keep_nccl_processes();
    assign_world_ranks();
    return build();
  }

 private:
  // --- processes -----------------------------------------------------------------------------------

  void split_processes() {
    for (auto& rp : split_recorded_processes(files_, notes_))
      processes_.push_back(Process{rp.file, rp.header, std::move(rp.calls), -1});
  }

  // --- one process's calls -------------------------------------------------------------------------

  struct ProcessState {
    std::map<uint64_t, std::string> comm_of_ptr;
    std::map<std::string, int> splits_on;                              // parent id -> splits so far
    std::map<uint64_t, std::pair<uint64_t, std::string>> allocations;  // start -> (end, name)
    std::map<std::string, int> name_uses;
    std::map<std::pair<std::string, uint64_t>, std::string> window_buffer, local_buffer;
    std::map<uint64_t, std::string> stream_names;
    std::map<int64_t, int> group_depth;  // per thread
    bool any_nccl = false;
  };

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
  uint64_t ptr_field(size_t p, const RecorderLine* l, const char* key) const {
    return RecorderFields(*processes_[p].file, l).hex(key);
  }

  std::string comm_of(size_t p, ProcessState& st, uint64_t ptr, const RecorderLine* l) {
    auto it = st.comm_of_ptr.find(ptr);
    if (it != st.comm_of_ptr.end()) return it->second;
    // A communicator this process never created in the trace (made before the recorder was loaded, or by a
    // call the recorder does not see): it exists from the start and has only this process in it.
    std::string id = "ptr:" + std::to_string(process_pid(p)) + ":" + hex(ptr);
    st.comm_of_ptr[ptr] = id;
    auto& info = comm_info(id, CommOrigin::Preexisting);
    info.members.push_back(Membership{p, -1, -1, 0});
    notes_.push_back(processes_[p].file->name + ":" + std::to_string(l->line) + ": communicator 0x" + hex(ptr) +
                     " was never created in this trace; it stands alone in the scenario");
    return id;
  }

  CommInfo& comm_info(const std::string& id, CommOrigin origin) {
    auto [it, fresh] = comms_.try_emplace(id);
    if (fresh) {
      it->second.comm.id = id;
      it->second.comm.origin = origin;
      it->second.first_seen = comms_.size();
    }
    return it->second;
  }

  int64_t process_pid(size_t p) const { return processes_[p].header->event["pid"].get<int64_t>(); }

  // The name of the allocation that holds `ptr`, or a name of its own for memory the trace never saw
  // allocated (a plain device buffer that exists from the start).
  static std::string buffer_name(ProcessState& st, uint64_t ptr) {
    if (ptr == 0) return "";
    auto it = st.allocations.upper_bound(ptr);
    if (it != st.allocations.begin()) {
      --it;
      if (ptr < it->second.first) return it->second.second;
    }
    return "buf_" + hex(ptr);
  }
  static std::string new_allocation(ProcessState& st, uint64_t ptr, uint64_t size) {
    std::string name = "buf_" + hex(ptr);
    // An address can come back after a free; the scenario needs a fresh name for the new buffer.
    int uses = ++st.name_uses[name];
    if (uses > 1) name += "_" + std::to_string(uses);
    st.allocations[ptr] = {ptr + std::max<uint64_t>(size, 1), name};
    return name;
  }
  static std::string stream_name(ProcessState& st, uint64_t ptr) {
    if (ptr == 0) return "";
    auto [it, fresh] = st.stream_names.try_emplace(ptr);
    if (fresh) it->second = "stream" + std::to_string(st.stream_names.size());
    return it->second;
  }

  std::vector<PendingThread> read_process(size_t p) {
    ProcessState st;
    std::map<int64_t, size_t> thread_index;
    std::vector<PendingThread> threads;
    const int64_t pid = process_pid(p);
    // NCCL calls its own public functions through the dynamic linker too (ncclCommWindowRegister calls
    // ncclCommRegister, ncclCommDestroy deregisters what is left), so the recorder sees them, nested in the
    // program's call on the same thread. They are part of that call, not the program's: left out.
    std::map<int64_t, const RawCall*> outer;  // per thread: the program's last call
    size_t nested = 0;
    for (const RawCall& rc : processes_[p].calls) {
      const int64_t tid = rc.enter->event["tid"].get<int64_t>();
      auto [o, first] = outer.try_emplace(tid, &rc);
      if (!first) {
        const RawCall* out = o->second;
        if (out->ret == nullptr || out->ret->line > rc.enter->line) {
          ++nested;
          continue;
        }
        o->second = &rc;
      }
      auto [it, fresh] = thread_index.try_emplace(tid, threads.size());
      if (fresh) threads.push_back(PendingThread{tid == pid ? "main" : "tid" + std::to_string(tid), {}});
      std::optional<PendingCall> call = read_call(p, st, rc, tid);
      if (call) threads[it->second].calls.push_back(std::move(*call));
    }
    if (nested > 0)
      notes_.push_back(processes_[p].file->name + ": " + std::to_string(nested) +
                       " call(s) made by NCCL inside another call of the same thread are left out");
    // The main thread first, then the others in order of their first call.
    std::stable_partition(threads.begin(), threads.end(), [](const PendingThread& t) { return t.name == "main"; });
    has_nccl_.push_back(st.any_nccl);
    return threads;
  }

  std::optional<PendingCall> read_call(size_t p, ProcessState& st, const RawCall& rc, int64_t tid) {
    const RecorderLine* in = rc.enter;
    const RecorderLine* out = rc.ret;
    const std::string name = in->event["call"].get<std::string>();
    const bool nccl = name.rfind("nccl", 0) == 0;
    st.any_nccl = st.any_nccl || nccl;
    PendingCall pc;
    Call& c = pc.call;
    c.state = out != nullptr ? CallState::Completed : CallState::Started;
    c.seq = static_cast<int64_t>(in->event["seq"].get<uint64_t>());
    c.origin = processes_[p].file->name + ":" + std::to_string(in->line);
    if (const Json* t = field(in, "t_wall_ns"); t != nullptr && t->is_number_unsigned()) c.time_ns = t->get<uint64_t>();
    c.detail = name;
    int64_t result = 0;
    if (out != nullptr) {
      result = out->event["result"].get<int64_t>();
      if (result != 0 && !(nccl && result == kNcclInProgress))
        c.detail += " returned error " + std::to_string(result);
      else if (result == kNcclInProgress)
        c.detail += " returned ncclInProgress";
    }
    const bool ok = out != nullptr && (result == 0 || (nccl && result == kNcclInProgress));

    auto collective = [&](CallKind kind, bool has_op, bool has_root) {
      c.kind = kind;
      c.comm = comm_of(p, st, ptr_field(p, in, "comm"), in);
      const uint64_t send = field(in, "sendbuff") ? ptr_field(p, in, "sendbuff") : 0;
      const uint64_t recv = field(in, "recvbuff") ? ptr_field(p, in, "recvbuff") : 0;
      c.buffer = buffer_name(st, send != 0 ? send : recv);
      const std::string recv_name = buffer_name(st, recv);
      if (send != 0 && !recv_name.empty() && recv_name != c.buffer) c.recv_buffer = recv_name;
      c.count = static_cast<uint64_t>(int_field(p, in, "count"));
      c.dtype = string_field(p, in, "dtype");
      if (c.dtype == "unknown") c.dtype.clear();
      if (has_op) {
        c.redop = string_field(p, in, "op");
        if (c.redop == "premulsum") c.redop = "sum";  // a pre-multiplied sum is a sum to every peer
      }
      if (has_root) pc.root_comm_rank = int_field(p, in, "root");
      c.stream = stream_name(st, ptr_field(p, in, "stream"));
    };

    const auto& names = recorded_names();
    const auto known = names.find(name);
    const RecordedName how = known != names.end() ? known->second : RecordedName{};
    c.kind = how.kind;
    switch (how.what) {
      case Recorded::Ignored:
        return std::nullopt;
      case Recorded::Unmodelled:
        // ncclGather, ncclScatter and anything newer than the table: no statement for it.
        if (how.note != nullptr) note_once(how.note);
        return pc;
      case Recorded::GroupStart:
      case Recorded::GroupEnd: {
        // NCCL groups nest; only the outermost start and end delimit what is issued together.
        int& depth = st.group_depth[tid];
        if (how.what == Recorded::GroupStart) {
          if (depth++ > 0) return std::nullopt;
        } else if (depth == 0) {
          c.kind = CallKind::Other;
          c.detail += " without a group start";
        } else if (--depth > 0) {
          return std::nullopt;
        }
        return pc;
      }
      case Recorded::Operation:
        break;
    }
    const model::OpKind op = *op_kind_of(c.kind);
    switch (model::op_form(op)) {
      case model::OpForm::Collective:
        collective(c.kind, model::takes_redop(op), model::takes_root(op));
        return pc;
      case model::OpForm::PutSignal:
      case model::OpForm::Signal: {
        // One-sided (NCCL 2.29+): the peer, the local buffer, the window the put writes into (named by the
        // buffer this rank registered it with), the number of signals a wait waits for.
        c.comm = comm_of(p, st, ptr_field(p, in, "comm"), in);
        pc.peer_comm_rank = int_field(p, in, "peer");
        c.stream = stream_name(st, ptr_field(p, in, "stream"));
        if (c.kind == CallKind::PutSignal) {
          c.buffer = buffer_name(st, ptr_field(p, in, "sendbuff"));
          c.count = static_cast<uint64_t>(int_field(p, in, "count"));
          c.dtype = string_field(p, in, "dtype");
          if (c.dtype == "unknown") c.dtype.clear();
          auto w = st.window_buffer.find({c.comm, ptr_field(p, in, "win")});
          if (w != st.window_buffer.end()) c.recv_buffer = w->second;
        } else if (c.kind == CallKind::WaitSignal && field(in, "ops") != nullptr) {
          c.count = static_cast<uint64_t>(int_field(p, in, "ops"));
        }
        return pc;
      }
      case model::OpForm::PointToPoint: {
        const bool send = c.kind == CallKind::Send;
        c.comm = comm_of(p, st, ptr_field(p, in, "comm"), in);
        c.buffer = buffer_name(st, ptr_field(p, in, send ? "sendbuff" : "recvbuff"));
        c.count = static_cast<uint64_t>(int_field(p, in, "count"));
        c.dtype = string_field(p, in, "dtype");
        if (c.dtype == "unknown") c.dtype.clear();
        pc.peer_comm_rank = int_field(p, in, "peer");
        c.stream = stream_name(st, ptr_field(p, in, "stream"));
        return pc;
      }
      default:
        break;
    }
    switch (c.kind) {
      case CallKind::CommInit: {
        c.comm = "uid:" + hex(ptr_field(p, in, "uid"));
        auto& info = comm_info(c.comm, CommOrigin::Init);
        info.members.push_back(Membership{p, int_field(p, in, "rank"), int_field(p, in, "nranks"), 0});
        if (ok) st.comm_of_ptr[ptr_field(p, out, "comm")] = c.comm;
        if (field(in, "blocking") != nullptr && int_field(p, in, "blocking") == 0)
          note_once("nonblocking communicators are modelled as blocking ones (" + c.comm + ")");
        break;
      }
      case CallKind::CommSplit: {
        c.comm = comm_of(p, st, ptr_field(p, in, "comm"), in);
        const int n = st.splits_on[c.comm]++;
        const int64_t color = int_field(p, in, "color");
        if (color != kSplitNoColor) {
          c.child_comm = c.comm + "/split" + std::to_string(n) + ".color" + std::to_string(color);
          auto& info = comm_info(c.child_comm, CommOrigin::Split);
          info.comm.parent = c.comm;
          info.comm.split_color = color;
          int64_t rank = -1, nranks = -1;
          if (out != nullptr) {
            rank = int_field(p, out, "rank");
            nranks = int_field(p, out, "nranks");
          }
          info.members.push_back(Membership{p, rank, nranks, int_field(p, in, "key")});
          if (ok) st.comm_of_ptr[ptr_field(p, out, "newcomm")] = c.child_comm;
        }
        break;
      }
      case CallKind::CommFinalize:
      case CallKind::CommDestroy:
      case CallKind::CommAbort:
      case CallKind::CommRevoke:
      case CallKind::CommGetUniqueId: {
        const uint64_t ptr = ptr_field(p, in, "comm");
        c.comm = comm_of(p, st, ptr, in);
        // The handle is gone; NCCL may hand the same address to a later communicator.
        const bool gone = c.kind == CallKind::CommDestroy || c.kind == CallKind::CommAbort;
        if (gone && out != nullptr) st.comm_of_ptr.erase(ptr);
        break;
      }
      case CallKind::WindowRegister:
      case CallKind::LocalRegister: {
        const bool window = c.kind == CallKind::WindowRegister;
        c.comm = comm_of(p, st, ptr_field(p, in, "comm"), in);
        c.buffer = buffer_name(st, ptr_field(p, in, "buff"));
        c.bytes = static_cast<uint64_t>(int_field(p, in, "size"));
        if (window) c.symmetric = (int_field(p, in, "flags") & 1) != 0;
        if (ok)
          (window ? st.window_buffer : st.local_buffer)[{c.comm, ptr_field(p, out, window ? "win" : "handle")}] =
              c.buffer;
        break;
      }
      case CallKind::WindowDeregister:
      case CallKind::LocalDeregister: {
        const bool window = c.kind == CallKind::WindowDeregister;
        c.comm = comm_of(p, st, ptr_field(p, in, "comm"), in);
        auto& handles = window ? st.window_buffer : st.local_buffer;
        auto h = handles.find({c.comm, ptr_field(p, in, window ? "win" : "handle")});
        if (h == handles.end()) {
          c.kind = CallKind::Other;
          c.detail += ": a handle the trace never saw registered";
        } else {
          c.buffer = h->second;
          if (out != nullptr) handles.erase(h);
        }
        break;
      }
      case CallKind::MemAlloc:
      case CallKind::CudaMalloc:
        c.bytes = static_cast<uint64_t>(int_field(p, in, "size"));
        if (!ok) {
          c.kind = CallKind::Other;  // no buffer came of it
          if (out == nullptr) c.detail += " (never returned)";
        } else {
          c.buffer = new_allocation(st, ptr_field(p, out, "ptr"), c.bytes);
        }
        break;
      case CallKind::MemFree:
      case CallKind::CudaFree: {
        const uint64_t ptr = ptr_field(p, in, "ptr");
        // cudaFree(nullptr) is how programs make the CUDA context; it frees nothing.
        if (ptr == 0) return std::nullopt;
        c.buffer = buffer_name(st, ptr);
        if (out != nullptr) st.allocations.erase(ptr);
        break;
      }
      case CallKind::StreamSync:
        c.stream = stream_name(st, ptr_field(p, in, "stream"));
        break;
      default:  // sync device: nothing to read
        break;
    }
    return pc;
  }

  void note_once(const std::string& note) {
    if (said_.insert(note).second) notes_.push_back(note);
  }

  // A process that made no NCCL call (a launcher, a data loader) has no rank.
  void keep_nccl_processes() {
    for (size_t p = 0; p < processes_.size(); ++p)
      if (!has_nccl_[p]) {
        notes_.push_back(processes_[p].file->name + ": process " + std::to_string(process_pid(p)) +
                         " made no NCCL call; it is left out");
      }
  }

  // --- world ranks ---------------------------------------------------------------------------------

  std::vector<size_t> ranked_processes() const {
    std::vector<size_t> out;
    for (size_t p = 0; p < processes_.size(); ++p)
      if (has_nccl_[p]) out.push_back(p);
    return out;
  }

  // The process's rank in the world: the RANK its launcher gave it; else its rank in a communicator
  // made by init that holds every process; else the order of the files.
  void assign_world_ranks() {
    const std::vector<size_t> procs = ranked_processes();
    if (procs.empty())
      throw TraceInputError(files_.front().name, 0, 0, 0, "no process in these traces made an NCCL call");
    if (static_cast<int64_t>(procs.size()) > kMaxWorld)
      throw TraceInputError(files_.front().name, 0, 0, 0,
                            std::to_string(procs.size()) + " processes: more than the " + std::to_string(kMaxWorld) +
                                " ranks a scenario can have");
    world_size_ = static_cast<int>(procs.size());
    std::set<int64_t> env_ranks;
    int64_t env_world = -1;
    bool env_ok = true;
    for (size_t p : procs) {
      const Json& h = processes_[p].header->event;
      const int64_t r = h.contains("env_rank") && h["env_rank"].is_number_integer() ? h["env_rank"].get<int64_t>() : -1;
      const int64_t w = h.contains("env_world_size") && h["env_world_size"].is_number_integer()
                            ? h["env_world_size"].get<int64_t>()
                            : -1;
      if (r < 0 || r >= kMaxWorld || !env_ranks.insert(r).second) env_ok = false;
      if (w > 0) env_world = std::max(env_world, w);
    }
    if (env_ok) {
      for (size_t p : procs)
        processes_[p].world_rank = static_cast<int>(processes_[p].header->event["env_rank"].get<int64_t>());
      const int64_t top = *env_ranks.rbegin() + 1;
      world_size_ = static_cast<int>(std::min(kMaxWorld, std::max({top, env_world, int64_t{world_size_}})));
      return;
    }
    // The largest init communicator whose members are exactly these processes, with distinct ranks.
    const CommInfo* best = nullptr;
    for (const auto& [id, info] : comms_) {
      if (info.comm.origin != CommOrigin::Init) continue;
      std::set<size_t> who;
      std::set<int64_t> ranks;
      bool good = true;
      for (const auto& m : info.members)
        good = good && who.insert(m.process).second && m.comm_rank >= 0 && ranks.insert(m.comm_rank).second;
      if (good && who.size() == procs.size() && (best == nullptr || info.members.size() > best->members.size()))
        best = &info;
    }
    if (best != nullptr) {
      int64_t size = static_cast<int64_t>(procs.size());
      for (const auto& m : best->members) {
        processes_[m.process].world_rank = static_cast<int>(m.comm_rank);
        size = std::max({size, m.comm_rank + 1, m.nranks});
      }
      if (size > kMaxWorld)
        throw TraceInputError(files_.front().name, 0, 0, 0,
                              "communicator " + best->comm.id + " has " + std::to_string(size) +
                                  " ranks: more than the " + std::to_string(kMaxWorld) + " a scenario can have");
      world_size_ = static_cast<int>(size);
      notes_.push_back("world ranks taken from the ranks in communicator " + best->comm.id);
      return;
    }
    for (size_t i = 0; i < procs.size(); ++i) processes_[procs[i]].world_rank = static_cast<int>(i);
    notes_.push_back(
        "no RANK in the environment and no communicator holding every process: world ranks follow the order of the "
        "files");
  }

  // --- the Trace -----------------------------------------------------------------------------------

  Trace build() {
    Trace t;
    t.format = "recorder";
    t.world_size = world_size_;
    // Communicators, in the order they were first seen.
    std::vector<CommInfo*> order;
    for (auto& [id, info] : comms_) order.push_back(&info);
    std::sort(order.begin(), order.end(),
              [](const CommInfo* a, const CommInfo* b) { return a->first_seen < b->first_seen; });
    std::map<std::string, std::map<int64_t, int>> world_of;  // comm id -> comm rank -> world rank
    int index = 0;
    for (CommInfo* info : order) {
      Communicator c = info->comm;
      std::vector<Membership> members;
      for (const auto& m : info->members)
        if (processes_[m.process].world_rank >= 0) members.push_back(m);
      // Ranks of split members that never returned: NCCL orders a split's members by key, then parent rank.
      bool unknown = std::any_of(members.begin(), members.end(), [](const Membership& m) { return m.comm_rank < 0; });
      if (unknown) {
        std::stable_sort(members.begin(), members.end(), [&](const Membership& a, const Membership& b) {
          return std::make_pair(a.key, processes_[a.process].world_rank) <
                 std::make_pair(b.key, processes_[b.process].world_rank);
        });
        for (size_t i = 0; i < members.size(); ++i) members[i].comm_rank = static_cast<int64_t>(i);
        if (c.origin != CommOrigin::Preexisting)
          notes_.push_back("communicator " + c.id +
                           ": member ranks derived from the split keys (a split never returned)");
      }
      int64_t size = 0;
      for (const auto& m : members) {
        const int w = processes_[m.process].world_rank;
        if (!c.members.emplace(w, static_cast<int>(m.comm_rank)).second) {
          notes_.push_back("communicator " + c.id + ": rank " + std::to_string(w) +
                           " created it twice; the first is kept");
          continue;
        }
        world_of[c.id][m.comm_rank] = w;
        size = std::max(size, m.nranks);
      }
      c.size = static_cast<int>(std::min(kMaxWorld, std::max<int64_t>(size, static_cast<int64_t>(c.members.size()))));
      if (static_cast<size_t>(c.size) > c.members.size())
        notes_.push_back("communicator " + c.id + " has " + std::to_string(c.size) + " ranks; the traces hold " +
                         std::to_string(c.members.size()) + " of them");
      if (c.origin == CommOrigin::Init && c.size == world_size_ && index == 0)
        c.label = "world";
      else
        c.label = (c.origin == CommOrigin::Split ? "split" : "comm") + std::to_string(index);
      ++index;
      t.comms.push_back(std::move(c));
    }
    // Ranks: each process's threads, roots and peers turned into world ranks.
    for (int r = 0; r < world_size_; ++r) {
      RankTrace rt;
      rt.rank = r;
      rt.present = false;
      t.ranks[r] = rt;
    }
    for (size_t p = 0; p < processes_.size(); ++p) {
      const int r = processes_[p].world_rank;
      if (r < 0) continue;
      RankTrace& rt = t.ranks[r];
      if (rt.present) {
        notes_.push_back("two processes have world rank " + std::to_string(r) + "; " + processes_[p].file->name +
                         " is left out");
        continue;
      }
      rt.present = true;
      rt.source = processes_[p].file->name;
      for (auto& pt : threads_[p]) {
        ThreadTrace tt;
        tt.name = pt.name;
        for (auto& pc : pt.calls) {
          Call c = std::move(pc.call);
          auto to_world = [&](std::optional<int64_t> comm_rank, std::optional<int>& out, const char* what) {
            if (!comm_rank) return;
            auto cm = world_of.find(c.comm);
            if (cm != world_of.end()) {
              auto w = cm->second.find(*comm_rank);
              if (w != cm->second.end()) {
                out = w->second;
                return;
              }
            }
            c.detail +=
                std::string(" (") + what + " " + std::to_string(*comm_rank) + " of the communicator: no trace has it)";
          };
          to_world(pc.root_comm_rank, c.root, "root");
          to_world(pc.peer_comm_rank, c.peer, "peer");
          if (c.state == CallState::Started)
            rt.notes.push_back((tt.name == "main" ? std::string("stopped in ") : "thread " + tt.name + " stopped in ") +
                               c.detail + (c.comm.empty() ? "" : " on " + c.comm) + " (" + c.origin + ")");
          tt.calls.push_back(std::move(c));
        }
        rt.threads.push_back(std::move(tt));
      }
    }
    for (auto& [r, rt] : t.ranks)
      if (!rt.present) notes_.push_back("rank " + std::to_string(r) + ": no trace file");
    t.notes = std::move(notes_);
    return t;
  }

  const std::vector<RecorderFile>& files_;
  std::vector<Process> processes_;
  std::vector<std::vector<PendingThread>> threads_;
  std::vector<bool> has_nccl_;
  std::map<std::string, CommInfo> comms_;
  std::vector<std::string> notes_;
  std::set<std::string> said_;  // notes given once
  int world_size_ = 0;
};

}  // namespace

const nlohmann::ordered_json* recorder_field(const RecorderLine* line, const char* key) {
  if (line == nullptr) return nullptr;
  auto it = line->event.find(key);
  return it == line->event.end() ? nullptr : &*it;
}

std::optional<uint64_t> parse_hex_field(const std::string& text) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || text[1] != 'x') return std::nullopt;
  uint64_t v = 0;
  for (size_t i = 2; i < text.size(); ++i) {
    const char c = text[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

void RecorderFields::fail(const std::string& message) const {
  throw TraceInputError(file_.name, line_ != nullptr ? line_->line : 0, 1, 0, message);
}

int64_t RecorderFields::integer(const char* key) const {
  const auto* v = recorder_field(line_, key);
  if (v == nullptr || !v->is_number_integer()) {
    const auto* call = recorder_field(line_, "call");
    fail(std::string("expected \"") + key + "\" (an integer)" +
         (call != nullptr && call->is_string() ? " in this " + call->get<std::string>() + " event" : ""));
  }
  return v->get<int64_t>();
}

std::string RecorderFields::string(const char* key) const {
  const auto* v = recorder_field(line_, key);
  if (v == nullptr || !v->is_string()) fail(std::string("expected \"") + key + "\" (a string)");
  return v->get<std::string>();
}

uint64_t RecorderFields::hex(const char* key) const {
  auto v = parse_hex_field(string(key));
  if (!v) fail(std::string("expected \"") + key + "\" to be a lowercase hex string \"0x...\"");
  return *v;
}

std::vector<RecordedProcess> split_recorded_processes(const std::vector<RecorderFile>& files,
                                                      std::vector<std::string>& notes) {
  std::vector<RecordedProcess> processes;
  for (const auto& f : files) {
    std::map<uint64_t, size_t> open;  // seq -> index in the current process's calls
    for (const auto& l : f.lines) {
      const std::string ev = l.event["ev"].get<std::string>();
      if (ev == "process") {
        processes.push_back(RecordedProcess{&f, &l, {}});
        open.clear();
        continue;
      }
      if (processes.empty() || processes.back().file != &f)
        throw TraceInputError(f.name, l.line, 1, 0, "expected a \"process\" line before the first event");
      RecordedProcess& p = processes.back();
      const uint64_t seq = l.event["seq"].get<uint64_t>();
      if (ev == "enter") {
        if (!open.emplace(seq, p.calls.size()).second)
          throw TraceInputError(f.name, l.line, 1, 0, "event seq " + std::to_string(seq) + " entered twice");
        p.calls.push_back(RecordedCall{&l, nullptr});
      } else {
        auto it = open.find(seq);
        if (it == open.end() || p.calls[it->second].ret != nullptr)
          throw TraceInputError(f.name, l.line, 1, 0,
                                "a return of seq " + std::to_string(seq) + " with no open entry before it");
        if (p.calls[it->second].enter->event["call"] != l.event["call"])
          throw TraceInputError(f.name, l.line, 1, 0,
                                "the return of seq " + std::to_string(seq) + " names another call than its entry");
        p.calls[it->second].ret = &l;
      }
    }
    if (f.truncated_tail)
      notes.push_back(f.name + ": the last line was cut short (the process died while writing it); left out");
  }
  return processes;
}

RecorderFile parse_recorder_file(const std::string& name, const std::string& text) {
  RecorderFile f;
  f.name = name;
  size_t start = 0;
  int number = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    ++number;
    const bool last = end == std::string::npos;
    std::string line = text.substr(start, last ? std::string::npos : end - start);
    start = last ? text.size() : end + 1;
    if (line.empty()) {
      if (last) break;
      throw TraceInputError(name, number, 1, 0, "expected a JSON object, found an empty line");
    }
    if (last) {
      // A process killed in the middle of write(2) can leave a line without its newline: accept the file,
      // drop the piece, and say so (Trace::notes).
      try {
        f.lines.push_back(parse_line(name, number, line));
      } catch (const TraceInputError&) {
        f.truncated_tail = true;
      }
      break;
    }
    f.lines.push_back(parse_line(name, number, line));
  }
  if (f.lines.empty()) throw TraceInputError(name, 0, 0, 0, "the file holds no event: expected a recorder trace");
  if (f.lines.front().event["ev"] != "process")
    throw TraceInputError(name, 1, 1, 0, "expected a \"process\" line first (a collmc recorder trace)");
  return f;
}

std::string write_recorder_file(const RecorderFile& file) {
  std::string out;
  for (const auto& l : file.lines) {
    out += l.event.dump();
    out += '\n';
  }
  return out;
}

namespace {

Trace read_parsed(std::vector<RecorderFile>& parsed) {
  // The MPI recorder's traces have a reader of their own (mpi_recorder_reader.cpp); one import reads one kind.
  size_t mpi = 0;
  for (const auto& f : parsed) mpi += f.lines.front().event["format"] == kMpiFormat ? 1 : 0;
  if (mpi > 0 && mpi < parsed.size())
    throw TraceInputError(parsed.front().name, 1, 1, 0,
                          "NCCL recorder traces and MPI recorder traces are mixed: import one kind at a time");
  if (mpi > 0) return read_mpi_recorder_files(parsed);
  return Assembler(parsed).run();
}

}  // namespace

Trace read_recorder_buffers(const std::vector<std::pair<std::string, std::string>>& files) {
  if (files.empty()) throw TraceInputError("", 0, 0, 0, "no recorder trace file given");
  std::vector<RecorderFile> parsed;
  parsed.reserve(files.size());
  for (const auto& [name, text] : files) parsed.push_back(parse_recorder_file(name, text));
  return read_parsed(parsed);
}

Trace read_recorder_traces(const std::vector<std::string>& files) {
  if (files.empty()) throw TraceInputError("", 0, 0, 0, "no recorder trace file given");
  // Each file read and parsed on one worker per core, its text freed as soon as it is parsed. Every file is
  // read before any is parsed was the order: a file that cannot be read is reported before another's bad
  // line, and still is.
  std::vector<RecorderFile> parsed(files.size());
  std::vector<std::exception_ptr> parse_errors(files.size());
  for_each_file(files.size(), 0, [&](size_t i) {
    const std::string text = read_trace_file(files[i]);
    try {
      parsed[i] = parse_recorder_file(files[i], text);
    } catch (...) {
      parse_errors[i] = std::current_exception();
    }
  });
  for (auto& e : parse_errors)
    if (e) std::rethrow_exception(e);
  return read_parsed(parsed);
}

}  // namespace collmc::traces
