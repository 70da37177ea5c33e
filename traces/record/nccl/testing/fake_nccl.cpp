// A fake NCCL and CUDA runtime for the recorder's CPU tests: every call succeeds at once, communicators are
// small structs. FAKE_NCCL_HANG_ON=<function name> makes that call block forever (a hang to record).
// Test scaffolding only: nothing here says anything about real NCCL.
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

struct ncclComm {
  int rank;
  int nranks;
};

namespace {
void maybe_hang(const char* name) {
  const char* which = getenv("FAKE_NCCL_HANG_ON");
  if (which != nullptr && strcmp(which, name) == 0)
    for (;;) pause();
}
ncclComm_t make_comm(int rank, int nranks) { return new ncclComm{rank, nranks}; }
}  // namespace

extern "C" {
ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  memset(id->internal, 7, sizeof id->internal);
  return ncclSuccess;
}
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId, int rank) {
  maybe_hang("ncclCommInitRank");
  *comm = make_comm(rank, nranks);
  return ncclSuccess;
}
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId, int rank, ncclConfig_t*) {
  *comm = make_comm(rank, nranks);
  return ncclSuccess;
}
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int, ncclComm_t* newcomm, ncclConfig_t*) {
  *newcomm = color == NCCL_SPLIT_NOCOLOR ? nullptr : make_comm(comm->rank, comm->nranks);
  return ncclSuccess;
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  *rank = comm->rank;
  return ncclSuccess;
}
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  *count = comm->nranks;
  return ncclSuccess;
}
ncclResult_t ncclCommFinalize(ncclComm_t) { return ncclSuccess; }
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  delete comm;
  return ncclSuccess;
}
ncclResult_t ncclCommWindowRegister(ncclComm_t, void* buff, size_t, ncclWindow_t* win, int) {
  maybe_hang("ncclCommWindowRegister");
  *win = reinterpret_cast<ncclWindow_t>(static_cast<char*>(buff) + 1);
  return ncclSuccess;
}
ncclResult_t ncclCommWindowDeregister(ncclComm_t, ncclWindow_t) { return ncclSuccess; }
ncclResult_t ncclCommRegister(const ncclComm_t, void* buff, size_t, void** handle) {
  *handle = static_cast<char*>(buff) + 2;
  return ncclSuccess;
}
ncclResult_t ncclCommDeregister(const ncclComm_t, void*) { return ncclSuccess; }
ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  *ptr = malloc(size);
  return ncclSuccess;
}
ncclResult_t ncclMemFree(void* ptr) {
  free(ptr);
  return ncclSuccess;
}
ncclResult_t ncclAllReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t) {
  maybe_hang("ncclAllReduce");
  return ncclSuccess;
}
ncclResult_t ncclBroadcast(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) {
  return ncclSuccess;
}
ncclResult_t ncclReduce(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t, cudaStream_t) {
  return ncclSuccess;
}
ncclResult_t ncclAllGather(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) { return ncclSuccess; }
ncclResult_t ncclReduceScatter(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t) {
  return ncclSuccess;
}
ncclResult_t ncclAlltoAll(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) { return ncclSuccess; }
ncclResult_t ncclSend(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) { return ncclSuccess; }
ncclResult_t ncclRecv(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) { return ncclSuccess; }
ncclResult_t ncclGroupStart() { return ncclSuccess; }
ncclResult_t ncclGroupEnd() { return ncclSuccess; }

cudaError_t cudaStreamSynchronize(cudaStream_t) {
  maybe_hang("cudaStreamSynchronize");
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }
cudaError_t cudaMalloc(void** ptr, size_t size) {
  *ptr = malloc(size);
  return cudaSuccess;
}
cudaError_t cudaFree(void* ptr) {
  free(ptr);
  return cudaSuccess;
}
}
