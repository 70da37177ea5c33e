// Stands for libtorch_cuda.so in the recorder's tests: a library that calls NCCL through the dynamic linker and
// is itself loaded with dlopen(RTLD_LOCAL), as Python loads extension modules. The recorder must still find
// the real (here: fake) NCCL behind its interposers although RTLD_NEXT cannot see into that local scope.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstring>

extern "C" __attribute__((visibility("default"))) int fake_torch_step(int rank, int nranks) {
  ncclUniqueId id;
  memset(id.internal, 42, sizeof id.internal);
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, nranks, id, rank) != ncclSuccess) return 1;
  void* buf = nullptr;
  if (ncclMemAlloc(&buf, 4096) != ncclSuccess) return 2;
  if (ncclAllReduce(buf, buf, 1024, ncclFloat32, ncclSum, comm, nullptr) != ncclSuccess) return 3;
  if (cudaStreamSynchronize(nullptr) != cudaSuccess) return 4;
  if (ncclMemFree(buf) != ncclSuccess) return 5;
  if (ncclCommDestroy(comm) != ncclSuccess) return 6;
  return 0;
}
