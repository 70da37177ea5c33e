// The CUDA runtime calls of SEMANTICS.md §2 that can block on NCCL work (stream and device
// synchronize, cudaFree) and cudaMalloc, which names plain device buffers. Only calls that go through
// the dynamic linker to libcudart.so are seen: a program (or library) that links the CUDA runtime
// statically, as nvcc does by default and NCCL itself does, calls its own copy.
#include <cuda_runtime_api.h>

#include "call_record.h"
#include "real_symbols.h"

using collmc::recorder::CallRecord;
using collmc::recorder::Library;
using collmc::recorder::report_missing;

#define REAL_CUDART(fn) COLLMC_REAL(fn, Library::Cudart)

namespace {
cudaError_t missing(const char* name) {
  report_missing(name);
  return cudaErrorSharedObjectSymbolNotFound;
}
}  // namespace

#pragma GCC visibility push(default)

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  auto real = REAL_CUDART(cudaStreamSynchronize);
  if (real == nullptr) return missing("cudaStreamSynchronize");
  CallRecord rec("cudaStreamSynchronize");
  if (!rec.active()) return real(stream);
  rec.args().ptr("stream", stream);
  rec.entered();
  cudaError_t r = real(stream);
  rec.result(r);
  rec.returned();
  return r;
}

cudaError_t cudaDeviceSynchronize(void) {
  auto real = REAL_CUDART(cudaDeviceSynchronize);
  if (real == nullptr) return missing("cudaDeviceSynchronize");
  CallRecord rec("cudaDeviceSynchronize");
  if (!rec.active()) return real();
  rec.entered();
  cudaError_t r = real();
  rec.result(r);
  rec.returned();
  return r;
}

cudaError_t cudaFree(void* devPtr) {
  auto real = REAL_CUDART(cudaFree);
  if (real == nullptr) return missing("cudaFree");
  CallRecord rec("cudaFree");
  if (!rec.active()) return real(devPtr);
  rec.args().ptr("ptr", devPtr);
  rec.entered();
  cudaError_t r = real(devPtr);
  rec.result(r);
  rec.returned();
  return r;
}

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  auto real = REAL_CUDART(cudaMalloc);
  if (real == nullptr) return missing("cudaMalloc");
  CallRecord rec("cudaMalloc");
  if (!rec.active()) return real(devPtr, size);
  rec.args().u64("size", size);
  rec.entered();
  cudaError_t r = real(devPtr, size);
  rec.result(r).ptr("ptr", devPtr != nullptr ? *devPtr : nullptr);
  rec.returned();
  return r;
}

#pragma GCC visibility pop
