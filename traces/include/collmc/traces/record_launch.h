// What `collmc record` hands the program it starts besides the recorder (traces/launch/record_launch.cpp):
// the programs a command line starts (itself, or the ones an MPI launcher starts), what they link, and the
// OpenMP runtime preloaded so that the MPI recorder's OMPT tool sees a gcc -fopenmp program's threads
// (docs/TRACES.md, "OpenMP threads"). It runs inside collmc, never in the recorded program.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace collmc::traces {

// `name` as execvp would find it on `path` (a PATH value), or "" when it is not there.
std::filesystem::path on_path(const std::string& name, const std::string& path);
// The same on $PATH (/usr/bin:/bin when unset).
std::filesystem::path on_path(const std::string& name);

// The DT_NEEDED names of a 64-bit ELF file (empty for anything else: a script, a 32-bit program).
std::vector<std::string> needed_libraries(const std::filesystem::path& file);

// mpirun, mpiexec, orterun, prterun, and their suffixed names (mpirun.openmpi).
bool is_mpi_launcher(const std::string& program);

// The executables a command starts: the command itself, or under an MPI launcher every argument that names
// an executable ELF file (the launcher's options and their values name none; an MPMD line names several).
std::vector<std::filesystem::path> launched_programs(const std::vector<std::string>& command);

// LLVM's libomp.so.5 installed under `usr_lib` (Debian: /usr/lib/llvm-N/lib, the newest N first, then
// /usr/lib/<multiarch>/libomp.so.5), or "" when there is none.
std::string find_llvm_libomp(const std::filesystem::path& usr_lib = "/usr/lib");

// The OpenMP runtime to preload, and why.
struct OpenMpRuntime {
  std::string library;  // "": none preloaded
  std::string reason;   // for record's output: why this one, or why none although the program uses OpenMP
};

// `option`: --openmp-runtime's value ("" when not given; "none": never preload). Not given: LLVM's libomp
// (found under `usr_lib`) when a program the command starts links gcc's libgomp, which has no OMPT (OpenMP
// 5.1 sec. 4.2.1), so that the recorder's tool gets the threads' synchronization; libomp also implements
// libgomp's GOMP_* entry points, and preloaded first its definitions win. A LIB given that is no file:
// std::invalid_argument.
OpenMpRuntime choose_openmp_runtime(const std::string& option, const std::vector<std::string>& command,
                                    const std::filesystem::path& usr_lib = "/usr/lib");

}  // namespace collmc::traces
