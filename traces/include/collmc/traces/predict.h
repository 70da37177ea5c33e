// Prediction from a recorded run: the check of the scenario in the order the run took against the check
// of the same calls with the orders open_orders opened. The run completing says only that the recorded
// order is safe; this says whether another order of the same calls is not, with that order's schedule.
#pragma once

#include <string>

#include "collmc/checker/search.h"
#include "collmc/model/operations.h"

namespace collmc::traces {

struct Prediction {
  model::Verdict recorded = model::Verdict::Safe;  // the scenario in the recorded order
  model::Verdict opened = model::Verdict::Safe;    // with the opened orders
  // One line: "the recorded order is safe; another order of these calls deadlocks", "the recorded order
  // already deadlocks", "the recorded order is safe, and so is every opened order", or what stopped it.
  std::string finding;
  // The check report of the opened scenario when it finds something the recorded one does not (its
  // verdict, the schedule to it, where every rank stands), else empty.
  std::string report;
};

// Checks both scenario texts (as emit_scenario wrote them; `opened_name` names the opened one in the
// report, e.g. the file it is written to). Throws model::InputError if a text does not resolve.
Prediction predict(const std::string& recorded_scenario, const std::string& opened_scenario,
                   const std::string& opened_name, const checker::SearchOptions& options);

}  // namespace collmc::traces
