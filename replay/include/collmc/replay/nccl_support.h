// What the NCCL backend decides before it starts a rank: which NCCL was loaded (its version, its file,
// the calls it lacks), whether the scenario needs a call that library lacks, and which GPU each rank
// runs on. Pure functions (no CUDA, no NCCL): CI tests them on machines without a GPU.
//
// Placement. One GPU per rank when there are enough. With fewer GPUs, ranks that share no
// communicator may share a GPU on any NCCL (two processes on one device). Two ranks of one
// communicator on one GPU: NCCL before 2.30 refuses ("Duplicate GPU detected"); 2.30 and later accept
// it with NCCL_MULTI_RANK_GPU_ENABLE=1 (experimental; "up to 2 ranks per GPU" with default resources,
// NCCL's env.rst; src/init.cc checks it when it compares the peers' GPU UUIDs). A result on a shared
// GPU is never a result on separate GPUs: the report says which ranks shared (GpuPlacement).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collmc/model/world.h"

namespace collmc::replay {

// The environment variable naming the libnccl the rank processes load (`collmc replay --nccl LIB`
// sets it); unset: libnccl.so.2 from the dynamic linker's search path.
inline constexpr const char* kNcclLibraryVariable = "COLLMC_NCCL_LIBRARY";

// "2.30.7" for NCCL's version code 23007 (major * 10000 + minor * 100 + patch, NCCL_VERSION()).
std::string nccl_version_text(int code);

// The functions the replay calls (replay/src/nccl_functions.def) and the first release that has each.
struct NcclFunctionInfo {
  std::string_view name;
  int since = 0;  // NCCL_VERSION code; 0: every release collmc supports
};
std::span<const NcclFunctionInfo> nccl_functions();
// The functions a call of this kind makes on the replay (none for the host store and CUDA-only calls).
std::vector<std::string_view> nccl_functions_for(model::OpKind kind);

// What a probe of the machine found (a forked child loads NCCL and asks CUDA: the launcher itself
// never initialises CUDA).
struct NcclProbe {
  int gpus = 0;
  int version = 0;                   // ncclGetVersion of the loaded library
  std::string library;               // the file actually loaded (dladdr)
  std::vector<std::string> missing;  // functions of nccl_functions() the library lacks
  // Non-empty: no usable NCCL or GPU. The library's fields stay set when it was the GPUs that failed.
  std::string error;

  std::string to_text() const;  // what the child sends the launcher
  // Throws std::runtime_error on text that to_text did not write.
  static NcclProbe from_text(std::string_view text);
  bool has(std::string_view function) const;
  // "NCCL 2.30.7 (/opt/nccl/lib/libnccl.so.2.30.7), 1 GPU"
  std::string describe() const;
};

// "" when the loaded library has every function the scenario's calls make; otherwise the refusal,
// naming the first such call (file:line), the function, the release that added it and the library.
std::string missing_function_refusal(const model::World& world, const NcclProbe& probe);

// "" unless a comm grown by ncclCommGrow lists its members in another order than NCCL numbers them
// (the parent's ranks first, in the parent's order, then the new ones); otherwise the refusal.
std::string grow_numbering_refusal(const model::World& world);

// Issue 36: "" unless the scenario has what the NCCL backend does not run yet: a `config=` other than
// `maxctasN` (ncclCollConfig_t.maxCTAs = N) or on another collective than all_reduce, a GIN-only window
// (NCCL 2.32), a `launch_order_implicit` or `serialized` comm; otherwise the refusal.
std::string issue36_refusal(const model::World& world);
// N of a `config=maxctasN` (the per-collective config the replay passes to ncclAllReduceConfig); -1 else.
int config_max_ctas(const std::string& config);

// NCCL 2.30.0 is the first release that lets ranks of one communicator share a GPU.
constexpr int kNcclMultiRankGpuSince = 23000;
// NCCL's env.rst: "up to 2 ranks per GPU" with its default resources; --ranks-per-gpu raises it.
constexpr int kDefaultRanksPerGpu = 2;

struct GpuPlacement {
  std::vector<int> gpu_of_rank;  // empty when refused
  // Two ranks of one communicator (or of one send/recv pair) on one GPU: the run needs
  // NCCL_MULTI_RANK_GPU_ENABLE=1, and its result is a shared-GPU result.
  bool comm_shares_gpu = false;
  std::string refusal;  // non-empty: the ranks cannot be placed (why, and what would help)

  // "GPU 0: ranks 0, 3; GPU 1: ranks 1, 2"
  std::string describe() const;
  // "ranks 0 and 1 share GPU 0" (every GPU holding ranks of one communicator), "" when none do.
  std::string sharing() const;
};

// Places `world`'s ranks on `gpus` GPUs for a library of version `nccl_version`: one GPU per rank when
// there are enough; else ranks that share no communicator together; else, from NCCL 2.30, ranks of one
// communicator together, at most `ranks_per_gpu` of any one communicator per GPU, spread as evenly as
// the GPUs allow. Worlds are small (the replay runs at most kMaxRanks ranks): backtracking.
GpuPlacement place_ranks(const model::World& world, int gpus, int nccl_version,
                         int ranks_per_gpu = kDefaultRanksPerGpu);

}  // namespace collmc::replay
