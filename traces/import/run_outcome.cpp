// How a recorded run ended, in words (trace.h): part of the trace model, shared by every source.
#include <string>

#include "collmc/traces/trace.h"

namespace collmc::traces {

std::string outcome_line(const Trace& trace) {
  switch (trace.outcome) {
    case RunOutcome::Unknown:
      return "";
    case RunOutcome::Completed:
      return "the recorded run completed (" + trace.outcome_evidence + ")";
    case RunOutcome::Hung:
      return "the recorded run hung (" + trace.outcome_evidence + ")";
    case RunOutcome::Killed:
      return "the recorded run was killed (" + trace.outcome_evidence + ")";
  }
  return "";
}

const char* run_outcome_name(RunOutcome outcome) {
  switch (outcome) {
    case RunOutcome::Unknown:
      return "unknown";
    case RunOutcome::Completed:
      return "completed";
    case RunOutcome::Hung:
      return "hung";
    case RunOutcome::Killed:
      return "killed";
  }
  return "unknown";
}

}  // namespace collmc::traces
