// collmc record [--out DIR] -- PROGRAM ARGS...: runs PROGRAM with the recorder (libcollmc_record.so)
// preloaded, so every process it starts writes DIR/collmc-trace.<host>.<pid>.jsonl; then lists the
// files written and exits as the program did.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "cli_common.h"
#include "commands.h"

namespace collmc::cli {
namespace {

namespace fs = std::filesystem;

// $COLLMC_RECORDER, else one next to the binary or installed with it, else the one built with it.
std::string find_recorder() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("COLLMC_RECORDER"); env != nullptr && *env != '\0') {
    if (!fs::is_regular_file(env)) throw std::runtime_error(std::string("$COLLMC_RECORDER names no file: ") + env);
    return fs::absolute(env).string();
  }
  // Relative to this binary first, so that an installed collmc uses the recorder installed with it.
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(exe.parent_path() / "libcollmc_record.so");
    candidates.push_back(exe.parent_path() / COLLMC_RECORDER_FROM_BINARY / "libcollmc_record.so");
  }
#ifdef COLLMC_RECORDER_PATH
  candidates.emplace_back(COLLMC_RECORDER_PATH);
#endif
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return c.string();
  throw std::runtime_error(
      "cannot find libcollmc_record.so (built with collmc when the CUDA/NCCL headers are found); "
      "set COLLMC_RECORDER to its path");
}

std::set<std::string> trace_files_in(const fs::path& dir) {
  std::set<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("collmc-trace.", 0) == 0 && e.path().extension() == ".jsonl") files.insert(e.path().string());
  }
  return files;
}

size_t count_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

}  // namespace

int cmd_record(const std::vector<std::string>& args) {
  po::options_description d;
  d.add_options()("out,o", po::value<std::string>()->default_value("collmc-traces")->value_name("DIR"),
                  "directory for the trace files (collmc-trace.<host>.<pid>.jsonl, one per process)");
  const auto [vm, program] = parse_before_program(args, d, "record needs a program: collmc record -- PROGRAM ARGS...");
  const std::string out_dir = vm["out"].as<std::string>();

  const std::string recorder = find_recorder();
  fs::create_directories(out_dir);
  const fs::path dir = fs::absolute(out_dir);  // absolute: the program may change directory
  const std::set<std::string> before = trace_files_in(dir);

  std::string preload = recorder;
  if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != '\0')
    preload = std::string(old) + ":" + recorder;

  // Like system(3): the program gets the terminal's signals, collmc waits for it.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv("COLLMC_TRACE_DIR", dir.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : program) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::cerr << "collmc record: cannot run '" << program[0] << "': " << std::strerror(errno) << "\n";
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);

  std::vector<std::string> written;
  for (const auto& f : trace_files_in(dir))
    if (!before.count(f)) written.push_back(f);
  std::cerr << "collmc record: " << written.size() << " trace file" << (written.size() == 1 ? "" : "s") << " in "
            << dir.string()
            << (written.empty() ? " (the program made no NCCL or CUDA runtime call the recorder sees)" : "") << "\n";
  for (const auto& f : written) std::cerr << "  " << f << " (" << count_lines(f) << " lines)\n";
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    std::cerr << "collmc record: the program was killed by signal " << WTERMSIG(status) << "\n";
    return 128 + WTERMSIG(status);
  }
  return 1;
}

}  // namespace collmc::cli
