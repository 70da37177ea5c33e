// collmc's help, version and usage errors, as a user meets them: `collmc --help`, `collmc help CMD`,
// `collmc CMD --help` for every command and generator family, `collmc --version`, unknown options.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"

namespace collmc::testing {
namespace {

using Outcome = CollmcRun;

Outcome collmc(const std::string& args) { return run_collmc(args); }

// Every option line of a Boost.ProgramOptions listing ("  --name arg (=1)   what it does") has a
// description, on its line or on the next (indented) one.
std::vector<std::string> options_without_description(const std::string& help) {
  static const std::regex option_line(R"(^  (-\w \[ )?--[\w-]+( \])?( arg| [A-Z]+)?( \(=[^)]*\))?(\s+(\S.*))?$)");
  std::vector<std::string> lines, missing;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, option_line)) continue;
    const bool here = m[6].matched;
    const bool next = i + 1 < lines.size() && lines[i + 1].rfind("      ", 0) == 0 &&
                      lines[i + 1].find_first_not_of(' ') != std::string::npos;
    if (!here && !next) missing.push_back(lines[i]);
  }
  return missing;
}

struct CommandHelp {
  std::string command;
  std::vector<std::string> options;  // some that must be listed
  std::vector<std::string> absent;   // some that must not (another family's)
};

const std::vector<CommandHelp> kCommands = {
    {"check", {"--json", "--dot", "--svg", "--html", "--full-graph", "--expect", "--max-states", "--time-limit"}, {}},
    {"test", {"--max-states", "--shortest", "--no-reduction"}, {"--json"}},
    {"replay", {"--backend", "--hang-after", "--calibrate", "--table", "--shrink"}, {}},
    {"shrink", {"--output", "--max-ranks", "--time-limit"}, {}},
    {"trace import", {"--output", "--format", "--name", "--no-origins", "--quiet"}, {}},
    {"record", {"--out", "--watch", "--on-hang", "--watch-html", "--openmp-runtime"}, {}},
    {"watch", {"--flight-recorder", "--prefix", "--world", "--on-hang", "--time-limit"}, {}},
    {"gen ring", {"--comms", "--agreed", "--profile", "--output", "--ranks", "--world"}, {"--tp", "--groups"}},
    {"gen megatron",
     {"--world", "--tp", "--cp", "--pp", "--ep", "--etp", "--dist-opt-instances", "--ubr-groups", "--order",
      "--late-segments", "--collectives"},
     {"--agreed", "--groups", "--sorted"}},
    {"gen pytorch-pool", {"--ranks", "--world", "--groups", "--order", "--late-segments"}, {"--tp"}},
    {"gen hook-fanout", {"--ranks", "--world", "--comms", "--sorted"}, {"--agreed"}},
};

TEST(CliHelp, AnUndescribedOptionIsNoticed) {
  EXPECT_EQ(options_without_description("options:\n  --tp arg (=1)\n  --cp arg (=1)         context-parallel size\n"),
            std::vector<std::string>{"  --tp arg (=1)"});
}

TEST(CliHelp, EveryCommandAndFamilyPrintsItsUsageAndEveryOptionDescribed) {
  for (const auto& c : kCommands) {
    const Outcome r = collmc(c.command + " --help");
    EXPECT_EQ(r.status, 0) << c.command << "\n" << r.all;
    EXPECT_EQ(r.out.rfind("usage: collmc " + c.command, 0), 0u) << c.command << "\n" << r.out;
    EXPECT_NE(r.out.find("--help"), std::string::npos) << c.command;
    for (const auto& option : c.options) EXPECT_NE(r.out.find(option), std::string::npos) << c.command << " " << option;
    for (const auto& option : c.absent)
      EXPECT_EQ(r.out.find(option + " "), std::string::npos) << c.command << " lists " << option << "\n" << r.out;
    EXPECT_EQ(options_without_description(r.out), std::vector<std::string>{}) << c.command << "\n" << r.out;
    EXPECT_EQ(r.out.find("--file "), std::string::npos) << "positional arguments are not options: " << r.out;
    EXPECT_EQ(collmc(c.command + " -h").out, r.out) << c.command;
  }
}

TEST(CliHelp, HelpCommandIsTheSameAsDashDashHelp) {
  for (const char* command : {"check", "gen megatron", "trace import", "record", "gen", "trace"}) {
    const Outcome help = collmc(std::string("help ") + command);
    EXPECT_EQ(help.status, 0) << command;
    EXPECT_EQ(help.out, collmc(std::string(command) + " --help").out) << command;
  }
}

TEST(CliHelp, HelpNeedsNoOtherArgumentsAndWinsOverThem) {
  // `check` needs a file, `shrink` needs -o; asking for help needs neither.
  EXPECT_EQ(collmc("check --help").status, 0);
  EXPECT_EQ(collmc("shrink --help").status, 0);
  EXPECT_EQ(collmc("check /nonexistent.cmc --help").status, 0);
}

