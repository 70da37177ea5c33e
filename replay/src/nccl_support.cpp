#include "collmc/replay/nccl_support.h"

#include <algorithm>
#include <array>
#include <functional>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace collmc::replay {

namespace {

constexpr NcclFunctionInfo kFunctions[] = {
#define COLLMC_NCCL_FUNCTION(name, since) {#name, since},
#define COLLMC_NCCL_NEWER(name, since) {#name, since},
#include "nccl_functions.def"
#undef COLLMC_NCCL_FUNCTION
#undef COLLMC_NCCL_NEWER
};

// What every replay calls, whatever the scenario: the communicators' creation, the watchdog's abort,
// the errors' text and the split check (nccl_rank.cpp).
constexpr std::array<std::string_view, 10> kEveryReplay = {
    "ncclGetVersion", "ncclGetErrorString", "ncclGetLastError", "ncclGetUniqueId", "ncclCommInitRankConfig",
    "ncclCommAbort",  "ncclGroupStart",     "ncclGroupEnd",     "ncclCommCount",   "ncclCommGetAsyncError"};

int since_of(std::string_view function) {
  for (const auto& f : kFunctions)
    if (f.name == function) return f.since;
  return 0;
}

std::string since_text(std::string_view function) {
  const int since = since_of(function);
  if (since == 0) return "";
  std::string v = nccl_version_text(since);
  if (since % 100 == 0) v = v.substr(0, v.rfind('.'));  // "2.29", not "2.29.0"
  return "; it is in NCCL " + v + " and later";
}

std::string join_ranks(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i)
    out += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  return out;
}

// The groups of ranks whose members a placement keeps apart (or bounds per GPU): every communicator
// instance, and every send/recv pair (a pair needs the same connections as a two-rank comm).
struct Group {
  std::string name;
  std::vector<int> members;
};

std::vector<Group> conflict_groups(const model::World& world) {
  std::vector<Group> groups;
  for (const auto& c : world.comms)
    if (c.members.size() > 1) groups.push_back({"communicator " + c.name, c.members});
  for (const auto& call : world.calls)
    if (call.peer >= 0 && call.peer != call.rank)
      groups.push_back({"the send/recv pair of ranks " + std::to_string(std::min(call.rank, call.peer)) + " and " +
                            std::to_string(std::max(call.rank, call.peer)),
                        {std::min(call.rank, call.peer), std::max(call.rank, call.peer)}});
  return groups;
}

// Backtracking over ranks: rank r goes to a GPU where none of its groups already has `cap` members,
// trying first the GPU where its groups have the fewest members, then the least loaded. Bounded: a
// world the replay can run (at most 16 ranks) never comes near the bound.
std::optional<std::vector<int>> search_placement(int ranks, int gpus, const std::vector<Group>& groups, int cap) {
  std::vector<std::vector<int>> groups_of(static_cast<size_t>(ranks));
  for (size_t g = 0; g < groups.size(); ++g)
    for (int r : groups[g].members)
      if (r >= 0 && r < ranks) groups_of[static_cast<size_t>(r)].push_back(static_cast<int>(g));
  std::vector<std::vector<int>> count(groups.size(), std::vector<int>(static_cast<size_t>(gpus), 0));
  std::vector<int> load(static_cast<size_t>(gpus), 0), gpu(static_cast<size_t>(ranks), -1);
  long budget = 1'000'000;
  auto mates_on = [&](int r, int g) {
    int most = 0;
    for (int grp : groups_of[static_cast<size_t>(r)])
      most = std::max(most, count[static_cast<size_t>(grp)][static_cast<size_t>(g)]);
    return most;
  };
  std::function<bool(int)> place = [&](int r) {
    if (r == ranks) return true;
    if (--budget < 0) return false;
    std::vector<int> order(static_cast<size_t>(gpus));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      const int ma = mates_on(r, a), mb = mates_on(r, b);
      return ma != mb ? ma < mb : load[static_cast<size_t>(a)] < load[static_cast<size_t>(b)];
    });
    for (int g : order) {
      if (mates_on(r, g) >= cap) continue;
      gpu[static_cast<size_t>(r)] = g;
      ++load[static_cast<size_t>(g)];
      for (int grp : groups_of[static_cast<size_t>(r)]) ++count[static_cast<size_t>(grp)][static_cast<size_t>(g)];
      if (place(r + 1)) return true;
      --load[static_cast<size_t>(g)];
      for (int grp : groups_of[static_cast<size_t>(r)]) --count[static_cast<size_t>(grp)][static_cast<size_t>(g)];
    }
    gpu[static_cast<size_t>(r)] = -1;
    return false;
  };
  if (!place(0)) return std::nullopt;
  return gpu;
}

}  // namespace

