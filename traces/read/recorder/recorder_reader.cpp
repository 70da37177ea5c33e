// Reading the recorder's JSON-lines traces (recorder_reader.h) into a Trace (trace.h): communicators
// matched across processes by the unique-id hash (splits by parent, color and the split's number on
// the parent), buffers named by the allocation that holds them, per-rank programs in call order with
// threads kept apart, and each call's state (returned, or entered and never returned: where it stopped).
#include "collmc/traces/recorder_reader.h"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

#include "file_io.h"
#include "held_calls.h"
#include "recorded_names.h"
#include "recorder_lines.h"

namespace collmc::traces {
namespace {

constexpr const char* kMpiFormat = "collmc-mpi-recorder";  // libcollmc_record_mpi.so
constexpr const char* kTorchFormat = "collmc-torch";       // the torch shim (python/collmc/record), its own reader
constexpr int64_t kNcclInProgress = 7;
constexpr int64_t kSplitNoColor = -1;

// More ranks than a scenario can have (the parser's limit, as the NCCL-log and Flight Recorder readers):
// a trace that claims them is refused, not emitted.
constexpr int64_t kMaxWorld = int64_t{1} << 16;

// ---------------------------------------------------------------------------------------------------
// From lines to a Trace
//
// Each file is read on a worker: its lines (flat views, recorder_lines.h), its processes with entries and
// returns paired by seq, and each process's pass over its calls (comm pointers, allocations, streams,
// windows; nested NCCL calls left out) into held calls (held_calls.h: 24 bytes a call, its shape interned
// per process). The file's text and lines are freed before the worker takes the next file, so memory
// follows what is held, not the input. What a pass does to shared state (communicators and their members,
// notes) is logged per process and replayed afterwards in process order: the result is the one a single
// pass over the processes in order gives. Then world ranks, the trim on held calls, and a Call for each
// call kept.

// Lowercase hex digits without a prefix, as the recorder writes addresses after its "0x".
std::string hex(uint64_t v) { return absl::StrCat(absl::Hex(v)); }

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

// What one process's pass did to state the processes share, in the order it did it.
struct SharedEffect {
  enum class Kind : uint8_t { Member, Note, NoteOnce };
  Kind kind = Kind::Note;
  std::string text;  // Member: the communicator's id; else the note
  CommOrigin origin = CommOrigin::Preexisting;
  std::string parent;  // Member of a split child: its parent and color
  std::optional<int64_t> split_color;
  Membership member;  // its process: the index in its file
};

// One process after its pass.
struct ProcessResult {
  int64_t pid = 0;
  int64_t env_rank = -1, env_world = -1;  // the launcher's RANK and WORLD_SIZE (-1: none, or not an integer)
  bool any_nccl = false;
  std::vector<SharedEffect> effects;
  std::unique_ptr<CallShapes> shapes = std::make_unique<CallShapes>();
  std::vector<HeldThread> threads;  // main first, then the others in order of their first call
};

// One file after its worker. `error`: the first error a pass over the files in order would have met in
// it, and at which stage (the stages run over all files one after another: read, lines, pairs, calls).
struct FileResult {
  enum Stage : int { kRead = 0, kLines = 1, kPairs = 2, kCalls = 3 };
  std::exception_ptr error;
  int stage = 0;
  bool mpi = false;  // an MPI recorder's file: read the nlohmann way, into `mpi_file`
  RecorderFile mpi_file;
  bool truncated_tail = false;
  std::vector<ProcessResult> processes;
};

// NCCL groups nest; only the outermost start and end delimit what is issued together.
enum class GroupStep : uint8_t { Kept, Inner, Unmatched };

// One process's pass over its calls (what Trace needs of them, comm ranks still unmapped).
class ProcessPass {
 public:
  ProcessPass(const std::string& file, const FlatLines& lines, size_t index_in_file, ProcessResult& out)
      : file_(file), lines_(lines), index_(index_in_file), out_(out) {}

  struct RawCall {
    uint32_t enter = 0;
    uint32_t ret = kNone;  // kNone: never returned
  };
  static constexpr uint32_t kNone = UINT32_MAX;

