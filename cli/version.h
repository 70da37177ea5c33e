// `collmc --version`: what this binary is and what it was built against.
#pragma once

#include <string>

namespace collmc::cli {

struct BuildVersions {
  const char* collmc;  // the project version and `git describe` of the checkout it was built from
  const char* nccl;    // the NCCL headers the replay backend was compiled against; empty: not built
  const char* cuda;    // the CUDA runtime linked into it; empty: not built
  const char* mpi;     // the MPI library collmc-mpi-rank was built with; empty: not built
};

// Generated at build time (cmake/collmc_version.cmake).
const BuildVersions& build_versions();

// The text `collmc --version` prints, one line per component.
std::string version_text();

}  // namespace collmc::cli
