// One function per collmc subcommand; each takes the arguments after its name and returns the exit code.
#pragma once
#include <string>
#include <vector>

namespace collmc::cli {

int cmd_check(const std::vector<std::string>& args);
int cmd_test(const std::vector<std::string>& args);
int cmd_replay(const std::vector<std::string>& args);
int cmd_gen(const std::vector<std::string>& args);
int cmd_shrink(const std::vector<std::string>& args);
int cmd_trace(const std::vector<std::string>& args);
int cmd_record(const std::vector<std::string>& args);
int cmd_watch(const std::vector<std::string>& args);

}  // namespace collmc::cli
