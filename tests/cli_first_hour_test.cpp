// What a new user meets in the first hour (issue 24, the review of 2026-12-02): exit statuses that do
// not depend on argument order, Ctrl-C that keeps the work done, output paths checked first, `-` for
// stdin and stdout, refused nonsense values, "did you mean", help footers with each command's exit
// statuses, generators that work with their own defaults, and `record` that does not mix two runs.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_support.h"

namespace collmc::testing {
namespace {

using Outcome = CollmcRun;

Outcome collmc(const std::string& args) { return run_collmc(args); }

std::string write_scenario(const std::string& name, const std::string& text) {
  std::string path = fresh_scratch_dir("scenario-" + name) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

const char* const kDeadlock =
    "ranks 2\nexpect deadlock\ncomm A = [0, 1]\ncomm B = [0, 1]\n"
    "rank 0 {\n  alloc wa\n  register A wa\n  register B wa\n}\n"
    "rank 1 {\n  alloc wb\n  register B wb\n  register A wb\n}\n";

// A safe scenario whose full search (no reduction) takes far longer than the tests wait.
std::string long_search() {
  static const std::string path = [] {
    std::string p = fresh_scratch_dir("long") + "/long.cmc";
    std::string out;
    EXPECT_EQ(run_command(collmc_binary() +
                              " gen megatron --world 16 --tp 2 --cp 2 --ep 4 --dist-opt-instances 2 --late-segments "
                              "all --order sorted -o " +
                              p,
                          &out),
              0)
        << out;
    return p;
  }();
  return path;
}

TEST(CliFirstHour, TheMostSevereExitStatusWinsWhateverTheOrder) {
  const std::string dl = write_scenario("dl.cmc", kDeadlock);
  const std::string empty = write_scenario("empty.cmc", "");
  EXPECT_EQ(collmc("check --quiet /nonexistent.cmc " + dl).status, 2);
  EXPECT_EQ(collmc("check --quiet " + dl + " /nonexistent.cmc").status, 2);
  EXPECT_EQ(collmc("check --quiet " + empty + " " + dl).status, 2);
  EXPECT_EQ(collmc("check --quiet " + dl + " " + empty).status, 2);
  // A violation outranks an inconclusive file, in either order.
  const std::string slow = long_search();
  EXPECT_EQ(collmc("check --quiet --no-reduction --max-states 50 " + slow + " " + dl).status, 1);
  EXPECT_EQ(collmc("check --quiet --no-reduction --max-states 50 " + dl + " " + slow).status, 1);
  EXPECT_EQ(collmc("check --quiet --no-reduction --max-states 50 " + slow).status, 3);
}

TEST(CliFirstHour, TestExitsTwoForBadInputAndNamesAnEmptyDirectory) {
  Outcome r = collmc("test /nonexistent/dir");
  EXPECT_EQ(r.status, 2) << r.all;
  EXPECT_NE(r.all.find("No such file or directory"), std::string::npos) << r.all;
  const std::string empty_dir = fresh_scratch_dir("empty_dir");
  r = collmc("test " + empty_dir);
  EXPECT_EQ(r.status, 2) << r.all;
  EXPECT_NE(r.all.find("no .cmc files under " + empty_dir), std::string::npos) << r.all;
  const std::string broken = write_scenario("broken.cmc", "ranks 2\nrank 0 {\n  frob\n}\n");
  r = collmc("test " + broken + " " + write_scenario("dl.cmc", kDeadlock));
  EXPECT_EQ(r.status, 2) << r.all;
  EXPECT_NE(r.all.find("FAIL"), std::string::npos) << r.all;
  // A disagreement alone is 1.
  EXPECT_EQ(
      collmc("test " + write_scenario("wrong.cmc", std::string(kDeadlock).replace(8, 15, "expect safe    "))).status,
      1);
}

TEST(CliFirstHour, InconclusiveIsNotProvenAndQuietExpectSaysWhatWasExpected) {
  const std::string slow = long_search();  // it says `expect safe`
  Outcome r = collmc("check --expect --no-reduction --max-states 50 " + slow);
  EXPECT_EQ(r.status, 3) << r.all;
  EXPECT_NE(r.out.find("(not proven)"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DISAGREES"), std::string::npos) << r.out;
  const std::string wrong = write_scenario("wrong.cmc", std::string(kDeadlock).replace(8, 15, "expect safe    "));
  r = collmc("check --expect --quiet " + wrong);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find(wrong + ": deadlock (expected safe: DISAGREES)"), std::string::npos) << r.out;
}

TEST(CliFirstHour, CtrlCStopsTheSearchKeepsItsStatisticsAndWritesTheFiles) {
  const std::string dir = fresh_scratch_dir("sigint", true);
  const std::string json = dir + "/r.json";
  // A background job of a script ignores SIGINT until the program installs its handler: wait until
  // /proc says it catches SIGINT (bit 2 of SigCgt), whatever the load, then let it search a while.
  // --time-limit ends the search should the signal be lost, so the test fails instead of hanging.
  std::ofstream(dir + "/run.sh") << collmc_binary() << " check " << long_search()
                                 << " --no-reduction --time-limit 120 --json " << json << " &\n"
                                 << "pid=$!\n"
                                 << "for i in $(seq 200); do\n"
                                 << "  cgt=$(awk '/^SigCgt/ {print $2}' /proc/$pid/status)\n"
                                 << "  [ $((0x$cgt & 2)) -ne 0 ] && break\n"
                                 << "  sleep 0.1\n"
                                 << "done\n"
                                 << "sleep 1\n"
                                 << "kill -INT $pid\n"
                                 << "wait $pid\n"
                                 << "echo rc=$?\n";
  std::string out;
  const int status = run_command("sh " + dir + "/run.sh", &out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("rc=130"), std::string::npos) << out;
  EXPECT_NE(out.find(": inconclusive"), std::string::npos) << out;
  EXPECT_NE(out.find("inconclusive (interrupted)"), std::string::npos) << out;
  EXPECT_NE(out.find("states"), std::string::npos) << out;
  std::ifstream in(json);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("\"inconclusive\""), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\"interrupted\""), std::string::npos) << text.str();
}

TEST(CliFirstHour, OutputPathsAreCheckedBeforeTheSearchWithTheSystemsReason) {
  const auto start = std::chrono::steady_clock::now();
  Outcome r = collmc("check " + long_search() + " --no-reduction --time-limit 20 --json /nonexistent/x.json");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  EXPECT_EQ(r.status, 2) << r.all;
  EXPECT_NE(r.all.find("cannot write /nonexistent/x.json: No such file or directory"), std::string::npos) << r.all;
  EXPECT_EQ(r.out.find("inconclusive"), std::string::npos) << "searched first:\n" << r.all;
  const std::string dl = write_scenario("dl.cmc", kDeadlock);
  r = collmc("check " + dl + " --svg " + fresh_scratch_dir("a_dir"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.all.find("Is a directory"), std::string::npos) << r.all;
}

TEST(CliFirstHour, FileErrorsSayWhyAndADirectoryPointsAtTest) {
  Outcome r = collmc("check /nonexistent.cmc");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.all.find("/nonexistent.cmc: error: cannot read file: No such file or directory"), std::string::npos)
      << r.all;
  const std::string dir = fresh_scratch_dir("dir_to_check");
  r = collmc("check " + dir);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.all.find("Is a directory"), std::string::npos) << r.all;
  EXPECT_NE(r.all.find("collmc test " + dir), std::string::npos) << r.all;
  // A UTF-8 byte-order mark is not a character of the scenario.
  const std::string bom = write_scenario("bom.cmc", "\xEF\xBB\xBF" + std::string(kDeadlock));
  r = collmc("check --quiet " + bom);
  EXPECT_EQ(r.status, 1) << r.all;
}

TEST(CliFirstHour, DashIsStandardInputAndStandardOutput) {
  std::string out;
  EXPECT_EQ(run_command(collmc_binary() + " gen ring | " + collmc_binary() + " check --quiet -", &out), 1) << out;
  EXPECT_NE(out.find("<stdin>: deadlock"), std::string::npos) << out;
  const std::string dl = write_scenario("dl.cmc", kDeadlock);
  // Only the JSON on stdout: it parses from its first byte to its last.
  Outcome r = collmc("check " + dl + " --json -");
  EXPECT_EQ(r.status, 1);
  ASSERT_FALSE(r.out.empty()) << r.all;
  EXPECT_EQ(r.out.front(), '{') << r.out;
  EXPECT_EQ(r.out[r.out.find_last_not_of('\n')], '}') << r.out;
  EXPECT_NE(r.all.find(": deadlock"), std::string::npos) << "the report goes to stderr:\n" << r.all;
  r = collmc("check " + dl + " --dot - --quiet");
  EXPECT_EQ(r.out.rfind("digraph", 0), 0u) << r.out;
  r = collmc("gen ring -o -");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("# ", 0), 0u) << r.out;
  EXPECT_FALSE(std::filesystem::exists("-"));
  EXPECT_EQ(collmc("check " + dl + " --json - --dot -").status, 2);
}

