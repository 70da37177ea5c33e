#include "independence_check.h"

#include <algorithm>
#include <optional>
#include <set>

namespace collmc::testing {

using checker::State;
using checker::Step;
using checker::StepKind;

namespace {

bool is_completion(const Step& s) { return s.kind == StepKind::Complete || s.kind == StepKind::CompletePair; }

std::string verdict_text(const std::optional<checker::Violation>& v) {
  return v ? std::string(model::verdict_name(v->verdict)) : std::string("none");
}

}  // namespace

bool claimed_independent(const checker::Semantics& semantics, const Step& a, const Step& b) {
  if (a == b) return false;
  if (semantics.threads_share_nccl_comm()) return false;  // the reduction claims nothing then
  if (semantics.ranks_share_a_process()) return false;    // nor here
  if (!is_completion(a) && !is_completion(b)) return a.rank != b.rank;
  if (is_completion(a) && is_completion(b)) return true;
  const Step& completion = is_completion(a) ? a : b;
  const Step& host = is_completion(a) ? b : a;
  if (!semantics.step_reads_device(host)) return true;
  auto members = semantics.completion_ranks(completion);
  return std::find(members.begin(), members.end(), host.rank) == members.end();
}

IndependenceCheck check_independence(const checker::Semantics& semantics, uint64_t state_budget) {
  IndependenceCheck out;
  std::set<std::string> seen;
  std::vector<State> stack{semantics.initial()};
  std::vector<Step> steps;
  std::vector<Step> after;
  // `first` then `second` from `s`: whether `second` is still enabled, the violation it is, and the state.
  struct Order {
    bool second_enabled = false;
    std::optional<checker::Violation> violation;
    std::string state;
  };
  auto run = [&](const State& s, const Step& first, const Step& second) {
    Order o;
    State t = s;
    if (semantics.apply(t, first)) return o;  // a violating first step ends the run; nothing to compare
    after.clear();
    semantics.enabled(t, after);
    o.second_enabled = std::find(after.begin(), after.end(), second) != after.end();
    if (!o.second_enabled) return o;
    o.violation = semantics.apply(t, second);
    if (!o.violation) o.state = checker::encode_state(t);
    return o;
  };
  while (!stack.empty()) {
    if (out.states >= state_budget) {
      out.complete = false;
      break;
    }
    State s = std::move(stack.back());
    stack.pop_back();
    if (!seen.insert(checker::encode_state(s)).second) continue;
    ++out.states;
    steps.clear();
    semantics.enabled(s, steps);
    std::vector<std::optional<checker::Violation>> alone;
    for (const Step& st : steps) {
      State t = s;
      alone.push_back(semantics.apply(t, st));
      if (!alone.back()) stack.push_back(std::move(t));
    }
    for (size_t i = 0; i < steps.size(); ++i)
      for (size_t j = i + 1; j < steps.size(); ++j) {
        if (!claimed_independent(semantics, steps[i], steps[j])) continue;
        ++out.pairs;
        const Step& a = steps[i];
        const Step& b = steps[j];
        auto where = [&]() { return "'" + semantics.describe_step(a) + "' and '" + semantics.describe_step(b) + "'"; };
        // A violating step commutes when the other step leaves it enabled and the same violation.
        if (alone[i] || alone[j]) {
          auto stays = [&](const Step& bad, const auto& bad_alone, const Step& other, const auto& other_alone) {
            if (!bad_alone || other_alone) return;
            Order o = run(s, other, bad);
            if (!o.second_enabled || verdict_text(o.violation) != verdict_text(bad_alone))
              out.failures.push_back(
                  where() + ": " + semantics.describe_step(bad) + " is " + verdict_text(bad_alone) + " alone but " +
                  (o.second_enabled ? verdict_text(o.violation) : std::string("disabled")) + " after the other");
          };
          stays(a, alone[i], b, alone[j]);
          stays(b, alone[j], a, alone[i]);
          continue;
        }
        Order ab = run(s, a, b);
        Order ba = run(s, b, a);
        if (!ab.second_enabled || !ba.second_enabled)
          out.failures.push_back(where() + ": one disables the other");
        else if (verdict_text(ab.violation) != verdict_text(ba.violation))
          out.failures.push_back(where() + ": " + verdict_text(ab.violation) + " in one order, " +
                                 verdict_text(ba.violation) + " in the other");
        else if (!ab.violation && ab.state != ba.state)
          out.failures.push_back(where() + ": the two orders end in different states");
      }
  }
  return out;
}

}  // namespace collmc::testing