  void run(const std::vector<RawCall>& calls) {
    std::map<int64_t, size_t> thread_index;
    // NCCL calls its own public functions through the dynamic linker too (ncclCommWindowRegister calls
    // ncclCommRegister, ncclCommDestroy deregisters what is left), so the recorder sees them, nested in the
    // program's call on the same thread. They are part of that call, not the program's: left out.
    std::map<int64_t, const RawCall*> outer;  // per thread: the program's last call
    size_t nested = 0;
    std::string key;
    for (const RawCall& rc : calls) {
      const FlatLine in = lines_[rc.enter];
      const int64_t tid = in.find("tid", 2)->integer();
      auto [o, first] = outer.try_emplace(tid, &rc);
      if (!first) {
        const RawCall* prev = o->second;
        if (prev->ret == kNone || lines_[prev->ret].number > in.number) {
          ++nested;
          continue;
        }
        o->second = &rc;
      }
      auto [it, fresh] = thread_index.try_emplace(tid, out_.threads.size());
      if (fresh) out_.threads.push_back(HeldThread{tid == out_.pid ? "main" : "tid" + std::to_string(tid), {}});
      hold_call(rc, in, tid, key, out_.threads[it->second].calls);
    }
    if (nested > 0)
      note(file_ + ": " + std::to_string(nested) +
           " call(s) made by NCCL inside another call of the same thread are left out");
    std::stable_partition(out_.threads.begin(), out_.threads.end(),
                          [](const HeldThread& t) { return t.name == "main"; });
    for (auto& t : out_.threads) t.calls.shrink_to_fit();
    out_.shapes->forget_keys();  // the keys are the pass's: every process's would stay until the Trace is built
  }

 private:
  struct ProcessState {
    std::map<uint64_t, std::string> comm_of_ptr;
    std::map<std::string, int> splits_on;                              // parent id -> splits so far
    std::map<uint64_t, std::pair<uint64_t, std::string>> allocations;  // start -> (end, name)
    std::map<std::string, int> name_uses;
    std::map<std::pair<std::string, uint64_t>, std::string> window_buffer, local_buffer;
    std::map<uint64_t, std::string> stream_names;
    std::map<int64_t, int> group_depth;  // per thread
  };

  // The key of a call's shape: every field of its entry but seq and the times, and its result. With the
  // process's state it determines the shape, for the calls whose shapes are interned (interned_kind); the
  // others change that state, and the keys are forgotten after them.
  static void append_key(std::string& key, const FlatLine& line) {
    for (const FlatField& f : line) {
      if (f.key == "seq" || f.key == "t_mono_ns" || f.key == "t_wall_ns") continue;
      key.append(f.key);
      key.push_back('\0');
      key.push_back(static_cast<char>('0' + static_cast<int>(f.value.type)));
      if (f.value.type == FlatValue::Type::Integer) {
        key.push_back(f.value.is_unsigned ? 'u' : 's');
        key.append(reinterpret_cast<const char*>(&f.value.bits), sizeof f.value.bits);
      } else {
        const auto n = static_cast<uint32_t>(f.value.text.size());
        key.append(reinterpret_cast<const char*>(&n), sizeof n);
        key.append(f.value.text);
      }
    }
  }

  // Calls whose shape follows from their key and state no call of that kind changes.
  static bool interned_kind(const RecordedName& how) {
    if (how.what == Recorded::Unmodelled) return true;
    if (how.what != Recorded::Operation) return false;
    switch (model::op_form(*op_kind_of(how.kind))) {
      case model::OpForm::Collective:
      case model::OpForm::PutSignal:
      case model::OpForm::Signal:
      case model::OpForm::PointToPoint:
        return true;
      default:
        return how.kind == CallKind::StreamSync || how.kind == CallKind::DeviceSync;
    }
  }

  void hold_call(const RawCall& rc, const FlatLine& in, int64_t tid, std::string& key, std::vector<HeldCall>& out) {
    const std::optional<FlatLine> ret = rc.ret == kNone ? std::nullopt : std::optional<FlatLine>(lines_[rc.ret]);
    const std::string_view name = in.find("call", 5)->text;
    if (name.starts_with("nccl")) out_.any_nccl = true;
    const RecordedName how = recorded_name(name);
    if (how.what == Recorded::Ignored) return;
    const CallState state = ret ? CallState::Completed : CallState::Started;
    const FlatValue* t_wall = in.find("t_wall_ns", 4);
    const uint64_t time =
        t_wall != nullptr && t_wall->type == FlatValue::Type::Integer && t_wall->is_unsigned ? t_wall->bits : 0;
    const auto seq = static_cast<int64_t>(in.find("seq", 1)->bits);
    CallShapes& shapes = *out_.shapes;
    GroupStep group = GroupStep::Kept;
    if (how.what == Recorded::GroupStart || how.what == Recorded::GroupEnd) {
      group = group_step(tid, how.what == Recorded::GroupStart);
      if (group == GroupStep::Inner) return;
    }
    uint32_t shape = 0;
    if (interned_kind(how) || how.what == Recorded::GroupStart || how.what == Recorded::GroupEnd) {
      key.clear();
      append_key(key, in);
      key.push_back('\x01');
      if (ret) {
        key.append(reinterpret_cast<const char*>(&ret->find("result", 6)->bits), sizeof(uint64_t));
      } else {
        key.push_back('-');
      }
      key.push_back(static_cast<char>('0' + static_cast<int>(group)));
      shape = shapes.intern(key, [&] { return *read_call(in, ret, how, group); });
    } else {
      const auto depth = st_.group_depth.find(tid);
      in_group_ = depth != st_.group_depth.end() && depth->second > 0;
      std::optional<CallShape> made = read_call(in, ret, how, group);
      shapes.forget_keys();  // the process's state may have changed under every key
      if (!made) return;
      if (unseen_window_memory_) {
        // The allocation the trace never saw stands just before the window NCCL accepted on it.
        out.emplace_back(shapes.add(std::move(*unseen_window_memory_)), static_cast<uint64_t>(in.number),
                         CallState::Completed, seq, time);
        unseen_window_memory_.reset();
      }
      shape = shapes.add(std::move(*made));
    }
    out.emplace_back(shape, static_cast<uint64_t>(in.number), state, seq, time);
  }

