// predict.h: the recorded order's check against the opened orders' check, said in one line.
#include "collmc/traces/predict.h"

#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/world.h"
#include "collmc/report/check_report.h"

namespace collmc::traces {
namespace {

// "deadlocks", "ends in a mismatch", ...: the verdict as what the run does.
std::string verdict_phrase(model::Verdict v) {
  switch (v) {
    case model::Verdict::Safe:
      return "is safe";
    case model::Verdict::Deadlock:
      return "deadlocks";
    case model::Verdict::Inconclusive:
      return "is inconclusive";
    default:
      return "ends in a " + std::string(model::verdict_name(v));
  }
}

}  // namespace

Prediction predict(const std::string& recorded_scenario, const std::string& opened_scenario,
                   const std::string& opened_name, const checker::SearchOptions& options) {
  Prediction p;
  model::World recorded = model::resolve(model::parse_string(recorded_scenario, "<recorded order>"));
  model::World opened = model::resolve(model::parse_string(opened_scenario, opened_name));
  checker::CheckResult recorded_result = checker::check(recorded, options);
  p.recorded = recorded_result.verdict;
  if (p.recorded != model::Verdict::Safe) {
    p.opened = p.recorded;
    p.finding = p.recorded == model::Verdict::Inconclusive
                    ? "the check of the recorded order stopped at a limit (" + recorded_result.limit +
                          "); the opened orders were not checked"
                    : "the recorded order already " + verdict_phrase(p.recorded) +
                          " (collmc check shows it; opening orders adds nothing to find)";
    return p;
  }
  checker::CheckResult opened_result = checker::check(opened, options);
  p.opened = opened_result.verdict;
  if (p.opened == model::Verdict::Safe) {
    p.finding = "the recorded order is safe, and so is every other order of these calls that was opened";
  } else if (p.opened == model::Verdict::Inconclusive) {
    p.finding = "the recorded order is safe; the check of the other orders stopped at a limit (" + opened_result.limit +
                "): nothing is proven about them";
  } else {
    p.finding = "the recorded order is safe; another order of these calls " + verdict_phrase(p.opened);
    p.report = report::text_report(opened_result, false);
  }
  return p;
}

}  // namespace collmc::traces
