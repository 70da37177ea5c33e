// The Flight Recorder companion (collmc watch --flight-recorder DIR): PyTorch writes one dump per rank when
// its watchdog times out (TORCH_NCCL_DUMP_ON_TIMEOUT=1, files TORCH_FR_DUMP_TEMP_FILE + rank, by default
// /tmp/nccl_trace_rank_<N>); once the last rank's dump has landed, the dumps are imported and checked, and
// the summary and the review page are written beside them.
#pragma once

#include <string>
#include <vector>

namespace collmc::watch {

struct FlightRecorderScan {
  std::vector<std::string> dumps;  // the dumps that read whole (a dump still being written does not)
  int world = 0;                   // the ranks the dumps' groups name (or the expected count given)
  std::vector<int> missing;        // ranks with no whole dump yet
  std::string waiting_for;         // why it is not complete: a dump that does not read yet, missing ranks
  bool complete() const { return !dumps.empty() && missing.empty() && waiting_for.empty(); }
};

// The files of `dir` whose names start with `prefix` (empty: every regular, non-hidden file), read as
// Flight Recorder dumps. `world` > 0: the ranks expected; else those the dumps' process groups name.
FlightRecorderScan scan_flight_recorder_dumps(const std::string& dir, const std::string& prefix, int world);

struct FlightRecorderReview {
  std::string summary;  // the import summary, then the check's report
  int verdict_exit =
      0;  // collmc check's exit status for the verdict (0 safe, 1 violation, 3 inconclusive, 4 safe but hung)
  std::vector<std::string> written;  // the files written
};

// Imports and checks `dumps`, writes collmc-summary.txt, collmc-review.html and collmc-flight-recorder.cmc
// into `out_dir`. Throws traces::TraceInputError for dumps that cannot be read.
FlightRecorderReview review_flight_recorder_dumps(const std::vector<std::string>& dumps, const std::string& out_dir,
                                                  double check_time_limit_s);

}  // namespace collmc::watch