std::string nccl_version_text(int code) {
  return code <= 0 ? "unknown" : model::nccl_version_text(static_cast<uint32_t>(code));
}

std::span<const NcclFunctionInfo> nccl_functions() { return kFunctions; }

std::vector<std::string_view> nccl_functions_for(model::OpKind kind) {
  using model::OpKind;
  switch (kind) {
    case OpKind::Alloc:
      return {"ncclMemAlloc"};
    case OpKind::Free:
      return {"ncclMemFree"};
    case OpKind::Register:
      return {"ncclCommWindowRegister"};
    case OpKind::Deregister:
      return {"ncclCommWindowDeregister"};
    case OpKind::RegisterLocal:
      return {"ncclCommRegister"};
    case OpKind::DeregisterLocal:
      return {"ncclCommDeregister"};
    case OpKind::Init:
      return {"ncclCommInitRankConfig"};
    case OpKind::Split:
      return {"ncclCommSplit"};
    case OpKind::Finalize:
      return {"ncclCommFinalize"};
    case OpKind::Destroy:
      return {"ncclCommDestroy"};
    case OpKind::Abort:
      return {"ncclCommAbort"};
    case OpKind::Shrink:
      return {"ncclCommShrink"};
    case OpKind::Grow:
      return {"ncclCommGrow"};
    case OpKind::GrowId:
      return {"ncclCommGetUniqueId"};
    case OpKind::Revoke:
      return {"ncclCommRevoke"};
    case OpKind::AllReduce:
      return {"ncclAllReduce"};
    case OpKind::AllGather:
      return {"ncclAllGather"};
    case OpKind::ReduceScatter:
      return {"ncclReduceScatter"};
    case OpKind::Broadcast:
      return {"ncclBroadcast"};
    case OpKind::Reduce:
      return {"ncclReduce"};
    case OpKind::AllToAll:
      return {"ncclSend", "ncclRecv"};  // a group of sends and receives
    case OpKind::Send:
      return {"ncclSend"};
    case OpKind::Recv:
      return {"ncclRecv"};
    case OpKind::Barrier:
      return {"ncclAllReduce"};  // a one-element all-reduce, then a stream sync
    case OpKind::PutSignal:
      return {"ncclPutSignal"};
    case OpKind::Signal:
      return {"ncclSignal"};
    case OpKind::WaitSignal:
      return {"ncclWaitSignal"};
    case OpKind::CudaMalloc:
    case OpKind::CudaFree:
    case OpKind::SyncStream:
    case OpKind::SyncDevice:
    case OpKind::StoreSet:
    case OpKind::StoreWait:
    case OpKind::HostBarrier:
    case OpKind::MpiError:  // MPI only: never replayed on NCCL
    case OpKind::Probe:
    case OpKind::RmaPut:
    case OpKind::RmaGet:
    case OpKind::RmaAccumulate:
    case OpKind::WinLock:
    case OpKind::WinUnlock:
    case OpKind::WinFlush:
    case OpKind::WinLockAll:
    case OpKind::WinUnlockAll:
    case OpKind::WinFlushAll:
    case OpKind::WinStart:
    case OpKind::WinComplete:
    case OpKind::WinPost:
    case OpKind::WinWait:
    case OpKind::WinFence:
    case OpKind::MpiFinalize:
      return {};
  }
  return {};
}

std::string NcclProbe::to_text() const {
  std::ostringstream out;
  if (!error.empty()) out << "error " << error << "\n";
  out << "gpus " << gpus << "\nversion " << version << "\nlibrary " << library << "\n";
  for (const auto& m : missing) out << "missing " << m << "\n";
  return out.str();
}