TEST(CliFirstHour, NonsenseValuesAreRefused) {
  const std::string dl = write_scenario("dl.cmc", kDeadlock);
  for (const char* bad : {"--max-states -5", "--time-limit -1", "--time-limit nan", "--max-memory -1",
                          "--max-states 12abc", "--time-limit inf"}) {
    const Outcome r = collmc("check " + dl + " " + bad);
    EXPECT_EQ(r.status, 2) << bad << "\n" << r.all;
    const std::string value = std::string(bad).substr(std::string(bad).find(' ') + 1);
    const std::string option = std::string(bad).substr(0, std::string(bad).find(' '));
    EXPECT_NE(r.all.find("invalid value '" + value + "' for '" + option + "'"), std::string::npos) << r.all;
  }
  EXPECT_EQ(collmc("check --quiet " + dl + " --max-states 1000 --time-limit 2.5").status, 1);
  EXPECT_EQ(collmc("replay " + dl + " --hang-after -3").status, 2);
}

TEST(CliFirstHour, DidYouMeanForCommandsOptionsAndSubcommands) {
  Outcome r = collmc("chek x.cmc");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.all.find("did you mean 'collmc check'?"), std::string::npos) << r.all;
  EXPECT_EQ(r.all.find("commands:"), std::string::npos) << "not the whole overview:\n" << r.all;
  r = collmc("check --jsn out.json x.cmc");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.all.find("did you mean '--json'?"), std::string::npos) << r.all;
  r = collmc("trace bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.all.find("unknown subcommand 'bogus'"), std::string::npos) << r.all;
  r = collmc("trace imprt x");
  EXPECT_NE(r.all.find("did you mean 'import'?"), std::string::npos) << r.all;
  r = collmc("gen megatrom");
  EXPECT_NE(r.all.find("did you mean 'megatron'?"), std::string::npos) << r.all;
  r = collmc("-V");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("collmc 0.", 0), 0u) << r.out;
  r = collmc("gen megatron --ubr-groups dense, expert");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.all.find("without spaces"), std::string::npos) << r.all;
}

