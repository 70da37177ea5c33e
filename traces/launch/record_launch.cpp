// What `collmc record` hands the program besides the recorder (collmc/traces/record_launch.h).
#include "collmc/traces/record_launch.h"

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <utility>

namespace collmc::traces {

namespace fs = std::filesystem;

fs::path on_path(const std::string& name, const std::string& dirs) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return fs::exists(name) ? fs::path(name) : fs::path();
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = dirs.find(':', start);
    const std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return {};
}

fs::path on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  return on_path(name, path != nullptr ? path : "/usr/bin:/bin");
}

std::vector<std::string> needed_libraries(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> out;
  if (bytes.size() < sizeof(Elf64_Ehdr) ||
      bytes.compare(0, 4,
                    "\x7f"
                    "ELF") != 0 ||
      bytes[EI_CLASS] != ELFCLASS64)
    return out;
  Elf64_Ehdr eh;
  std::memcpy(&eh, bytes.data(), sizeof eh);
  auto section = [&](size_t i) {
    Elf64_Shdr sh{};
    const size_t at = eh.e_shoff + i * sizeof(Elf64_Shdr);
    if (at + sizeof sh <= bytes.size()) std::memcpy(&sh, bytes.data() + at, sizeof sh);
    return sh;
  };
  for (size_t i = 0; i < eh.e_shnum; ++i) {
    const Elf64_Shdr dyn = section(i);
    if (dyn.sh_type != SHT_DYNAMIC || dyn.sh_link >= eh.e_shnum) continue;
    const Elf64_Shdr str = section(dyn.sh_link);
    for (size_t at = dyn.sh_offset;
         at + sizeof(Elf64_Dyn) <= std::min<size_t>(bytes.size(), dyn.sh_offset + dyn.sh_size);
         at += sizeof(Elf64_Dyn)) {
      Elf64_Dyn d;
      std::memcpy(&d, bytes.data() + at, sizeof d);
      if (d.d_tag == DT_NULL) break;
      const size_t name_at = str.sh_offset + d.d_un.d_val;
      if (d.d_tag == DT_NEEDED && name_at < bytes.size()) out.emplace_back(bytes.c_str() + name_at);
    }
  }
  return out;
}

bool is_mpi_launcher(const std::string& program) {
  const std::string base = fs::path(program).filename().string();
  return base == "mpirun" || base == "mpiexec" || base == "orterun" || base == "prterun" ||
         base.rfind("mpirun.", 0) == 0 || base.rfind("mpiexec.", 0) == 0;
}

namespace {

bool is_elf(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, sizeof magic) && std::memcmp(magic,
                                                     "\x7f"
                                                     "ELF",
                                                     4) == 0;
}

// A program that links gcc's OpenMP runtime (libgomp.so.1; -fopenmp links it directly).
bool links_libgomp(const fs::path& program) {
  const auto libs = needed_libraries(program);
  return std::any_of(libs.begin(), libs.end(), [](const std::string& l) { return l.rfind("libgomp.so", 0) == 0; });
}

// N of a directory named llvm-N (-1 for another name).
int llvm_version(const std::string& dir) {
  if (dir.rfind("llvm-", 0) != 0 || dir.size() == 5) return -1;
  int v = 0;
  for (char ch : dir.substr(5)) {
    if (ch < '0' || ch > '9') return -1;
    v = v * 10 + (ch - '0');
  }
  return v;
}

}  // namespace

std::vector<fs::path> launched_programs(const std::vector<std::string>& command) {
  std::vector<fs::path> out;
  if (command.empty()) return out;
  if (!is_mpi_launcher(command[0])) {
    if (fs::path p = on_path(command[0]); !p.empty()) out.push_back(p);
    return out;
  }
  // mpirun's options take values ("-np 2", "--mca btl self", "-x VAR"): none of them names an executable ELF
  // file, so every argument that does is a program the launcher starts.
  for (size_t i = 1; i < command.size(); ++i) {
    const std::string& a = command[i];
    if (a.empty() || a[0] == '-' || a == ":") continue;
    const fs::path p = on_path(a);
    std::error_code ec;
    if (!p.empty() && fs::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0 && is_elf(p)) out.push_back(p);
  }
  return out;
}

std::string find_llvm_libomp(const fs::path& usr_lib) {
  std::vector<std::pair<int, fs::path>> llvm;  // (N, its libomp.so.5)
  std::vector<fs::path> multiarch;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(usr_lib, ec)) {
    const std::string name = e.path().filename().string();
    if (const int v = llvm_version(name); v >= 0) {
      if (fs::is_regular_file(e.path() / "lib" / "libomp.so.5", ec))
        llvm.emplace_back(v, e.path() / "lib" / "libomp.so.5");
    } else if (name.find("-linux-") != std::string::npos && fs::is_regular_file(e.path() / "libomp.so.5", ec)) {
      multiarch.push_back(e.path() / "libomp.so.5");
    }
  }
  std::sort(llvm.begin(), llvm.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::sort(multiarch.begin(), multiarch.end());
  if (!llvm.empty()) return llvm.front().second.string();
  if (!multiarch.empty()) return multiarch.front().string();
  return "";
}

OpenMpRuntime choose_openmp_runtime(const std::string& option, const std::vector<std::string>& command,
                                    const fs::path& usr_lib) {
  if (option == "none") return {"", "--openmp-runtime none"};
  if (!option.empty()) {
    const std::string lib = fs::absolute(option).string();
    std::error_code ec;
    if (!fs::is_regular_file(lib, ec)) throw std::invalid_argument("--openmp-runtime: no such library file: " + lib);
    return {lib, "--openmp-runtime"};
  }
  for (const auto& program : launched_programs(command)) {
    if (!links_libgomp(program)) continue;
    const std::string libomp = find_llvm_libomp(usr_lib);
    const std::string name = program.filename().string();
    if (libomp.empty())
      return {"", name +
                      " links gcc's libgomp, which has no OMPT, and no LLVM libomp.so.5 is installed (apt install "
                      "libomp5): its threads are recorded as one body per process"};
    return {libomp, name + " links gcc's libgomp, which has no OMPT"};
  }
  return {};
}

}  // namespace collmc::traces
