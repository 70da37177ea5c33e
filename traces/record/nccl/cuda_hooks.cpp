// The CUDA runtime calls of SEMANTICS.md §2 that can block on NCCL work (stream and device
// synchronize, cudaFree) and cudaMalloc, which names plain device buffers. Only calls that go through
// the dynamic linker to libcudart.so are seen: a program (or library) that links the CUDA runtime
// statically, as nvcc does by default and NCCL itself does, calls its own copy.
#include <cuda_runtime_api.h>

#include "hook.h"

using collmc::model::OpKind;
using collmc::recorder::JsonLine;
using collmc::recorder::Library;
using collmc::recorder::no_fields;
using collmc::recorder::recorded_name;

namespace {

// One CUDA runtime interposer (hook.h).
template <auto Self, class WriteArgs, class WriteOutputs, class... Args>
cudaError_t cuda_call(OpKind op, WriteArgs&& write_args, WriteOutputs&& write_outputs, Args... args) {
  return collmc::recorder::record_call<Self>(recorded_name(op), Library::Cudart, cudaErrorSharedObjectSymbolNotFound,
                                             write_args, write_outputs, args...);
}

void no_outputs(JsonLine&, cudaError_t) {}

}  // namespace

#pragma GCC visibility push(default)

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  return cuda_call<&cudaStreamSynchronize>(
      OpKind::SyncStream, [&](JsonLine& in) { in.ptr("stream", stream); }, no_outputs, stream);
}

cudaError_t cudaDeviceSynchronize(void) {
  return cuda_call<&cudaDeviceSynchronize>(OpKind::SyncDevice, no_fields, no_outputs);
}

cudaError_t cudaFree(void* devPtr) {
  return cuda_call<&cudaFree>(
      OpKind::CudaFree, [&](JsonLine& in) { in.ptr("ptr", devPtr); }, no_outputs, devPtr);
}

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  return cuda_call<&cudaMalloc>(
      OpKind::CudaMalloc, [&](JsonLine& in) { in.u64("size", size); },
      [devPtr](JsonLine& out, cudaError_t) { out.ptr("ptr", devPtr != nullptr ? *devPtr : nullptr); }, devPtr, size);
}

#pragma GCC visibility pop