  GroupStep group_step(int64_t tid, bool start) {
    int& depth = st_.group_depth[tid];
    if (start) return depth++ > 0 ? GroupStep::Inner : GroupStep::Kept;
    if (depth == 0) return GroupStep::Unmatched;
    return --depth > 0 ? GroupStep::Inner : GroupStep::Kept;
  }

  static RecordedName recorded_name(std::string_view name) {
    const auto& names = recorded_names();
    const auto known = names.find(name);
    return known != names.end() ? known->second : RecordedName{};
  }

  void note(std::string text) {
    out_.effects.push_back(SharedEffect{SharedEffect::Kind::Note, std::move(text), {}, {}, {}, {}});
  }
  void note_once(std::string text) {
    out_.effects.push_back(SharedEffect{SharedEffect::Kind::NoteOnce, std::move(text), {}, {}, {}, {}});
  }
  void member(const std::string& comm, CommOrigin origin, int64_t comm_rank, int64_t nranks, int64_t key = 0,
              const std::string& parent = "", std::optional<int64_t> color = std::nullopt) {
    out_.effects.push_back(SharedEffect{SharedEffect::Kind::Member, comm, origin, parent, color,
                                        Membership{index_, comm_rank, nranks, key}});
  }

  std::string comm_of(uint64_t ptr, const FlatLine& l) {
    auto it = st_.comm_of_ptr.find(ptr);
    if (it != st_.comm_of_ptr.end()) return it->second;
    // A communicator this process never created in the trace (made before the recorder was loaded, or by a
    // call the recorder does not see): it exists from the start and has only this process in it.
    std::string id = "ptr:" + std::to_string(out_.pid) + ":" + hex(ptr);
    st_.comm_of_ptr[ptr] = id;
    member(id, CommOrigin::Preexisting, -1, -1);
    note(file_ + ":" + std::to_string(l.number) + ": communicator 0x" + hex(ptr) +
         " was never created in this trace; it stands alone in the scenario");
    return id;
  }

  // The name of the allocation that holds `ptr`, or a name of its own for memory the trace never saw
  // allocated (a plain device buffer that exists from the start).
  std::string buffer_name(uint64_t ptr) const {
    if (ptr == 0) return "";
    if (const std::string* name = allocation_of(ptr)) return *name;
    return "buf_" + hex(ptr);
  }
  // The name of the recorded allocation that holds `ptr`, or null.
  const std::string* allocation_of(uint64_t ptr) const {
    auto it = st_.allocations.upper_bound(ptr);
    if (it == st_.allocations.begin() || ptr >= std::prev(it)->second.first) return nullptr;
    return &std::prev(it)->second.second;
  }
  // A window NCCL accepted on memory the trace never saw allocated: NCCL takes only cuMem (VMM) memory for a
  // window (measured: plain cudaMalloc memory fails the registration, tests/calibration-probes/
  // register_plain_memory_grouped_cross.cmc), so the memory is VMM that some allocator the recorder does not
  // intercept mapped (PyTorch's expandable segments map theirs with cuMemCreate + cuMemMap). Written as an
  // `alloc` just before the registration; left as it is, the scenario would take it for cudaMalloc memory and
  // report the usage_error the run did not have (docs/HARDWARE.md, "The torch shim on one shared GPU").
  void declare_unseen_window_memory(Call& c, uint64_t ptr) {
    CallShape alloc;
    alloc.call.kind = CallKind::MemAlloc;
    alloc.call.buffer = c.buffer = new_allocation(ptr, c.bytes);
    alloc.call.bytes = c.bytes;
    alloc.call.detail = "memory the trace never saw allocated; VMM, as NCCL accepted a window on it";
    unseen_window_memory_ = std::move(alloc);
  }
  std::string new_allocation(uint64_t ptr, uint64_t size) {
    std::string name = "buf_" + hex(ptr);
    // An address can come back after a free; the scenario needs a fresh name for the new buffer.
    int uses = ++st_.name_uses[name];
    if (uses > 1) name += "_" + std::to_string(uses);
    st_.allocations[ptr] = {ptr + std::max<uint64_t>(size, 1), name};
    return name;
  }
  std::string stream_name(uint64_t ptr) {
    if (ptr == 0) return "";
    auto [it, fresh] = st_.stream_names.try_emplace(ptr);
    if (fresh) it->second = "stream" + std::to_string(st_.stream_names.size());
    return it->second;
  }

