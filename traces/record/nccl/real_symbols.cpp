#include "real_symbols.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstring>

namespace collmc::recorder {
namespace {

// The recorder's own load address, to tell its interposers from the real functions.
const void* own_base() {
  static const void* base = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void*>(&own_base), &info) != 0 ? info.dli_fbase : nullptr;
  }();
  return base;
}

bool is_own(void* p) {
  Dl_info info{};
  return dladdr(p, &info) != 0 && info.dli_fbase == own_base();
}

// Loaded shared objects, those whose file name contains `hint` first.
struct Candidates {
  static constexpr int kMax = 64;
  const char* hint;
  char paths[kMax][512];
  int count = 0;
  int hinted = 0;
};

int collect(dl_phdr_info* info, size_t, void* data) {
  auto* c = static_cast<Candidates*>(data);
  const char* path = info->dlpi_name;
  if (path == nullptr || *path == '\0' || c->count == Candidates::kMax || strlen(path) >= sizeof c->paths[0]) return 0;
  const char* base = strrchr(path, '/');
  base = base != nullptr ? base + 1 : path;
  if (strstr(base, c->hint) != nullptr) {
    // Move the first unhinted entry out of the way to keep hinted ones in front.
    if (c->hinted < c->count) memcpy(c->paths[c->count], c->paths[c->hinted], sizeof c->paths[0]);
    memcpy(c->paths[c->hinted++], path, strlen(path) + 1);
  } else {
    memcpy(c->paths[c->count], path, strlen(path) + 1);
  }
  ++c->count;
  return 0;
}

}  // namespace

void* resolve_real(const char* name, Library library) {
  void* p = dlsym(RTLD_NEXT, name);
  if (p != nullptr && !is_own(p)) return p;
  // dlopen must not run inside dl_iterate_phdr (it holds the loader lock): collect the names first.
  Candidates c;
  c.hint = library == Library::Nccl ? "nccl" : "cudart";
  dl_iterate_phdr(collect, &c);
  for (int i = 0; i < c.count; ++i) {
    void* handle = dlopen(c.paths[i], RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    p = dlsym(handle, name);
    dlclose(handle);  // only drops the reference RTLD_NOLOAD took; the library stays loaded
    if (p != nullptr && !is_own(p)) return p;
  }
  return nullptr;
}

void report_missing(const char* name) {
  static std::atomic<bool> said{false};
  if (said.exchange(true)) return;
  const char* head = "collmc recorder: no real ";
  const char* tail = " in this process (is NCCL / the CUDA runtime loaded?); the call fails\n";
  ssize_t ignored = write(2, head, strlen(head));
  ignored = write(2, name, strlen(name));
  ignored = write(2, tail, strlen(tail));
  (void)ignored;
}

}  // namespace collmc::recorder