TEST(CliFirstHour, EveryHelpNamesItsValuesAndItsOwnExitStatuses) {
  struct Footer {
    const char* command;
    const char* exits;
  };
  for (const Footer& f : {Footer{"check", "130 interrupted"}, Footer{"check", "the most severe wins"},
                          Footer{"test", "2 bad input (a path that is not there"}, Footer{"shrink", "0 shrunk"},
                          Footer{"replay", "2 refused"}, Footer{"trace import", "0 imported"},
                          Footer{"record", "124 when --time-limit"}, Footer{"gen megatron", "0 written"}}) {
    const Outcome r = collmc(std::string(f.command) + " --help");
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find(f.exits), std::string::npos) << f.command << "\n" << r.out;
  }
  for (const char* command : {"check", "test", "replay", "shrink", "trace import", "record", "gen ring", "gen megatron",
                              "gen pytorch-pool", "gen hook-fanout"}) {
    const Outcome r = collmc(std::string(command) + " --help");
    EXPECT_EQ(r.out.find(" arg "), std::string::npos) << command << ": a Boost placeholder\n" << r.out;
    EXPECT_EQ(r.out.find(" arg\n"), std::string::npos) << command << ": a Boost placeholder\n" << r.out;
  }
  const Outcome replay = collmc("replay --help");
  EXPECT_NE(replay.out.find("--launcher-arg=btl_tcp_if_include"), std::string::npos) << replay.out;
  const Outcome check = collmc("check --help");
  EXPECT_NE(check.out.find("--json OUT"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("--max-states N"), std::string::npos) << check.out;
  // record's --time-limit stops the program; it is not a search option.
  const Outcome record = collmc("record --help");
  EXPECT_EQ(record.out.find("search options"), std::string::npos) << record.out;
  EXPECT_NE(record.out.find("--time-limit"), std::string::npos) << record.out;
}

TEST(CliFirstHour, GeneratorsWorkWithTheirDefaultsAndTakeRanksOrWorld) {
  Outcome r = collmc("gen megatron");
  EXPECT_EQ(r.status, 0) << r.all;
  EXPECT_NE(r.out.find("ranks 8"), std::string::npos) << r.out;
  r = collmc("gen megatron --ubr-groups dense,expert,outer");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.all.find("needs --dist-opt-instances 2 or more"), std::string::npos) << r.all;
  for (const char* family : {"megatron", "pytorch-pool", "hook-fanout", "ring"}) {
    const Outcome ranks = collmc(std::string("gen ") + family + " --ranks 8");
    const Outcome world = collmc(std::string("gen ") + family + " --world 8");
    EXPECT_EQ(ranks.status, 0) << family << "\n" << ranks.all;
    EXPECT_EQ(ranks.out, world.out) << family;
    EXPECT_NE(ranks.out.find("ranks 8"), std::string::npos) << family << "\n" << ranks.out;
  }
  EXPECT_EQ(collmc("gen hook-fanout --ranks 8 --world 4").status, 2);
  const std::string path = fresh_scratch_dir("gen") + "/ring.cmc";
  r = collmc("gen ring -o " + path);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.all.find("wrote " + path), std::string::npos) << r.all;
}

