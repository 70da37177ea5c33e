// Recorded runs made up at random, in the files each source writes (collmc recorder JSON lines, Flight
// Recorder JSON and pickle dumps, NCCL INFO logs, MPI recorder JSON lines), for the differential of the
// import trim (docs/TRACES.md, "What the import keeps"): the trimmed and the full import of every run must
// check to the same verdict, the same waits and the same slot numbers. Shared by the ctest
// (tests/trace_differential_test.cpp, a small size) and the benchmark (bench/trace_differential.cpp, 10,000
// runs of each source and more).
//
// A run: 2 to 4 ranks, a world communicator, random splits of it (two groups, or one), then rounds in one
// global order, each made by every member of a comm: collectives of random kind and size on cold and warm
// comms, allocations, window registrations (symmetric or not, now and then disagreeing), deregistrations,
// frees (with and without a device sync before), device syncs, destroys, aborts, shrinks. The run passes,
// or hangs: a rank skips a call (its peers sit in it), two ranks destroy two warm comms in opposite orders,
// or the members of a collective pass different counts; a run that passes may instead hold disagreeing
// registrations or frees with no sync before (one kind of bad outcome per run: the check reports the first it
// meets). Each source writes what it can see of that run.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace collmc::testing {

enum class RunSource { Recorder, FlightRecorderJson, FlightRecorderPickle, NcclLog, MpiRecorder };
inline constexpr RunSource kRunSources[] = {RunSource::Recorder, RunSource::FlightRecorderJson,
                                            RunSource::FlightRecorderPickle, RunSource::NcclLog,
                                            RunSource::MpiRecorder};
const char* run_source_name(RunSource source);

struct RecordedRun {
  std::vector<std::pair<std::string, std::string>> files;  // file name, its bytes
  std::string story;                                       // what the run did, for failure messages
};

RecordedRun generate_recorded_run(RunSource source, uint64_t seed);

// What a check of a scenario finds, in the words of its report less the scenario's line numbers: the
// verdict; for a deadlock, where every rank stands (each wait with its comm and slot number), the wait-for
// graph's edges and its cycles. (Of a violation, the verdict: which one of several the search meets first,
// and which member it names, follows the order the search took.)
std::string check_outcome(const std::string& scenario);

struct TrimComparison {
  bool agree = false;
  bool trimmed = false;  // the default import left something out
  std::string full_scenario, trimmed_scenario;
  std::string full_outcome, trimmed_outcome;
};

// Writes the run's files into `dir` (which must exist; files of an earlier run are replaced), imports them
// trimmed and with --full-history, and checks both.
TrimComparison compare_trim(const RecordedRun& run, const std::string& dir);

}  // namespace collmc::testing