  // The call's shape (nullopt: no call of the scenario). `group`: where a group start or end stands.
  std::optional<CallShape> read_call(const FlatLine& in_line, const std::optional<FlatLine>& out_line,
                                     const RecordedName& how, GroupStep group) {
    const FlatFields in(file_, in_line);
    const std::optional<FlatFields> out =
        out_line ? std::optional<FlatFields>(std::in_place, file_, *out_line) : std::nullopt;
    const std::string_view name = in.find("call", 5)->text;
    const bool nccl = name.starts_with("nccl");
    CallShape pc;
    Call& c = pc.call;
    c.detail = name;
    int64_t result = 0;
    if (out) {
      result = out->find("result", 6)->integer();
      if (result != 0 && !(nccl && result == kNcclInProgress))
        c.detail += " returned error " + std::to_string(result);
      else if (result == kNcclInProgress)
        c.detail += " returned ncclInProgress";
    }
    const bool ok = out && (result == 0 || (nccl && result == kNcclInProgress));

    auto dtype = [&] {
      c.dtype = in.string("dtype");
      if (c.dtype == "unknown") c.dtype.clear();
    };
    auto collective = [&](bool has_op, bool has_root) {
      c.comm = comm_of(in.hex("comm"), in_line);
      const uint64_t send = in.find("sendbuff") ? in.hex("sendbuff") : 0;
      const uint64_t recv = in.find("recvbuff") ? in.hex("recvbuff") : 0;
      c.buffer = buffer_name(send != 0 ? send : recv);
      const std::string recv_name = buffer_name(recv);
      if (send != 0 && !recv_name.empty() && recv_name != c.buffer) c.recv_buffer = recv_name;
      c.count = static_cast<uint64_t>(in.integer("count"));
      dtype();
      if (has_op) {
        c.redop = in.string("op");
        if (c.redop == "premulsum") c.redop = "sum";  // a pre-multiplied sum is a sum to every peer
      }
      if (has_root) pc.root_in_comm = in.integer("root");
      c.stream = stream_name(in.hex("stream"));
      if (in.find("config")) c.coll_config = in.string("config");
    };

    c.kind = how.kind;
    switch (how.what) {
      case Recorded::Ignored:
        return std::nullopt;
      case Recorded::Unmodelled:
        // ncclGather, ncclScatter and anything newer than the table: no statement for it.
        if (how.note != nullptr) note_once(how.note);
        return pc;
      case Recorded::GroupStart:
      case Recorded::GroupEnd:
        if (group == GroupStep::Inner) return std::nullopt;
        if (group == GroupStep::Unmatched) {
          c.kind = CallKind::Other;
          c.detail += " without a group start";
        }
        return pc;
      case Recorded::Operation:
        break;
    }
    const model::OpKind op = *op_kind_of(c.kind);
    switch (model::op_form(op)) {
      case model::OpForm::Collective:
        collective(model::takes_redop(op), model::takes_root(op));
        return pc;
      case model::OpForm::PutSignal:
      case model::OpForm::Signal: {
        // One-sided (NCCL 2.29+): the peer, the local buffer, the window the put writes into (named by the
        // buffer this rank registered it with), the number of signals a wait waits for.
        c.comm = comm_of(in.hex("comm"), in_line);
        pc.peer_in_comm = in.integer("peer");
        c.stream = stream_name(in.hex("stream"));
        if (c.kind == CallKind::PutSignal) {
          c.buffer = buffer_name(in.hex("sendbuff"));
          c.count = static_cast<uint64_t>(in.integer("count"));
          dtype();
          auto w = st_.window_buffer.find({c.comm, in.hex("win")});
          if (w != st_.window_buffer.end()) c.recv_buffer = w->second;
        } else if (c.kind == CallKind::WaitSignal && in.find("ops") != nullptr) {
          c.count = static_cast<uint64_t>(in.integer("ops"));
        }
        return pc;
      }
      case model::OpForm::PointToPoint: {
        const bool send = c.kind == CallKind::Send;
        c.comm = comm_of(in.hex("comm"), in_line);
        c.buffer = buffer_name(in.hex(send ? "sendbuff" : "recvbuff"));
        c.count = static_cast<uint64_t>(in.integer("count"));
        dtype();
        pc.peer_in_comm = in.integer("peer");
        c.stream = stream_name(in.hex("stream"));
        return pc;
      }
      default:
        break;
    }
    switch (c.kind) {
      case CallKind::CommInit: {
        c.comm = "uid:" + hex(in.hex("uid"));
        const int64_t rank = in.integer("rank");  // read in this order: the first bad one is the error
        const int64_t nranks = in.integer("nranks");
        member(c.comm, CommOrigin::Init, rank, nranks);
        if (ok) st_.comm_of_ptr[out->hex("comm")] = c.comm;
        if (in.find("blocking") != nullptr && in.integer("blocking") == 0)
          note_once("nonblocking communicators are modelled as blocking ones (" + c.comm + ")");
        break;
      }
      case CallKind::CommSplit: {
        c.comm = comm_of(in.hex("comm"), in_line);
        const int n = st_.splits_on[c.comm]++;
        const int64_t color = in.integer("color");
        if (color != kSplitNoColor) {
          c.child_comm = c.comm + "/split" + std::to_string(n) + ".color" + std::to_string(color);
          int64_t rank = -1, nranks = -1;
          if (out) {
            rank = out->integer("rank");
            nranks = out->integer("nranks");
          }
          const int64_t key = in.integer("key");
          member(c.child_comm, CommOrigin::Split, rank, nranks, key, c.comm, color);
          if (ok) st_.comm_of_ptr[out->hex("newcomm")] = c.child_comm;
        }
        break;
      }
      case CallKind::CommFinalize:
      case CallKind::CommDestroy:
      case CallKind::CommAbort:
      case CallKind::CommRevoke:
      case CallKind::CommGetUniqueId: {
        const uint64_t ptr = in.hex("comm");
        c.comm = comm_of(ptr, in_line);
        // The handle is gone; NCCL may hand the same address to a later communicator.
        const bool gone = c.kind == CallKind::CommDestroy || c.kind == CallKind::CommAbort;
        if (gone && out) st_.comm_of_ptr.erase(ptr);
        break;
      }
      case CallKind::WindowRegister:
      case CallKind::LocalRegister: {
        const bool window = c.kind == CallKind::WindowRegister;
        c.comm = comm_of(in.hex("comm"), in_line);
        const uint64_t ptr = in.hex("buff");
        c.buffer = buffer_name(ptr);
        c.address = ptr;
        c.bytes = static_cast<uint64_t>(in.integer("size"));
        if (window) c.symmetric = (in.integer("flags") & 1) != 0;
        // In a group the call returns before NCCL looks at the memory (measured: plain memory fails in ncclGroupEnd).
        if (window && ok && result == 0 && !in_group_ && ptr != 0 && allocation_of(ptr) == nullptr)
          declare_unseen_window_memory(c, ptr);
        if (ok)
          (window ? st_.window_buffer : st_.local_buffer)[{c.comm, out->hex(window ? "win" : "handle")}] = c.buffer;
        break;
      }
      case CallKind::WindowDeregister:
      case CallKind::LocalDeregister: {
        const bool window = c.kind == CallKind::WindowDeregister;
        c.comm = comm_of(in.hex("comm"), in_line);
        auto& handles = window ? st_.window_buffer : st_.local_buffer;
        auto h = handles.find({c.comm, in.hex(window ? "win" : "handle")});
        if (h == handles.end()) {
          c.kind = CallKind::Other;
          c.detail += ": a handle the trace never saw registered";
        } else {
          c.buffer = h->second;
          if (out) handles.erase(h);
        }
        break;
      }
      case CallKind::MemAlloc:
      case CallKind::CudaMalloc:
        c.bytes = static_cast<uint64_t>(in.integer("size"));
        if (!ok) {
          c.kind = CallKind::Other;  // no buffer came of it
          if (!out) c.detail += " (never returned)";
        } else {
          c.buffer = new_allocation(out->hex("ptr"), c.bytes);
        }
        break;
      case CallKind::MemFree:
      case CallKind::CudaFree: {
        const uint64_t ptr = in.hex("ptr");
        // cudaFree(nullptr) is how programs make the CUDA context; it frees nothing.
        if (ptr == 0) return std::nullopt;
        c.buffer = buffer_name(ptr);
        if (out) st_.allocations.erase(ptr);
        break;
      }
      case CallKind::StreamSync:
        c.stream = stream_name(in.hex("stream"));
        break;
      default:  // sync device: nothing to read
        break;
    }
    return pc;
  }