TEST(CliFirstHour, ShrinkRefusesToOverwriteItsInputAndReportsSayWhatTheyWrote) {
  const std::string dl = write_scenario("dl.cmc", kDeadlock);
  Outcome r = collmc("shrink " + dl + " -o " + dl);
  EXPECT_EQ(r.status, 2) << r.all;
  EXPECT_NE(r.all.find("is the input"), std::string::npos) << r.all;
  std::ifstream in(dl);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), kDeadlock);
  const std::string html = fresh_scratch_dir("wrote") + "/r.html";
  r = collmc("check " + dl + " --html " + html);
  EXPECT_NE(r.all.find("wrote " + html), std::string::npos) << r.all;
}

TEST(CliFirstHour, QuietHasNoProgressLineAndForcedProgressIntoALogHasNoEscapes) {
  const Outcome quiet = collmc("check --quiet --progress --no-reduction --time-limit 2 " + long_search());
  EXPECT_EQ(quiet.status, 3);
  EXPECT_NE(quiet.all.find("[search]"), std::string::npos) << "--progress asked for it:\n" << quiet.all;
  EXPECT_EQ(quiet.all.find('\r'), std::string::npos) << quiet.all;
  EXPECT_EQ(quiet.all.find('\033'), std::string::npos) << quiet.all;
  const Outcome silent = collmc("check --quiet --no-reduction --time-limit 1.5 " + long_search());
  EXPECT_EQ(silent.all.find("[search]"), std::string::npos) << silent.all;
  EXPECT_NE(silent.out.find(": inconclusive"), std::string::npos) << silent.all;
}

#ifdef COLLMC_RECORDER_SO
TEST(CliFirstHour, RecordRefusesToMixRunsAndReportsAnInterruption) {
  const std::string dir = fresh_scratch_dir("record_out");
  std::ofstream(dir + "/collmc-trace.host.1.jsonl") << "{}\n";
  Outcome r = collmc("record --out " + dir + " -- true");
  EXPECT_EQ(r.status, 2) << r.all;
  EXPECT_NE(r.all.find("is not empty"), std::string::npos) << r.all;
  r = collmc("record --force --out " + dir + " -- true");
  EXPECT_EQ(r.status, 0) << r.all;
  EXPECT_FALSE(std::filesystem::exists(dir + "/collmc-trace.host.1.jsonl"));
  // A program that cannot start is not "a program that made no NCCL call".
  r = collmc("record --out " + fresh_scratch_dir("record_missing", false) + " -- /nonexistent/program");
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.all.find("did not start"), std::string::npos) << r.all;
  EXPECT_EQ(r.all.find("made no NCCL"), std::string::npos) << r.all;
  // SIGTERM to collmc alone reaches the program, and the run is reported as interrupted.
  // Sent once collmc catches SIGTERM (bit 15 of SigCgt) and has started the program.
  const std::string script = fresh_scratch_dir("record_term_script") + "/run.sh";
  std::ofstream(script) << collmc_binary() << " record --out " << fresh_scratch_dir("record_term", false)
                        << " -- sleep 30 &\n"
                        << "pid=$!\n"
                        << "for i in $(seq 200); do\n"
                        << "  cgt=$(awk '/^SigCgt/ {print $2}' /proc/$pid/status)\n"
                        << "  [ $((0x$cgt & 16384)) -ne 0 ] && pgrep -P $pid >/dev/null && break\n"
                        << "  sleep 0.1\n"
                        << "done\n"
                        << "kill -TERM $pid\n"
                        << "wait $pid\n"
                        << "echo rc=$?\n";
  std::string out;
  const auto start = std::chrono::steady_clock::now();
  run_command("sh " + script, &out);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 25.0) << out;
  EXPECT_NE(out.find("rc=143"), std::string::npos) << out;
  EXPECT_NE(out.find("interrupted (SIGTERM)"), std::string::npos) << out;
}
#endif

}  // namespace
}  // namespace collmc::testing
