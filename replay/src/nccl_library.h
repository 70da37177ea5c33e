// The NCCL a rank process calls, loaded at run time (dlopen), never linked: the file that
// COLLMC_NCCL_LIBRARY names (`collmc replay --nccl LIB` sets it for the ranks), else libnccl.so.2 from
// the dynamic linker's search path, else the one the build found. So one collmc replays on the
// system's NCCL 2.28 and on a 2.30 built from source, and finds calls newer than the headers it was
// built with (ncclPutSignal, ncclCommGrow, ...); a call the loaded library lacks stays null, and a
// scenario that needs one is refused before any rank starts (nccl_support.h).
// Private to the replay library; only rank processes and the probe child load it.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "collmc/replay/nccl_support.h"

namespace collmc::replay {

// NCCL 2.29's ncclWaitSignalDesc_t (nccl.h.in of v2.29.2-1 .. v2.30.7-1: four ints).
struct NcclWaitSignalDesc {
  int opCnt;
  int peer;
  int sigIdx;
  int ctx;
};
// The types of the functions newer than the headers, as NCCL 2.29's nccl.h declares them.
using ncclPutSignal_fn = ncclResult_t (*)(const void*, size_t, ncclDataType_t, int, ncclWindow_t, size_t, int, int,
                                          unsigned int, ncclComm_t, cudaStream_t);
using ncclSignal_fn = ncclResult_t (*)(int, int, int, unsigned int, ncclComm_t, cudaStream_t);
using ncclWaitSignal_fn = ncclResult_t (*)(int, NcclWaitSignalDesc*, ncclComm_t, cudaStream_t);
using ncclCommGetUniqueId_fn = ncclResult_t (*)(ncclComm_t, ncclUniqueId*);
using ncclCommGrow_fn = ncclResult_t (*)(ncclComm_t, int, const ncclUniqueId*, int, ncclComm_t*, ncclConfig_t*);
// NCCL 2.31's ncclCollConfig_t (ncclCollConfig_v23100 in nccl.h.in of 2.31.0a16: size, magic, version,
// ext, then minCTAs, maxCTAs, nvlsCTAs, cgaClusterSize; INT_MIN = unset), for ncclAllReduceConfig.
struct NcclCollConfig {
  size_t size;
  unsigned int magic;
  unsigned int version;
  void* ext;
  int minCTAs;
  int maxCTAs;
  int nvlsCTAs;
  int cgaClusterSize;
};
inline constexpr unsigned int kNcclApiMagic = 0xcafebeef;  // NCCL_API_MAGIC
using ncclAllReduceConfig_fn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                                cudaStream_t, const NcclCollConfig*);

struct NcclLibrary {
// NOLINTBEGIN(bugprone-macro-parentheses): the argument is a member's name, not an expression
#define COLLMC_NCCL_FUNCTION(name, since) decltype(&::name) name = nullptr;
#define COLLMC_NCCL_NEWER(name, since) name##_fn name = nullptr;
// NOLINTEND(bugprone-macro-parentheses)
#include "nccl_functions.def"
#undef COLLMC_NCCL_FUNCTION
#undef COLLMC_NCCL_NEWER
  int version = 0;
  std::string path;   // the file loaded
  std::string error;  // non-empty: nothing usable was loaded (then every function is null)
};

// Loads on first use, once per process.
const NcclLibrary& nccl_library();

// The loaded library and the GPUs, for the launcher's decisions; asks CUDA (call it in a child).
NcclProbe probe_nccl_here();

}  // namespace collmc::replay
