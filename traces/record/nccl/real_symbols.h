// Finding the real NCCL and CUDA runtime functions behind the recorder's interposers, lazily and
// thread-safely, without linking either library.
#pragma once

#include <atomic>

namespace collmc::recorder {

enum class Library { Nccl, Cudart };

// The real `name`: first dlsym(RTLD_NEXT) (the library the program linked, found after the preloaded
// recorder), then, for programs that load NCCL or the CUDA runtime with dlopen(RTLD_LOCAL) as Python
// extension modules do (RTLD_NEXT does not see into such local scopes), the already-loaded libraries,
// those whose file name contains "nccl" / "cudart" first, each opened with RTLD_NOLOAD. Null when none
// has it. Never returns the recorder's own function.
void* resolve_real(const char* name, Library library);

// `resolve_real` once per function; racing first calls resolve the same pointer, so a relaxed cache will do.
template <class Fn>
Fn real_function(std::atomic<void*>& cache, const char* name, Library library) {
  void* p = cache.load(std::memory_order_acquire);
  if (p == nullptr) {
    p = resolve_real(name, library);
    cache.store(p, std::memory_order_release);
  }
  return reinterpret_cast<Fn>(p);
}

// Says once per process on stderr that `name` has no real implementation to call.
void report_missing(const char* name);

}  // namespace collmc::recorder

// The real function `fn` (an interposed name declared by nccl.h or cuda_runtime_api.h), or null.
#define COLLMC_REAL(fn, library)                                                    \
  ([] {                                                                             \
    static std::atomic<void*> cache{nullptr};                                       \
    return ::collmc::recorder::real_function<decltype(&::fn)>(cache, #fn, library); \
  }())
