#include "test_support.h"

#include <sys/wait.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <unistd.h>

namespace collmc::testing {

model::World world_from(const std::string& text) { return model::resolve(model::parse_string(text, "test.cmc")); }

checker::CheckResult check_text(const std::string& text, const checker::SearchOptions& options) {
  static thread_local model::World world;  // CheckResult points into its world
  world = world_from(text);
  return checker::check(world, options);
}

model::Verdict verdict_of(const std::string& text, const checker::SearchOptions& options) {
  return check_text(text, options).verdict;
}

std::string verdict_str(const std::string& text) { return std::string(model::verdict_name(verdict_of(text))); }

std::string source_dir() { return COLLMC_SOURCE_DIR; }

std::string gpu_calibration_dir() { return source_dir() + "/tests/calibration-2gpu"; }
std::string mpi_calibration_dir() { return source_dir() + "/tests/calibration-mpi"; }

std::string collmc_binary() { return COLLMC_BINARY; }

int run_command(const std::string& command, std::string* output) {
  std::string cmd = command + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return -1;
  char buf[4096];
  std::string out;
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  if (output) *output = out;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string fresh_scratch_dir(const std::string& name, bool create) {
  namespace fs = std::filesystem;
  static const struct Root {
    fs::path path;
    ~Root() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  } root{fs::temp_directory_path() / ("collmc-test-" + std::to_string(getpid()))};
  const fs::path dir = root.path / name;
  fs::remove_all(dir);
  fs::create_directories(create ? dir : dir.parent_path());
  return dir.string();
}

CollmcRun run_collmc(const std::string& args) {
  CollmcRun r;
  const std::string err = fresh_scratch_dir("stderr", false);
  r.status = run_command("(" + collmc_binary() + " " + args + " 2>" + err + ")", &r.out);
  std::ifstream in(err);
  std::stringstream e;
  e << in.rdbuf();
  r.all = r.out + e.str();
  std::remove(err.c_str());
  return r;
}

}  // namespace collmc::testing
