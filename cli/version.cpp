#include "version.h"

namespace collmc::cli {

std::string version_text() {
  const BuildVersions& v = build_versions();
  auto line = [](const char* what, const std::string& version, const char* without) {
    return std::string("  ") + what + ": " + (version.empty() ? without : version) + "\n";
  };
  // NCCL's is the headers' version: the replay loads libnccl at run time (replay/src/nccl_library.h).
  const std::string nccl =
      *v.nccl ? std::string(v.nccl) + " (headers; the replay loads libnccl.so.2, or --nccl LIB)" : "";
  return "collmc " + std::string(v.collmc) + "\nbuilt against:\n" +
         line("NCCL", nccl, "(not found at build time: no NCCL replay)") +
         line("CUDA", v.cuda, "(not found at build time: no NCCL replay)") +
         line("MPI", v.mpi, "(not found at build time: no MPI replay)");
}

}  // namespace collmc::cli