  const std::string& file_;
  const FlatLines& lines_;
  size_t index_;
  ProcessResult& out_;
  ProcessState st_;
  bool in_group_ = false;                          // the call being read stands between a group's start and end
  std::optional<CallShape> unseen_window_memory_;  // read_call's allocation to hold before its registration
};

// The worker's part for one file, `text` its bytes with kReadPadding bytes of spare capacity. Stores the
// first error it meets, by stage.
void read_file(const std::string& name, const std::string& text, bool slow_lines_only, FileResult& result) {
  thread_local FlatLines lines;  // its memory reused from file to file
  lines.clear();
  try {
    result.truncated_tail =
        for_each_recorder_line(name, text, text.capacity(), [&](int number, std::string_view line, size_t capacity) {
          lines.add(name, number, line, capacity, slow_lines_only);
        });
    if (lines.size() == 0) throw TraceInputError(name, 0, 0, 0, "the file holds no event: expected a recorder trace");
    if (lines[0].find("ev", 0)->text != "process")
      throw TraceInputError(name, 1, 1, 0, "expected a \"process\" line first (a collmc recorder trace)");
    if (const FlatValue* format = lines[0].find("format"); format != nullptr && format->text == kTorchFormat)
      throw TraceInputError(name, 1, 1, 0, "a torch shim trace: its reader is read_torch_shim_traces");
    if (lines[0].find("format")->text == kMpiFormat) {
      // The MPI recorder's reader reads RecorderFiles (its traces are small).
      result.mpi = true;
      result.mpi_file = parse_recorder_file(name, text);
      return;
    }
  } catch (...) {
    result.error = std::current_exception();
    result.stage = FileResult::kLines;
    return;
  }
  // Entries and returns paired by seq, per process (as split_recorded_processes pairs them).
  struct ProcessLines {
    uint32_t header = 0;
    std::vector<ProcessPass::RawCall> calls;
  };
  std::vector<ProcessLines> processes;
  try {
    absl::flat_hash_map<uint64_t, uint32_t> open;  // seq -> index in the current process's calls
    for (uint32_t i = 0; i < lines.size(); ++i) {
      const FlatLine l = lines[i];
      const std::string_view ev = l.find("ev", 0)->text;
      if (ev == "process") {
        processes.push_back(ProcessLines{i, {}});
        open.clear();
        continue;
      }
      ProcessLines& p = processes.back();  // the first line is a "process" line
      const uint64_t seq = l.find("seq", 1)->bits;
      if (ev == "enter") {
        if (!open.emplace(seq, static_cast<uint32_t>(p.calls.size())).second)
          throw TraceInputError(name, l.number, 1, 0, "event seq " + std::to_string(seq) + " entered twice");
        p.calls.push_back(ProcessPass::RawCall{i, ProcessPass::kNone});
      } else {
        auto it = open.find(seq);
        if (it == open.end() || p.calls[it->second].ret != ProcessPass::kNone)
          throw TraceInputError(name, l.number, 1, 0,
                                "a return of seq " + std::to_string(seq) + " with no open entry before it");
        if (lines[p.calls[it->second].enter].find("call", 5)->text != l.find("call", 5)->text)
          throw TraceInputError(name, l.number, 1, 0,
                                "the return of seq " + std::to_string(seq) + " names another call than its entry");
        p.calls[it->second].ret = i;
      }
    }
  } catch (...) {
    result.error = std::current_exception();
    result.stage = FileResult::kPairs;
    return;
  }
  try {
    for (const ProcessLines& p : processes) {
      ProcessResult& pr = result.processes.emplace_back();
      const FlatLine h = lines[p.header];
      pr.pid = h.find("pid")->integer();
      auto env = [&](const char* key) {
        const FlatValue* v = h.find(key);
        return v != nullptr && v->type == FlatValue::Type::Integer ? v->integer() : -1;
      };
      pr.env_rank = env("env_rank");
      pr.env_world = env("env_world_size");
      ProcessPass(name, lines, result.processes.size() - 1, pr).run(p.calls);
    }
  } catch (...) {
    result.error = std::current_exception();
    result.stage = FileResult::kCalls;
    result.processes.clear();
  }
}

// One process, all files read, with its world rank.
struct Process {
  size_t file = 0;
  ProcessResult* result = nullptr;
  int world_rank = -1;
};

class Assembler {
 public:
  Assembler(const std::vector<std::string>& names, std::vector<FileResult>& files) : names_(names), files_(files) {}

