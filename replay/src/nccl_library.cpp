#include "nccl_library.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>

namespace collmc::replay {

namespace {

#ifndef COLLMC_NCCL_BUILD_LIBRARY
#define COLLMC_NCCL_BUILD_LIBRARY ""
#endif

void* open_library(std::string& error) {
  if (const char* chosen = std::getenv(kNcclLibraryVariable); chosen && *chosen) {
    // The user's choice, or nothing: a fallback would run another NCCL than the one asked for.
    void* h = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
    if (!h) error = std::string("cannot load ") + chosen + " (" + kNcclLibraryVariable + "): " + dlerror();
    return h;
  }
  if (void* h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL)) return h;
  error = std::string("cannot load libnccl.so.2: ") + dlerror();
  if (*COLLMC_NCCL_BUILD_LIBRARY)
    if (void* h = dlopen(COLLMC_NCCL_BUILD_LIBRARY, RTLD_NOW | RTLD_LOCAL)) return h;
  error += " (install NCCL, or name a libnccl with --nccl LIB)";
  return nullptr;
}

NcclLibrary load() {
  NcclLibrary lib;
  void* handle = open_library(lib.error);
  if (!handle) return lib;
#define COLLMC_NCCL_FUNCTION(name, since) lib.name = reinterpret_cast<decltype(lib.name)>(dlsym(handle, #name));
#define COLLMC_NCCL_NEWER(name, since) lib.name = reinterpret_cast<decltype(lib.name)>(dlsym(handle, #name));
#include "nccl_functions.def"
#undef COLLMC_NCCL_FUNCTION
#undef COLLMC_NCCL_NEWER
  if (!lib.ncclGetVersion || lib.ncclGetVersion(&lib.version) != ncclSuccess) {
    lib = NcclLibrary{};
    lib.error = "the loaded library has no working ncclGetVersion: not an NCCL";
    return lib;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(lib.ncclGetVersion), &info) && info.dli_fname) {
    char real[PATH_MAX];
    lib.path = realpath(info.dli_fname, real) ? real : info.dli_fname;
  }
  return lib;
}

}  // namespace

const NcclLibrary& nccl_library() {
  static const NcclLibrary lib = load();
  return lib;
}

NcclProbe probe_nccl_here() {
  NcclProbe probe;
  const NcclLibrary& lib = nccl_library();
  if (!lib.error.empty()) {
    probe.error = lib.error;
    return probe;
  }
  probe.version = lib.version;
  probe.library = lib.path;
  for (const auto& function : nccl_functions()) {
    bool present = false;
#define COLLMC_NCCL_FUNCTION(fn, since) present = present || (function.name == #fn && lib.fn != nullptr);
#define COLLMC_NCCL_NEWER(fn, since) present = present || (function.name == #fn && lib.fn != nullptr);
#include "nccl_functions.def"
#undef COLLMC_NCCL_FUNCTION
#undef COLLMC_NCCL_NEWER
    if (!present) probe.missing.emplace_back(function.name);
  }
  int gpus = 0;
  if (cudaError_t e = cudaGetDeviceCount(&gpus); e != cudaSuccess) {
    // No driver at all reads as "insufficient driver" in the runtime's words: say what it means.
    // With no driver at all the runtime says "insufficient driver": tell the two apart.
    void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!driver)
      probe.error = std::string("no NVIDIA driver found (libcuda.so.1 is not installed; ") + cudaGetErrorName(e) + ")";
    else if (e == cudaErrorNoDevice)
      probe.error = std::string("no GPU found (") + cudaGetErrorName(e) + ")";
    else
      probe.error = std::string("no usable GPU (") + cudaGetErrorString(e) + ")";
    if (driver) dlclose(driver);
    return probe;
  }
  probe.gpus = gpus;
  return probe;
}

}  // namespace collmc::replay
