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
  if (semantics.threads_share_a_comm()) return false;   // the reduction claims nothing then
  if (semantics.ranks_share_a_process()) return false;  // nor here
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
  // Runs the child of `thread` of `rank` that starts at control node `entry`: the choice that enters it
  // (unless it is the last child left, entered at once), then its one call. False when either is not
  // enabled or the call leaves the thread waiting; `violation` is the call's, if any.
  auto run_child = [&](State& t, int rank, int thread, int32_t entry, std::optional<checker::Violation>& violation) {
    const auto& control = semantics.control();
    auto own_steps = [&]() {
      after.clear();
      std::vector<Step> completions;
      semantics.enabled_of_rank(t, rank, after, completions);
      std::erase_if(after, [&](const Step& st) { return st.thread != thread; });
    };
    if (t.ranks[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)].node != entry) {
      own_steps();
      const auto chosen = std::find_if(after.begin(), after.end(), [&](const Step& st) {
        return st.kind == StepKind::Choose &&
               control.edge_at(t.ranks[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)], st.edge)
                       .target == entry;
      });
      if (chosen == after.end()) return false;
      const Step choose = *chosen;
      if (semantics.apply(t, choose)) return false;
      if (t.ranks[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)].node != entry) return false;
    }
    own_steps();
    if (after.size() != 1 || after.front().kind != StepKind::Issue) return false;
    const Step issue = after.front();
    violation = semantics.apply(t, issue);
    return violation ||
           semantics.waits_hold(t, rank, t.ranks[static_cast<size_t>(rank)].threads[static_cast<size_t>(thread)]);
  };
  auto check_choices = [&](const State& s) {
    for (int r = 0; r < semantics.ranks(); ++r)
      for (int th = 0; th < semantics.threads(r); ++th) {
        if (!semantics.commuting_choice(s, r, th)) continue;
        const auto& ts = s.ranks[static_cast<size_t>(r)].threads[static_cast<size_t>(th)];
        std::vector<int32_t> entries;
        semantics.control().for_each_edge(ts,
                                          [&](size_t, const checker::ControlEdge& e) { entries.push_back(e.target); });
        auto where = [&]() {
          return "rank " + std::to_string(r) + " thread " + std::to_string(th) + " at any_order node " +
                 std::to_string(ts.node);
        };
        // Each child alone: it must run without blocking; its violation, if any, must survive the other.
        std::vector<std::string> alone(entries.size());
        for (size_t i = 0; i < entries.size(); ++i) {
          State t = s;
          std::optional<checker::Violation> v;
          if (!run_child(t, r, th, entries[i], v))
            out.failures.push_back(where() + ": a child blocks or is not one call");
          alone[i] = verdict_text(v);
        }
        for (size_t i = 0; i < entries.size(); ++i)
          for (size_t j = 0; j < entries.size(); ++j) {
            if (i == j || (j < i && alone[i] == "none" && alone[j] == "none")) continue;
            if (alone[j] != "none") continue;  // a violating first child ends the run
            ++out.choice_pairs;
            // j, then i; and (when neither violates alone) i, then j: the same state or the same violation.
            auto run_pair = [&](size_t first, size_t second) {
              State t = s;
              std::optional<checker::Violation> v;
              if (!run_child(t, r, th, entries[first], v)) return std::string("blocked");
              if (v) return "first: " + verdict_text(v);
              if (!run_child(t, r, th, entries[second], v)) return std::string("second blocked");
              return v ? verdict_text(v) : checker::encode_state(t);
            };
            const std::string ji = run_pair(j, i);
            const std::string expected = alone[i] != "none" ? alone[i] : run_pair(i, j);
            if (ji != expected)
              out.failures.push_back(where() + ": children " + std::to_string(i) + " and " + std::to_string(j) +
                                     " end differently in the two orders");
          }
      }
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
    check_choices(s);
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
