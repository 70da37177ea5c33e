// The torch shim's traces as a Trace (torch_shim_reader.h; docs/TRACES.md, "The torch shim").
//
// A shim file is a recorder trace ("format":"collmc-torch"): its lines are read by the recorder's line reader
// (parse_recorder_file, split_recorded_processes), its calls are torch.distributed's. Process groups are
// numbered by the shim in the order the program made them (every rank makes every group, as torch requires),
// so an index names one group on every rank; the group's members, backend and PyTorch name come from the
// records of the ranks that belong to it.
#include "collmc/traces/torch_shim_reader.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <absl/strings/str_cat.h>

namespace collmc::traces {
namespace {

constexpr const char* kTorchFormat = "collmc-torch";

struct Group {
  int64_t index = 0;
  std::string name, desc, backend;
  std::vector<int> ranks;  // global ranks in group-rank order
  bool host_blocking = false;
  std::string id() const { return "torch-pg:" + std::to_string(index); }
};

// One recorded torch call of a process, with what the reader needs of it.
struct TorchCall {
  const RecordedCall* rec = nullptr;
  std::string call, src;
  int64_t tid = 0, pg = -2;
  uint64_t enter_ns = 0, return_ns = 0;  // t_wall_ns; return 0: never returned
  bool made_nccl_call = false;
};

// What the shim saw of a pool's memory when the program registered it (torch_shim.py, _segment_fields).
enum class SegmentMemory {
  Vmm,     // an expandable segment: cuMemCreate + cuMemMap, what ncclCommWindowRegister takes
  Malloc,  // a plain cudaMalloc segment
  Custom,  // the pool's own allocator (CUDAPluggableAllocator, NCCL's ncclMemAlloc): not known
};
struct PoolSegment {
  uint64_t address = 0, size = 0;
  SegmentMemory memory = SegmentMemory::Custom;
};

struct Process {
  const RecordedProcess* rp = nullptr;
  std::string file, host;
  int64_t pid = -1, rank = -1, world_size = -1;
  std::vector<TorchCall> calls;
};

const nlohmann::ordered_json* field(const RecorderLine* line, const char* key) { return recorder_field(line, key); }

std::string string_or(const RecorderLine* line, const char* key, const std::string& otherwise = "") {
  const auto* v = field(line, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : otherwise;
}

std::optional<int64_t> integer(const RecorderLine* line, const char* key) {
  const auto* v = field(line, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

// "segments": ADDRESS/SIZE/KIND items, comma-separated (ADDRESS in "0x" hex, SIZE in bytes, KIND vmm, malloc or
// custom).
std::vector<PoolSegment> parse_segments(const std::string& file, int line, const std::string& text) {
  std::vector<PoolSegment> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t a = item.find('/'), b = a == std::string::npos ? a : item.find('/', a + 1);
    PoolSegment seg;
    std::optional<uint64_t> address = b == std::string::npos ? std::nullopt : parse_hex_field(item.substr(0, a));
    const std::string size = b == std::string::npos ? "" : item.substr(a + 1, b - a - 1);
    const std::string kind = b == std::string::npos ? "" : item.substr(b + 1);
    const bool digits = !size.empty() && size.size() <= 19 &&
                        std::all_of(size.begin(), size.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!address || !digits || (kind != "vmm" && kind != "malloc" && kind != "custom"))
      throw TraceInputError(file, line, 1, 0,
                            "expected \"segments\" as ADDRESS/SIZE/KIND items (0x hex, bytes, vmm|malloc|custom), "
                            "found \"" +
                                item.substr(0, 60) + "\"");
    seg.address = *address;
    seg.size = std::stoull(size);
    seg.memory = kind == "vmm" ? SegmentMemory::Vmm : kind == "malloc" ? SegmentMemory::Malloc : SegmentMemory::Custom;
    out.push_back(seg);
  }
  return out;
}

std::vector<int> parse_ranks(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    try {
      out.push_back(std::stoi(item));
    } catch (const std::exception&) {
      return {};
    }
  }
  return out;
}

// "first:last:step" (the shim writes long member lists so).
std::vector<int> parse_range(const std::string& text) {
  int first = 0, last = 0, step = 0;
  char c1 = 0, c2 = 0;
  std::stringstream in(text);
  if (!(in >> first >> c1 >> last >> c2 >> step) || c1 != ':' || c2 != ':' || step <= 0 || last < first) return {};
  std::vector<int> out;
  for (int r = first; r <= last; r += step) out.push_back(r);
  return out;
}

// torch.distributed's calls as statements of the language.
std::optional<CallKind> collective_kind(const std::string& call) {
  static const std::map<std::string, CallKind> kinds = {
      {"all_reduce", CallKind::AllReduce},
      {"all_reduce_coalesced", CallKind::AllReduce},
      {"reduce", CallKind::Reduce},
      {"broadcast", CallKind::Broadcast},
      {"broadcast_object_list", CallKind::Broadcast},
      {"all_gather", CallKind::AllGather},
      {"all_gather_into_tensor", CallKind::AllGather},
      {"_all_gather_base", CallKind::AllGather},
      {"all_gather_object", CallKind::AllGather},
      {"reduce_scatter", CallKind::ReduceScatter},
      {"reduce_scatter_tensor", CallKind::ReduceScatter},
      {"_reduce_scatter_base", CallKind::ReduceScatter},
      {"all_to_all", CallKind::AllToAll},
      {"all_to_all_single", CallKind::AllToAll},
      {"gather", CallKind::AllToAll},
      {"scatter", CallKind::AllToAll},
      {"barrier", CallKind::Barrier},
      {"monitored_barrier", CallKind::Barrier},
      {"send", CallKind::Send},
      {"isend", CallKind::Send},
      {"recv", CallKind::Recv},
      {"irecv", CallKind::Recv},
  };
  auto it = kinds.find(call);
  if (it == kinds.end()) return std::nullopt;
  return it->second;
}

std::string hex_text(uint64_t v) { return absl::StrCat(absl::Hex(v)); }

bool makes_group(const std::string& call) {
  return call == "init_process_group" || call == "new_group" || call == "split_group" || call == "new_subgroups";
}

// The PyTorch name of a group, as reports show it: its description (torch 2.x group_desc, Megatron's
// INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP ...) when it has one, else "default_pg" or "pg<name>".
std::string group_label(const Group& g) {
  if (!g.desc.empty() && g.desc != "undefined") return g.desc;
  if (g.index == 0) return "default_pg";
  return "pg" + (g.name.empty() ? std::to_string(g.index) : g.name);
}

class Reader {
 public:
  Reader(const std::vector<RecorderFile>& torch_files) : files_(torch_files) {}

  Trace read(const std::vector<std::pair<std::string, std::string>>& nccl_buffers) {
    processes_ = split_recorded_processes(files_, notes_);
    procs_.reserve(processes_.size());
    for (const auto& rp : processes_) procs_.push_back(process(rp));
    assign_ranks();
    trace_.format = "torch";
    trace_.world_size = static_cast<int>(world_);
    for (int r = 0; r < trace_.world_size; ++r) {
      trace_.ranks[r].rank = r;
      trace_.ranks[r].present = false;
    }
    build_groups();
    Trace nccl;
    bool have_nccl = !nccl_buffers.empty();
    if (have_nccl) nccl = read_recorder_buffers(nccl_buffers, /*full_history=*/true);
    for (auto& p : procs_) {
      if (p.rank < 0) continue;
      RankTrace& rt = trace_.ranks[static_cast<int>(p.rank)];
      if (rt.present) {
        notes_.push_back("two processes have world rank " + std::to_string(p.rank) + "; " + p.file + " is left out");
        continue;
      }
      rt.present = true;
      rt.source = p.file;
      const RankTrace* from_nccl = have_nccl ? nccl_rank_of(nccl, p) : nullptr;
      if (from_nccl != nullptr) {
        merge(p, rt, *from_nccl, nccl);
      } else {
        for (auto& c : p.calls) add_torch_call(p, rt, c);
      }
    }
    if (have_nccl) adopt_nccl_comms(nccl);
    for (auto& [r, rt] : trace_.ranks)
      if (!rt.present) notes_.push_back("rank " + std::to_string(r) + ": no torch shim trace");
    trace_.notes.insert(trace_.notes.end(), notes_.begin(), notes_.end());
    return std::move(trace_);
  }

 private:
  Process process(const RecordedProcess& rp) {
    Process p;
    p.rp = &rp;
    p.file = rp.file->name;
    p.host = string_or(rp.header, "host");
    p.pid = integer(rp.header, "pid").value_or(-1);
    p.world_size = integer(rp.header, "env_world_size").value_or(-1);
    const int64_t env_rank = integer(rp.header, "env_rank").value_or(-1);
    for (const auto& c : rp.calls) {
      TorchCall t;
      t.rec = &c;
      RecorderFields in(*rp.file, c.enter);
      t.call = in.string("call");
      t.tid = in.integer("tid");
      t.src = string_or(c.enter, "src", "?");
      t.pg = integer(c.enter, "pg").value_or(integer(c.ret, "pg").value_or(-2));
      t.enter_ns = static_cast<uint64_t>(integer(c.enter, "t_wall_ns").value_or(0));
      t.return_ns = c.ret != nullptr ? static_cast<uint64_t>(integer(c.ret, "t_wall_ns").value_or(0)) : 0;
      if (t.call == "init_process_group" && c.ret != nullptr) {
        if (auto r = integer(c.ret, "rank")) p.rank = *r;
        if (auto w = integer(c.ret, "world_size")) p.world_size = *w;
      }
      p.calls.push_back(std::move(t));
    }
    if (p.rank < 0) p.rank = env_rank;
    return p;
  }

  void assign_ranks() {
    for (const auto& p : procs_) world_ = std::max<int64_t>({world_, p.world_size, p.rank + 1});
    // A process that says no rank (no init_process_group returned, no $RANK): the next free rank, said.
    std::set<int64_t> taken;
    for (const auto& p : procs_)
      if (p.rank >= 0) taken.insert(p.rank);
    int64_t next = 0;
    for (auto& p : procs_) {
      if (p.rank >= 0) continue;
      while (taken.count(next)) ++next;
      p.rank = next;
      taken.insert(next);
      notes_.push_back(p.file + ": no rank recorded (no init_process_group returned, no $RANK): taken as rank " +
                       std::to_string(next));
    }
    for (const auto& p : procs_) world_ = std::max<int64_t>(world_, p.rank + 1);
    if (world_ > 65536) throw TraceInputError(procs_.front().file, 0, 0, 0, "more than 65536 ranks");
  }

  // Groups from the records of their members: index, ranks, backend, name.
  void build_groups() {
    for (const auto& p : procs_) {
      for (const auto& c : p.calls) {
        if (!makes_group(c.call) || c.rec->ret == nullptr) continue;
        const RecorderLine* ret = c.rec->ret;
        auto index = integer(ret, "pg");
        if (!index || *index < 0) continue;
        Group& g = groups_[*index];
        g.index = *index;
        std::vector<int> ranks = parse_ranks(string_or(ret, "ranks"));
        if (ranks.empty()) ranks = parse_range(string_or(ret, "ranks_range"));
        const bool member = integer(ret, "member").value_or(1) != 0;
        if (!ranks.empty() && (g.ranks.empty() || member)) g.ranks = ranks;
        if (!member) continue;
        if (g.name.empty()) g.name = string_or(ret, "name");
        if (g.desc.empty()) g.desc = string_or(ret, "desc");
        if (g.backend.empty()) g.backend = string_or(ret, "backend");
      }
    }
    if (!groups_.count(0) && !procs_.empty()) {  // the default group, when no init_process_group was seen
      Group& g = groups_[0];
      for (int r = 0; r < world_; ++r) g.ranks.push_back(r);
      notes_.push_back("no init_process_group recorded: the default group is taken to hold every rank");
    }
    for (auto& [i, g] : groups_) {
      // Gloo (and MPI) process groups run their collectives on the host: the calling thread waits for them.
      // A group with both (torch 2.x "cpu:gloo,cuda:nccl") is taken as NCCL's.
      g.host_blocking = g.backend.find("nccl") == std::string::npos &&
                        (g.backend.find("gloo") != std::string::npos || g.backend.find("mpi") != std::string::npos);
      Communicator c;
      c.id = g.id();
      c.label = group_label(g);
      c.size = static_cast<int>(g.ranks.size());
      for (size_t k = 0; k < g.ranks.size(); ++k) c.members[g.ranks[k]] = static_cast<int>(k);
      c.origin = CommOrigin::Init;
      c.host_blocking = g.host_blocking;
      trace_.comms.push_back(std::move(c));
    }
  }

  bool is_host_blocking(int64_t pg) const {
    auto it = groups_.find(pg);
    return it != groups_.end() && it->second.host_blocking;
  }

  std::string thread_name(const Process& p, int64_t tid) const {
    return tid == p.pid ? "main" : "tid" + std::to_string(tid);
  }

  ThreadTrace& thread_of(RankTrace& rt, const std::string& name) {
    for (auto& t : rt.threads)
      if (t.name == name) return t;
    rt.threads.push_back(ThreadTrace{name, {}});
    return rt.threads.back();
  }

  std::string origin_of(const Process& p, const TorchCall& t) const {
    return t.src + " (" + t.call + ", " + std::filesystem::path(p.file).filename().string() + ":" +
           std::to_string(t.rec->enter->line) + ")";
  }

  // The statements of one torch call (usually one; a pool registered before the trace saw it made gets its
  // alloc first).
  std::vector<Call> statements(const Process& p, const TorchCall& t) {
    std::vector<Call> out;
    const RecorderLine* in = t.rec->enter;
    Call c;
    c.state = t.rec->ret == nullptr ? CallState::Started : CallState::Completed;
    c.origin = origin_of(p, t);
    c.detail =
        t.call + (t.pg >= 0 && groups_.count(t.pg) ? " on " + group_label(groups_.at(t.pg)) : "") + " at " + t.src;
    c.time_ns = t.enter_ns;
    c.return_ns = t.return_ns;
    c.seq = integer(in, "seq");
    if (t.rec->ret != nullptr && integer(t.rec->ret, "result").value_or(0) != 0)
      c.detail += " (raised " + string_or(t.rec->ret, "error", "an error") + ")";
    auto on_group = [&](int64_t pg) {
      if (pg >= 0 && groups_.count(pg)) return groups_.at(pg).id();
      return std::string();
    };
    if (auto kind = collective_kind(t.call)) {
      c.kind = *kind;
      c.comm = on_group(t.pg);
      if (c.comm.empty()) {
        c.kind = CallKind::Other;
        c.detail += ": on a group this rank is not in, or one the shim never saw made";
      }
      if (auto n = integer(in, "count"); n && *n >= 0 && integer(in, "tensors").value_or(1) == 1)
        c.count = static_cast<uint64_t>(*n);
      c.dtype = string_or(in, "dtype");
      if (c.dtype == "unknown") c.dtype.clear();
      // The tensor's address names its buffer, so that --open-orders keeps two calls on one tensor in order.
      if (auto b = parse_hex_field(string_or(in, "buf")); b && *b != 0) c.buffer = "t_" + hex_text(*b);
      c.redop = string_or(in, "op");
      if (auto r = integer(in, "root"); r && *r >= 0) c.root = static_cast<int>(*r);
      if (auto r = integer(in, "peer"); r && *r >= 0) c.peer = static_cast<int>(*r);
      // NCCL groups run on their own stream, as ProcessGroupNCCL does; gloo calls block the host.
      if (!c.comm.empty() && !is_host_blocking(t.pg)) c.stream = "s_" + group_label(groups_.at(t.pg));
      out.push_back(std::move(c));
      return out;
    }
    if (makes_group(t.call)) {
      auto index = t.rec->ret != nullptr ? integer(t.rec->ret, "pg") : std::nullopt;
      const bool member = t.rec->ret != nullptr && integer(t.rec->ret, "member").value_or(1) != 0;
      if (t.rec->ret == nullptr) {
        c.kind = CallKind::Other;
        c.detail += ": never returned (the group it was making is not known)";
      } else if (index && member && groups_.count(*index)) {
        c.kind = CallKind::CommInit;
        c.comm = groups_.at(*index).id();
      } else {
        c.kind = CallKind::Other;
        c.detail += ": this rank is not a member";
      }
      out.push_back(std::move(c));
      return out;
    }
    if (t.call == "register_mem_pool" || t.call == "deregister_mem_pool" || t.call == "symm_mem_rendezvous") {
      c.comm = on_group(t.pg);
      const int64_t pool = integer(in, "pool").value_or(-1);
      const std::string buffer = t.call == "symm_mem_rendezvous" ? "symm" + std::to_string(++rendezvous_[p.rank])
                                                                 : "pool" + std::to_string(pool);
      c.buffer = buffer;
      if (c.comm.empty()) {
        c.kind = CallKind::Other;
        c.detail += ": on a group the shim cannot name";
      } else if (t.call == "deregister_mem_pool") {
        const bool symm = registered_[{p.rank, c.comm, buffer}];
        c.kind = symm ? CallKind::WindowDeregister : CallKind::LocalDeregister;
      } else {
        const bool symm = t.call == "symm_mem_rendezvous" || integer(in, "symm").value_or(0) != 0;
        c.kind = symm ? CallKind::WindowRegister : CallKind::LocalRegister;
        c.symmetric = symm;
        registered_[{p.rank, c.comm, buffer}] = symm;
        if (allocated_.insert({p.rank, buffer}).second) {
          Call alloc;
          alloc.kind = CallKind::MemAlloc;
          alloc.buffer = buffer;
          alloc.origin = c.origin;
          alloc.time_ns = c.time_ns;
          alloc.detail = "the memory of " + buffer + " (torch.cuda.MemPool / symmetric memory)";
          out.push_back(std::move(alloc));
        }
      }
      out.push_back(std::move(c));
      return out;
    }
    if (t.call == "MemPool" && t.rec->ret != nullptr) {
      const std::string buffer = "pool" + std::to_string(integer(t.rec->ret, "pool").value_or(0));
      allocated_.insert({p.rank, buffer});
      c.kind = CallKind::MemAlloc;
      c.buffer = buffer;
      out.push_back(std::move(c));
      return out;
    }
    if (t.call == "destroy_process_group" && t.pg >= 0 && groups_.count(t.pg)) {
      c.kind = CallKind::CommDestroy;
      c.comm = groups_.at(t.pg).id();
      out.push_back(std::move(c));
      return out;
    }
    c.kind = CallKind::Other;  // destroy_process_group() of every group, batch_isend_irecv, ...
    out.push_back(std::move(c));
    return out;
  }

  void add_torch_call(const Process& p, RankTrace& rt, const TorchCall& t) {
    ThreadTrace& th = thread_of(rt, thread_name(p, t.tid));
    for (auto& c : statements(p, t)) {
      if (c.state == CallState::Started)
        rt.notes.push_back("stopped in " + c.detail + " (" + std::filesystem::path(p.file).filename().string() + ":" +
                           std::to_string(t.rec->enter->line) + ")");
      th.calls.push_back(std::move(c));
    }
  }

  // The NCCL recorder's rank whose file is this process's (same host and pid).
  const RankTrace* nccl_rank_of(const Trace& nccl, const Process& p) const {
    const std::string want = "collmc-trace." + p.host + "." + std::to_string(p.pid) + ".jsonl";
    for (const auto& [r, rt] : nccl.ranks)
      if (rt.present && std::filesystem::path(rt.source).filename().string() == want) return &rt;
    return nullptr;
  }

  // The process's NCCL calls, each named after the torch call that made it, and its torch calls that made no
  // NCCL call (gloo groups; a call that never reached NCCL), in time order per thread.
  void merge(Process& p, RankTrace& rt, const RankTrace& from, const Trace& nccl) {
    (void)nccl;
    for (const auto& th : from.threads) {
      const int64_t tid = th.name == "main" ? p.pid : std::atoll(th.name.c_str() + 3);
      std::vector<Call> calls;
      for (Call c : th.calls) {
        TorchCall* by = nullptr;
        for (auto& t : p.calls)
          if (t.tid == tid && t.enter_ns <= c.time_ns && (t.return_ns == 0 || c.time_ns <= t.return_ns)) by = &t;
        if (by != nullptr) {
          by->made_nccl_call = true;
          c.origin = by->src + " (" + by->call + "; " + c.origin + ")";
          if (!c.comm.empty() && by->pg >= 0 && groups_.count(by->pg) && !nccl_label_.count(c.comm))
            nccl_label_[c.comm] = group_label(groups_.at(by->pg));
          if (auto memory = pool_memory(p, *by, c, calls)) calls.push_back(std::move(*memory));
        }
        calls.push_back(std::move(c));
      }
      ThreadTrace& out = thread_of(rt, th.name);
      out.calls = std::move(calls);
    }
    for (const auto& n : from.notes) rt.notes.push_back(n);
    for (auto& t : p.calls) {
      if (t.made_nccl_call) continue;
      const bool gloo = t.pg >= 0 && is_host_blocking(t.pg);
      const bool open = t.rec->ret == nullptr;
      if (!gloo && !open) continue;  // an NCCL group's call whose NCCL calls the recorder holds
      ThreadTrace& th = thread_of(rt, thread_name(p, t.tid));
      for (auto& c : statements(p, t)) {
        if (c.state == CallState::Started) rt.notes.push_back("stopped in " + c.detail);
        auto at = std::upper_bound(th.calls.begin(), th.calls.end(), c.time_ns,
                                   [](uint64_t time, const Call& x) { return time < x.time_ns; });
        th.calls.insert(at, std::move(c));
      }
    }
  }

  // The allocation of the pool memory an NCCL registration inside register_mem_pool names, when the NCCL trace
  // never saw it made (the caching allocator maps expandable segments with the driver API, which the recorder
  // does not intercept) and the shim saw the segment: VMM memory for an expandable segment, cudaMalloc memory for
  // a plain one. Without it the scenario takes the memory for cudaMalloc memory whatever it was (the usage_error
  // the run of tests/fixtures/traces/gpu/shim_mempool_* did not have). A registration NCCL accepted has its
  // allocation from the recorder's reader already.
  std::optional<Call> pool_memory(const Process& p, const TorchCall& by, const Call& c,
                                  const std::vector<Call>& before) {
    if (by.call != "register_mem_pool" || c.address == 0) return std::nullopt;
    if (c.kind != CallKind::WindowRegister && c.kind != CallKind::LocalRegister) return std::nullopt;
    for (const Call& x : before)
      if ((x.kind == CallKind::MemAlloc || x.kind == CallKind::CudaMalloc) && x.buffer == c.buffer) return std::nullopt;
    const std::string text = string_or(by.rec->enter, "segments");
    if (text.empty()) return std::nullopt;
    for (const PoolSegment& seg : parse_segments(p.file, by.rec->enter->line, text)) {
      if (c.address < seg.address || c.address - seg.address >= std::max<uint64_t>(seg.size, 1)) continue;
      if (seg.memory == SegmentMemory::Custom) return std::nullopt;
      Call alloc;
      alloc.kind = seg.memory == SegmentMemory::Vmm ? CallKind::MemAlloc : CallKind::CudaMalloc;
      alloc.buffer = c.buffer;
      alloc.bytes = seg.size;
      alloc.origin = c.origin;
      alloc.time_ns = c.time_ns;
      alloc.detail = std::string("the pool's segment, ") +
                     (seg.memory == SegmentMemory::Vmm ? "an expandable one (VMM)" : "a plain cudaMalloc one") +
                     ", as the shim saw it at register_mem_pool";
      return alloc;
    }
    return std::nullopt;
  }

  // The NCCL recorder's communicators, named after the torch groups whose calls made them; the torch groups
  // those stand for (NCCL-backed ones) are not declared twice.
  void adopt_nccl_comms(const Trace& nccl) {
    std::set<std::string> named;
    for (Communicator c : nccl.comms) {
      if (auto it = nccl_label_.find(c.id); it != nccl_label_.end()) {
        c.label = it->second;
        named.insert(it->second);
      }
      trace_.comms.push_back(std::move(c));
    }
    std::vector<Communicator> kept;
    for (auto& c : trace_.comms) {
      const bool torch_group = c.id.rfind("torch-pg:", 0) == 0;
      if (torch_group && !c.host_blocking && named.count(c.label)) continue;
      kept.push_back(std::move(c));
    }
    trace_.comms = std::move(kept);
    trace_.notes.insert(trace_.notes.end(), nccl.notes.begin(), nccl.notes.end());
  }

  const std::vector<RecorderFile>& files_;
  std::vector<RecordedProcess> processes_;
  std::vector<Process> procs_;
  std::map<int64_t, Group> groups_;
  std::vector<std::string> notes_;
  std::map<std::string, std::string> nccl_label_;
  std::map<int64_t, int> rendezvous_;
  std::map<std::tuple<int64_t, std::string, std::string>, bool> registered_;
  std::set<std::pair<int64_t, std::string>> allocated_;
  int64_t world_ = 0;
  Trace trace_;
};

bool is_torch_text(const std::string& text) {
  const size_t end = text.find('\n');
  const std::string first = text.substr(0, end);
  return first.find("\"ev\":\"process\"") != std::string::npos &&
         first.find(std::string("\"format\":\"") + kTorchFormat + "\"") != std::string::npos;
}

}  // namespace

bool is_torch_shim_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string first;
  std::getline(in, first);
  return is_torch_text(first);
}

Trace read_torch_shim_buffers(const std::vector<std::pair<std::string, std::string>>& files, bool full_history) {
  std::vector<RecorderFile> torch_files;
  std::vector<std::pair<std::string, std::string>> nccl;
  for (const auto& [name, text] : files) {
    if (is_torch_text(text))
      torch_files.push_back(parse_recorder_file(name, text));
    else
      nccl.emplace_back(name, text);
  }
  if (torch_files.empty())
    throw TraceInputError(files.empty() ? "" : files.front().first, 0, 0, 0, "no torch shim trace");
  Trace trace = Reader(torch_files).read(nccl);
  if (!full_history) trim_history(trace, /*completion_seen=*/true);
  return trace;
}

Trace read_torch_shim_traces(const std::vector<std::string>& files, bool full_history) {
  std::vector<std::pair<std::string, std::string>> buffers;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) throw TraceInputError(f, 0, 0, 0, "cannot open the file");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    buffers.emplace_back(f, std::move(text));
  }
  return read_torch_shim_buffers(buffers, full_history);
}

}  // namespace collmc::traces