NcclProbe NcclProbe::from_text(std::string_view text) {
  NcclProbe p;
  std::istringstream in{std::string(text)};
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    any = true;
    if (key == "error")
      p.error = value;
    else if (key == "gpus")
      p.gpus = std::stoi(value);
    else if (key == "version")
      p.version = std::stoi(value);
    else if (key == "library")
      p.library = value;
    else if (key == "missing")
      p.missing.push_back(value);
    else
      throw std::runtime_error("unexpected line in the NCCL probe's answer: '" + line + "'");
  }
  if (!any) throw std::runtime_error("the NCCL probe answered nothing");
  return p;
}

bool NcclProbe::has(std::string_view function) const {
  return std::find(missing.begin(), missing.end(), function) == missing.end();
}

std::string NcclProbe::describe() const {
  return "NCCL " + nccl_version_text(version) + (library.empty() ? "" : " (" + library + ")") + ", " +
         std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
}

std::string missing_function_refusal(const model::World& world, const NcclProbe& probe) {
  const std::string lib = "NCCL " + nccl_version_text(probe.version) + " (" + probe.library + ")";
  for (std::string_view f : kEveryReplay)
    if (!probe.has(f))
      return lib + " has no " + std::string(f) + ", which every replay calls" + since_text(f) +
             " (--nccl LIB loads another)";
  for (const auto& call : world.calls)
    for (std::string_view f : nccl_functions_for(call.kind)) {
      if (!call.coll_config.empty() && call.kind == model::OpKind::AllReduce) f = "ncclAllReduceConfig";
      if (!probe.has(f))
        return "`" + call.text + "` (" + call.loc.str() + ") calls " + std::string(f) + ", which " + lib +
               " does not have" + since_text(f) + " (--nccl LIB loads another; docs/HARDWARE.md says how to build one)";
    }
  return "";
}

namespace {
// The ranks on each GPU, by GPU number (GPUs no rank uses stay empty).
std::vector<std::vector<int>> ranks_by_gpu(const std::vector<int>& gpu_of_rank) {
  std::vector<std::vector<int>> out;
  for (size_t r = 0; r < gpu_of_rank.size(); ++r) {
    const auto g = static_cast<size_t>(gpu_of_rank[r]);
    if (out.size() <= g) out.resize(g + 1);
    out[g].push_back(static_cast<int>(r));
  }
  return out;
}
}  // namespace

std::string GpuPlacement::describe() const {
  std::string out;
  const auto by_gpu = ranks_by_gpu(gpu_of_rank);
  for (size_t g = 0; g < by_gpu.size(); ++g) {
    const auto& ranks = by_gpu[g];
    if (ranks.empty()) continue;
    std::string list;
    for (size_t i = 0; i < ranks.size(); ++i) list += (i ? ", " : " ") + std::to_string(ranks[i]);
    out += (out.empty() ? "GPU " : "; GPU ") + std::to_string(g) + ": rank" + (ranks.size() > 1 ? "s" : "") + list;
  }
  return out;
}

std::string GpuPlacement::sharing() const {
  if (!comm_shares_gpu) return "";
  std::string out;
  const auto by_gpu = ranks_by_gpu(gpu_of_rank);
  for (size_t g = 0; g < by_gpu.size(); ++g)
    if (by_gpu[g].size() > 1)
      out +=
          (out.empty() ? "" : "; ") + std::string("ranks ") + join_ranks(by_gpu[g]) + " share GPU " + std::to_string(g);
  return out;
}