  Trace run(bool full_history) {
    for (size_t f = 0; f < files_.size(); ++f)
      if (files_[f].truncated_tail)
        notes_.push_back(names_[f] + ": the last line was cut short (the process died while writing it); left out");
    for (size_t f = 0; f < files_.size(); ++f)
      for (ProcessResult& pr : files_[f].processes) {
        const size_t first = processes_.size() - (&pr - files_[f].processes.data());
        for (SharedEffect& e : pr.effects) apply(e, first);
        pr.effects.clear();
        processes_.push_back(Process{f, &pr, -1});
      }
    keep_nccl_processes();
    assign_world_ranks();
    return build(full_history);
  }

 private:
  // A pass's effect on shared state, its process index made global (`first`: its file's first process).
  void apply(SharedEffect& e, size_t first) {
    switch (e.kind) {
      case SharedEffect::Kind::Note:
        notes_.push_back(std::move(e.text));
        return;
      case SharedEffect::Kind::NoteOnce:
        if (said_.insert(e.text).second) notes_.push_back(std::move(e.text));
        return;
      case SharedEffect::Kind::Member: {
        auto [it, fresh] = comms_.try_emplace(e.text);
        CommInfo& info = it->second;
        if (fresh) {
          info.comm.id = e.text;
          info.comm.origin = e.origin;
          info.first_seen = comms_.size();
        }
        if (e.origin == CommOrigin::Split) {
          info.comm.parent = e.parent;
          info.comm.split_color = e.split_color;
        }
        Membership m = e.member;
        m.process += first;
        info.members.push_back(m);
        return;
      }
    }
  }