TEST(CliHelp, OverviewListsEveryCommand) {
  for (const char* args : {"--help", "-h", "help"}) {
    const Outcome r = collmc(args);
    EXPECT_EQ(r.status, 0) << args;
    for (const char* command : {"check", "test", "replay", "gen", "shrink", "trace import", "record", "watch"})
      EXPECT_NE(r.out.find(std::string("collmc ") + command), std::string::npos) << args << " " << command;
    EXPECT_NE(r.out.find("exit: 0 safe, 1 violation, 2 bad input, 3 inconclusive"), std::string::npos) << r.out;
  }
  // Without a command: the overview on stderr, exit 2.
  const Outcome bare = collmc("");
  EXPECT_EQ(bare.status, 2);
  EXPECT_EQ(bare.out, "");
  EXPECT_NE(bare.all.find("collmc check"), std::string::npos);
}

TEST(CliHelp, GenAndTraceListTheirFamiliesAndCommands) {
  const Outcome gen = collmc("gen --help");
  EXPECT_EQ(gen.status, 0);
  for (const char* family : {"ring", "megatron", "pytorch-pool", "hook-fanout"})
    EXPECT_NE(gen.out.find(std::string("  ") + family + "\n"), std::string::npos) << family << "\n" << gen.out;
  const Outcome trace = collmc("trace --help");
  EXPECT_EQ(trace.status, 0);
  EXPECT_NE(trace.out.find("  import\n"), std::string::npos) << trace.out;
}

TEST(CliHelp, VersionNamesCollmcAndWhatItWasBuiltAgainst) {
  for (const char* args : {"--version", "version"}) {
    const Outcome r = collmc(args);
    EXPECT_EQ(r.status, 0) << args;
    EXPECT_EQ(r.out.rfind("collmc 0.", 0), 0u) << r.out;
    for (const char* line : {"\n  NCCL: ", "\n  CUDA: ", "\n  MPI: "})
      EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
#ifdef COLLMC_HAVE_NCCL
    EXPECT_NE(r.out.find("\n  NCCL: 2."), std::string::npos) << r.out;
#else
    EXPECT_NE(r.out.find("\n  NCCL: (not found at build time"), std::string::npos) << r.out;
#endif
  }
}

TEST(CliHelp, UnknownOptionsExitTwoWithTheUsageAndAHint) {
  struct Case {
    std::string args, usage, hint;
  };
  const std::vector<Case> cases = {
      {"check --frobnicate x.cmc", "usage: collmc check FILE...", "see `collmc check --help`"},
      {"test --frobnicate .", "usage: collmc test PATH...", "see `collmc test --help`"},
      {"replay --frobnicate x.cmc", "usage: collmc replay", "see `collmc replay --help`"},
      {"shrink --frobnicate x.cmc", "usage: collmc shrink", "see `collmc shrink --help`"},
      {"trace import --frobnicate x", "usage: collmc trace import", "see `collmc trace import --help`"},
      {"record --frobnicate -- true", "usage: collmc record", "see `collmc record --help`"},
      {"gen megatron --frobnicate", "usage: collmc gen megatron", "see `collmc gen megatron --help`"},
      // An option of another family is unknown to this one.
      {"gen ring --tp 4", "usage: collmc gen ring", "see `collmc gen ring --help`"},
  };
  for (const auto& c : cases) {
    const Outcome r = collmc(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.all;
    EXPECT_EQ(r.out, "") << c.args << ": errors go to stderr";
    EXPECT_NE(r.all.find("unrecognised option '--"), std::string::npos) << c.args << "\n" << r.all;
    EXPECT_NE(r.all.find(c.usage), std::string::npos) << c.args << "\n" << r.all;
    EXPECT_NE(r.all.find(c.hint), std::string::npos) << c.args << "\n" << r.all;
  }
  const Outcome family = collmc("gen frobnicate");
  EXPECT_EQ(family.status, 2);
  EXPECT_NE(family.all.find("unknown family 'frobnicate'"), std::string::npos) << family.all;
  EXPECT_NE(family.all.find("see `collmc gen --help`"), std::string::npos) << family.all;
}

// What bash would offer after the words typed so far (the last one being completed).
std::string completions(const std::string& line) {
  const std::string script = source_dir() + "/cli/collmc-completion.bash";
  std::string out;
  run_command("bash -c 'source " + script + "; COMP_WORDS=(" + collmc_binary() + " " + line +
                  "); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _collmc; printf \"%s\\n\" \"${COMPREPLY[@]}\"'",
              &out);
  return out;
}

TEST(CliHelp, BashCompletionOffersCommandsFamiliesAndOptionsFromTheHelp) {
  EXPECT_NE(completions("ch").find("check\n"), std::string::npos) << completions("ch");
  EXPECT_NE(completions("gen meg").find("megatron\n"), std::string::npos) << completions("gen meg");
  EXPECT_NE(completions("trace i").find("import\n"), std::string::npos) << completions("trace i");
  const std::string check = completions("check --");
  for (const char* option : {"--json\n", "--html\n", "--max-states\n", "--help\n"})
    EXPECT_NE(check.find(option), std::string::npos) << option << "\n" << check;
  const std::string megatron = completions("gen megatron --t");
  EXPECT_NE(megatron.find("--tp\n"), std::string::npos) << megatron;
  EXPECT_EQ(megatron.find("--agreed"), std::string::npos) << megatron;
  EXPECT_NE(completions("record --").find("--out\n"), std::string::npos);
}

}  // namespace
}  // namespace collmc::testing