GpuPlacement place_ranks(const model::World& world, int gpus, int nccl_version, int ranks_per_gpu) {
  GpuPlacement p;
  const int n = world.ranks;
  if (gpus <= 0) {
    p.refusal = "no GPU to place the ranks on";
    return p;
  }
  if (n <= gpus) {
    p.gpu_of_rank.resize(static_cast<size_t>(n));
    std::iota(p.gpu_of_rank.begin(), p.gpu_of_rank.end(), 0);
    return p;
  }
  const std::vector<Group> groups = conflict_groups(world);
  if (auto apart = search_placement(n, gpus, groups, 1)) {
    p.gpu_of_rank = *apart;
    return p;
  }
  const std::string gpus_text = std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs");
  const std::string shrink =
      "shrink it first: collmc replay --shrink (collmc shrink --max-ranks " + std::to_string(gpus) + ")";
  if (nccl_version < kNcclMultiRankGpuSince) {
    p.refusal = std::to_string(n) + " ranks cannot be placed on " + gpus_text +
                " without two ranks of one communicator on one GPU, which NCCL " + nccl_version_text(nccl_version) +
                " rejects (\"Duplicate GPU detected\"); NCCL 2.30 and later let ranks of one communicator share a "
                "GPU (--nccl LIB loads one; docs/HARDWARE.md says how to build it), or " +
                shrink;
    return p;
  }
  if (ranks_per_gpu < 2) {
    p.refusal = "--ranks-per-gpu " + std::to_string(ranks_per_gpu) +
                " keeps the ranks of each communicator apart, and " + std::to_string(n) +
                " ranks cannot be placed on " + gpus_text + " that way; " + shrink;
    return p;
  }
  if (auto shared = search_placement(n, gpus, groups, ranks_per_gpu)) {
    p.gpu_of_rank = *shared;
    p.comm_shares_gpu = true;
    return p;
  }
  // Name the group that does not fit: the largest one.
  const Group* largest = &groups.front();
  for (const auto& g : groups)
    if (g.members.size() > largest->members.size()) largest = &g;
  p.refusal = largest->name + " has " + std::to_string(largest->members.size()) + " ranks, and " + gpus_text +
              " hold at most " + std::to_string(ranks_per_gpu) +
              " ranks of one communicator each (NCCL's default "
              "resources allow 2; --ranks-per-gpu N raises the bound), or " +
              shrink;
  return p;
}

// ncclCommGrow keeps every parent rank's number and numbers the new ranks after them; the replay
// numbers a comm's ranks in the order its members are listed.
std::string grow_numbering_refusal(const model::World& w) {
  for (const auto& call : w.calls) {
    if (call.kind != model::OpKind::Grow || call.comm < 0) continue;
    const auto& parent = w.comms[static_cast<size_t>(call.comm)].members;
    const auto& child = w.comms[static_cast<size_t>(call.child)].members;
    if (child.size() < parent.size() || !std::equal(parent.begin(), parent.end(), child.begin()))
      return "`" + call.text + "` (" + call.loc.str() + "): NCCL numbers the grown comm " + w.comm_name(call.child) +
             " with the parent's ranks first, in the parent's order; list " + w.comm_name(call.comm) +
             "'s members first in " + w.comm_name(call.child) + " to replay it";
  }
  return {};
}

int config_max_ctas(const std::string& config) {
  constexpr std::string_view kPrefix = "maxctas";
  if (config.size() <= kPrefix.size() || config.size() > kPrefix.size() + 4 || config.rfind(kPrefix, 0) != 0) return -1;
  int n = 0;
  for (size_t i = kPrefix.size(); i < config.size(); ++i) {
    if (config[i] < '0' || config[i] > '9') return -1;
    n = n * 10 + (config[i] - '0');
  }
  return n > 0 ? n : -1;
}

std::string issue36_refusal(const model::World& w) {
  for (const auto& c : w.comms) {
    if (c.launch_order_implicit)
      return "comm " + c.name +
             " is launch_order_implicit: the replay does not set ncclConfig_t.launchOrderImplicit yet";
    if (c.serialized)
      return "comm " + c.name + " is serialized (a framework-level group): the replay runs NCCL's own comms only";
  }
  for (const auto& call : w.calls) {
    if (call.kind == model::OpKind::Register && call.flag == model::RegFlag::GinOnly)
      return "`" + call.text + "` (" + call.loc.str() + "): GIN-only windows (NCCL 2.32) are not replayed yet";
    if (!call.coll_config.empty() && (call.kind != model::OpKind::AllReduce || config_max_ctas(call.coll_config) < 0))
      return "`" + call.text + "` (" + call.loc.str() +
             "): the replay runs config=maxctasN (ncclCollConfig_t.maxCTAs) on all_reduce only";
  }
  return {};
}

}  // namespace collmc::replay
