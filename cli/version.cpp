#include "version.h"

namespace collmc::cli {

std::string version_text() {
  const BuildVersions& v = build_versions();
  auto line = [](const char* what, const char* version, const char* without) {
    return std::string("  ") + what + ": " + (*version ? version : without) + "\n";
  };
  return "collmc " + std::string(v.collmc) + "\nbuilt against:\n" +
         line("NCCL", v.nccl, "(not found at build time: no NCCL replay)") +
         line("CUDA", v.cuda, "(not found at build time: no NCCL replay)") +
         line("MPI", v.mpi, "(not found at build time: no MPI replay)");
}

}  // namespace collmc::cli
