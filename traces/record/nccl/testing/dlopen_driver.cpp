// Loads the fake libtorch with dlopen(RTLD_LOCAL), as Python loads torch, and runs one step through it.
// This program links no NCCL itself: the (fake) NCCL is only in the local scope of that dlopen.
#include <dlfcn.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LIBFAKE_TORCH.so\n", argv[0]);
    return 2;
  }
  void* torch = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (torch == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  auto step = reinterpret_cast<int (*)(int, int)>(dlsym(torch, "fake_torch_step"));
  if (step == nullptr) return 2;
  return step(0, 1);
}