  const std::string& file_name(size_t p) const { return names_[processes_[p].file]; }

  // A process that made no NCCL call (a launcher, a data loader) has no rank.
  void keep_nccl_processes() {
    for (size_t p = 0; p < processes_.size(); ++p)
      if (!processes_[p].result->any_nccl)
        notes_.push_back(file_name(p) + ": process " + std::to_string(processes_[p].result->pid) +
                         " made no NCCL call; it is left out");
  }

  // --- world ranks ---------------------------------------------------------------------------------

  std::vector<size_t> ranked_processes() const {
    std::vector<size_t> out;
    for (size_t p = 0; p < processes_.size(); ++p)
      if (processes_[p].result->any_nccl) out.push_back(p);
    return out;
  }

  // The process's rank in the world: the RANK its launcher gave it; else its rank in a communicator
  // made by init that holds every process; else the order of the files.
  void assign_world_ranks() {
    const std::vector<size_t> procs = ranked_processes();
    if (procs.empty()) throw TraceInputError(names_.front(), 0, 0, 0, "no process in these traces made an NCCL call");
    if (static_cast<int64_t>(procs.size()) > kMaxWorld)
      throw TraceInputError(names_.front(), 0, 0, 0,
                            std::to_string(procs.size()) + " processes: more than the " + std::to_string(kMaxWorld) +
                                " ranks a scenario can have");
    world_size_ = static_cast<int>(procs.size());
    std::set<int64_t> env_ranks;
    int64_t env_world = -1;
    bool env_ok = true;
    for (size_t p : procs) {
      const int64_t r = processes_[p].result->env_rank;
      const int64_t w = processes_[p].result->env_world;
      if (r < 0 || r >= kMaxWorld || !env_ranks.insert(r).second) env_ok = false;
      if (w > 0) env_world = std::max(env_world, w);
    }
    if (env_ok) {
      for (size_t p : procs) processes_[p].world_rank = static_cast<int>(processes_[p].result->env_rank);
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
        throw TraceInputError(names_.front(), 0, 0, 0,
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

  using WorldOf = std::map<std::string, std::map<int64_t, int>>;  // comm id -> comm rank -> world rank

  // A process's shapes made final: root and peer as world ranks (or said missing in the detail), as every
  // call of the shape has them. The trim then compares roots as trim_history does, by world rank.
  static void finish_shapes(CallShapes& shapes, const WorldOf& world_of) {
    for (size_t i = 0; i < shapes.size(); ++i) {
      CallShape& s = shapes[static_cast<uint32_t>(i)];
      Call& c = s.call;
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
      to_world(s.root_in_comm, c.root, "root");
      to_world(s.peer_in_comm, c.peer, "peer");
      s.root_in_comm = c.root ? std::optional<int64_t>(*c.root) : std::nullopt;
      s.peer_in_comm = c.peer ? std::optional<int64_t>(*c.peer) : std::nullopt;
    }
  }

  Trace build(bool full_history) {
    Trace t;
    t.format = "recorder";
    t.world_size = world_size_;
    // Communicators, in the order they were first seen.
    std::vector<CommInfo*> order;
    for (auto& [id, info] : comms_) order.push_back(&info);
    std::sort(order.begin(), order.end(),
              [](const CommInfo* a, const CommInfo* b) { return a->first_seen < b->first_seen; });
    WorldOf world_of;
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
    comms_.clear();
    // Ranks: the first process of each world rank; its held calls, trimmed unless the full history is asked.
    for (int r = 0; r < world_size_; ++r) {
      RankTrace rt;
      rt.rank = r;
      rt.present = false;
      t.ranks[r] = rt;
    }
    std::vector<HeldRank> held;  // in rank order, as trim_history takes the ranks
    std::map<int, size_t> process_of_rank;
    for (size_t p = 0; p < processes_.size(); ++p) {
      const int r = processes_[p].world_rank;
      if (r < 0) continue;
      RankTrace& rt = t.ranks[r];
      if (rt.present) {
        notes_.push_back("two processes have world rank " + std::to_string(r) + "; " + file_name(p) + " is left out");
        continue;
      }
      rt.present = true;
      rt.source = file_name(p);
      process_of_rank[r] = p;
    }
    for (auto& [r, rt] : t.ranks)
      if (!rt.present) notes_.push_back("rank " + std::to_string(r) + ": no trace file");
    t.notes = std::move(notes_);
    for (auto& [r, p] : process_of_rank) {
      ProcessResult& pr = *processes_[p].result;
      finish_shapes(*pr.shapes, world_of);
      held.push_back(HeldRank{r, pr.shapes.get(), std::move(pr.threads)});
    }
    const std::vector<std::vector<bool>> dropped =
        full_history ? std::vector<std::vector<bool>>(held.size()) : trim_held(t, held, /*completion_seen=*/true);
    for (size_t h = 0; h < held.size(); ++h) {
      HeldRank& hr = held[h];
      const std::string& file = t.ranks[hr.rank].source;
      RankTrace& rt = t.ranks[hr.rank];
      size_t i = 0;
      for (HeldThread& ht : hr.threads) {
        ThreadTrace tt;
        tt.name = std::move(ht.name);
        for (const HeldCall& hc : ht.calls) {
          if (!dropped[h].empty() && dropped[h][i++]) continue;
          Call c = (*hr.shapes)[hc.shape].call;
          c.state = hc.call_state();
          c.seq = hc.seq;
          c.time_ns = hc.time_ns;
          c.origin = file + ":" + std::to_string(hc.line);
          if (c.state == CallState::Started)
            rt.notes.push_back((tt.name == "main" ? std::string("stopped in ") : "thread " + tt.name + " stopped in ") +
                               c.detail + (c.comm.empty() ? "" : " on " + c.comm) + " (" + c.origin + ")");
          tt.calls.push_back(std::move(c));
        }
        ht.calls = {};
        rt.threads.push_back(std::move(tt));
      }
    }
    return t;
  }

  const std::vector<std::string>& names_;
  std::vector<FileResult>& files_;
  std::vector<Process> processes_;
  std::map<std::string, CommInfo> comms_;
  std::vector<std::string> notes_;
  std::set<std::string> said_;  // notes given once
  int world_size_ = 0;
};

}  // namespace

namespace {

// Every file through read_file (on `threads` workers; text_of(i, text): file i's bytes into `text` with
// kReadPadding bytes of spare capacity, or a TraceInputError), then the Trace, with the error a pass over the
// files in order would have met first.
Trace read_recorder_files(const std::vector<std::string>& names,
                          const std::function<void(size_t, std::string&)>& text_of, bool full_history, unsigned threads,
                          bool slow_lines_only) {
  if (names.empty()) throw TraceInputError("", 0, 0, 0, "no recorder trace file given");
  std::vector<FileResult> files(names.size());
  for_each_file(names.size(), threads, [&](size_t i) {
    try {
      thread_local std::string text;  // its memory reused from file to file
      text_of(i, text);
      read_file(names[i], text, slow_lines_only, files[i]);
      if (text.capacity() > (size_t{64} << 20)) text = {};  // a large file's is let go
    } catch (...) {                                         // the file could not be read (or memory ran out)
      files[i].error = std::current_exception();
      files[i].stage = FileResult::kRead;
    }
  });
  auto rethrow_first = [&](int stage) {
    for (const auto& f : files)
      if (f.error && f.stage == stage) std::rethrow_exception(f.error);
  };
  rethrow_first(FileResult::kRead);
  rethrow_first(FileResult::kLines);
  // The MPI recorder's traces have a reader of their own (mpi_recorder_reader.cpp); one import reads one kind.
  size_t mpi = 0;
  for (const auto& f : files) mpi += f.mpi ? 1 : 0;
  if (mpi > 0 && mpi < files.size())
    throw TraceInputError(names.front(), 1, 1, 0,
                          "NCCL recorder traces and MPI recorder traces are mixed: import one kind at a time");
  if (mpi > 0) {
    std::vector<RecorderFile> parsed;
    parsed.reserve(files.size());
    for (auto& f : files) parsed.push_back(std::move(f.mpi_file));
    return read_mpi_recorder_files(parsed);
  }
  rethrow_first(FileResult::kPairs);
  rethrow_first(FileResult::kCalls);
  return Assembler(names, files).run(full_history);
}

}  // namespace

Trace read_recorder_buffers(const std::vector<std::pair<std::string, std::string>>& files, bool full_history,
                            bool slow_lines_only) {
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.first);
  return read_recorder_files(
      names,
      [&](size_t i, std::string& text) {
        text.clear();
        text.reserve(files[i].second.size() + kReadPadding);
        text = files[i].second;
      },
      full_history, 1, slow_lines_only);
}

Trace read_recorder_traces(const std::vector<std::string>& files, bool full_history, unsigned threads) {
  // Each file read, parsed and passed over on one worker per core, its text and lines freed before the
  // worker takes the next file. Every file is read before any is parsed was the order once: a file that
  // cannot be read is reported before another's bad line, and still is.
  // The files a few places ahead are read into the page cache while these are parsed (file_io.h): from a
  // disk, reading 3 GB one file at a time took twice the time of parsing it.
  return read_recorder_files(
      files,
      [&](size_t i, std::string& text) {
        read_ahead(files, i);
        read_trace_file(files[i], text);
      },
      full_history, threads, false);
}

}  // namespace collmc::traces
