// What `collmc record` hands the program besides the recorder (traces/launch/record_launch.cpp): the
// programs a command starts, what they link, and the OpenMP runtime preloaded for a gcc -fopenmp program.
// The programs are ELF files written here with only what the dynamic linker's list needs (a dynamic section
// and its string table); the installed runtimes are files in a directory laid out as Debian's /usr/lib.
#include <elf.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collmc/traces/record_launch.h"

namespace {

namespace fs = std::filesystem;
using collmc::traces::choose_openmp_runtime;
using collmc::traces::find_llvm_libomp;
using collmc::traces::launched_programs;
using collmc::traces::needed_libraries;

// A 64-bit ELF file whose dynamic section names `needed`, executable.
void write_elf(const fs::path& file, const std::vector<std::string>& needed) {
  std::string strtab(1, '\0');
  std::vector<Elf64_Dyn> dyn;
  for (const auto& n : needed) {
    Elf64_Dyn d{};
    d.d_tag = DT_NEEDED;
    d.d_un.d_val = strtab.size();
    dyn.push_back(d);
    strtab += n + '\0';
  }
  dyn.push_back(Elf64_Dyn{});  // DT_NULL
  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  const size_t dyn_at = sizeof eh, str_at = dyn_at + dyn.size() * sizeof(Elf64_Dyn);
  eh.e_shoff = str_at + strtab.size();
  eh.e_shnum = 3;
  Elf64_Shdr sh[3] = {};
  sh[1].sh_type = SHT_DYNAMIC;
  sh[1].sh_offset = dyn_at;
  sh[1].sh_size = dyn.size() * sizeof(Elf64_Dyn);
  sh[1].sh_link = 2;
  sh[2].sh_type = SHT_STRTAB;
  sh[2].sh_offset = str_at;
  sh[2].sh_size = strtab.size();
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(&eh), sizeof eh);
  out.write(reinterpret_cast<const char*>(dyn.data()), static_cast<std::streamsize>(sh[1].sh_size));
  out.write(strtab.data(), static_cast<std::streamsize>(strtab.size()));
  out.write(reinterpret_cast<const char*>(sh), sizeof sh);
  out.close();
  fs::permissions(file, fs::perms::owner_all);
}

void touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << "not really a library\n";
}

class RecordLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("collmc-record-launch-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write_elf(dir_ / "gomp_prog", {"libmpi.so.40", "libgomp.so.1", "libc.so.6"});
    write_elf(dir_ / "plain_prog", {"libmpi.so.40", "libc.so.6"});
    std::ofstream(dir_ / "script.sh") << "#!/bin/sh\n";
    fs::permissions(dir_ / "script.sh", fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RecordLaunch, NeededLibrariesOfAnElfFileAndOfAScript) {
  EXPECT_EQ(needed_libraries(dir_ / "gomp_prog"),
            (std::vector<std::string>{"libmpi.so.40", "libgomp.so.1", "libc.so.6"}));
  EXPECT_TRUE(needed_libraries(dir_ / "script.sh").empty());
  EXPECT_TRUE(needed_libraries(dir_ / "no such file").empty());
}

// Under mpirun the programs are the arguments that name executable ELF files; the launcher's options and
// their values (a count, an MCA pair, a script) name none. Without a launcher the command is the program.
TEST_F(RecordLaunch, TheProgramsAnMpiLauncherStarts) {
  const std::string gomp = (dir_ / "gomp_prog").string(), plain = (dir_ / "plain_prog").string();
  const auto under_mpirun = launched_programs({"mpirun", "--bind-to", "none", "-np", "2", "--mca", "btl", "self", "-x",
                                               "A=1", (dir_ / "script.sh").string(), gomp, "--flag", "3"});
  ASSERT_EQ(under_mpirun.size(), 1u);
  EXPECT_EQ(under_mpirun[0], fs::path(gomp));
  const auto mpmd = launched_programs({"mpiexec", "-n", "1", plain, ":", "-n", "1", gomp});
  EXPECT_EQ(mpmd, (std::vector<fs::path>{plain, gomp}));
  const auto direct = launched_programs({plain, "-np", "2"});
  EXPECT_EQ(direct, (std::vector<fs::path>{plain}));
  EXPECT_TRUE(launched_programs({(dir_ / "missing").string()}).empty());
}

// Debian's layout: /usr/lib/llvm-N/lib/libomp.so.5 (the newest N wins), else /usr/lib/<multiarch>/libomp.so.5.
TEST_F(RecordLaunch, FindsTheNewestLlvmLibomp) {
  const fs::path usr_lib = dir_ / "usr" / "lib";
  fs::create_directories(usr_lib);
  EXPECT_EQ(find_llvm_libomp(usr_lib), "");
  touch(usr_lib / "x86_64-linux-gnu" / "libomp.so.5");
  EXPECT_EQ(find_llvm_libomp(usr_lib), (usr_lib / "x86_64-linux-gnu" / "libomp.so.5").string());
  touch(usr_lib / "llvm-9" / "lib" / "libomp.so.5");
  touch(usr_lib / "llvm-14" / "lib" / "libomp.so.5");
  touch(usr_lib / "llvm-15" / "lib" / "libomp.so");  // the development link only: not a runtime to preload
  EXPECT_EQ(find_llvm_libomp(usr_lib), (usr_lib / "llvm-14" / "lib" / "libomp.so.5").string());
}

TEST_F(RecordLaunch, ChoosesLibompForALibgompProgramOnly) {
  const fs::path usr_lib = dir_ / "usr" / "lib";
  const std::string gomp = (dir_ / "gomp_prog").string(), plain = (dir_ / "plain_prog").string();
  const std::vector<std::string> run_gomp = {"mpirun", "-np", "2", gomp}, run_plain = {"mpirun", "-np", "2", plain};
  // No libomp installed: none preloaded, and the reason says the threads are one body.
  auto none_installed = choose_openmp_runtime("", run_gomp, usr_lib);
  EXPECT_EQ(none_installed.library, "");
  EXPECT_NE(none_installed.reason.find("one body"), std::string::npos) << none_installed.reason;
  touch(usr_lib / "llvm-14" / "lib" / "libomp.so.5");
  const std::string libomp = (usr_lib / "llvm-14" / "lib" / "libomp.so.5").string();
  auto chosen = choose_openmp_runtime("", run_gomp, usr_lib);
  EXPECT_EQ(chosen.library, libomp);
  EXPECT_NE(chosen.reason.find("gomp_prog links gcc's libgomp"), std::string::npos) << chosen.reason;
  // A program without libgomp (clang's -fopenmp links libomp itself; no OpenMP at all) gets nothing.
  auto plain_choice = choose_openmp_runtime("", run_plain, usr_lib);
  EXPECT_EQ(plain_choice.library, "");
  EXPECT_EQ(plain_choice.reason, "");
  // --openmp-runtime none turns it off; --openmp-runtime LIB overrides, for any program.
  EXPECT_EQ(choose_openmp_runtime("none", run_gomp, usr_lib).library, "");
  const fs::path other = dir_ / "other" / "libomp.so";
  touch(other);
  EXPECT_EQ(choose_openmp_runtime(other.string(), run_plain, usr_lib).library, other.string());
  EXPECT_THROW(choose_openmp_runtime((dir_ / "nothing.so").string(), run_gomp, usr_lib), std::invalid_argument);
}

}  // namespace
