// The next-state interface: the only way search algorithms see the semantics (ARCHITECTURE.md,
// after LTSmin's PINS). Reductions wrap a NextState and are a NextState.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collmc/checker/state.h"
#include "collmc/model/operations.h"

namespace collmc::checker {

enum class StepKind : uint8_t {
  Choose,        // a thread resolves a choice (any_order, either, maybe)
  Spawn,         // a thread starts another thread of its rank
  Issue,         // a thread issues one call
  IssueGroup,    // a thread issues a group's calls together
  Complete,      // the device completes collective slot `slot` of `comm` on every member
  CompletePair,  // the device completes send/recv pair number `slot` from `rank` to `peer` on `comm`
  MatchAny,      // `thread` of `rank`, in a wildcard receive (its wait number `wait`), takes send number `slot`
                 // of tag `tag` of rank `peer` on `comm`
};

// Whether apply() of a step of this kind can return a violation (an invariant of every NextState,
// asserted by the semantics): only a call's issue (where usage errors and mismatches are found) and a
// wildcard receive's match can. A search need not try the other kinds for a violation.
constexpr bool may_violate(StepKind kind) {
  return kind == StepKind::Issue || kind == StepKind::IssueGroup || kind == StepKind::MatchAny;
}

// Ranks, comms, threads, edges and waits are 32-bit ids, signed as the model's `int` ids are: a world may
// have more than 65,536 ranks (model::kMaxWorldRanks), and nothing bounds the others below the call limit.
struct Step {
  StepKind kind = StepKind::Issue;
  int32_t rank = 0;  // the acting rank (the sender for CompletePair; the lowest member for Complete)
  int32_t thread = 0;
  int32_t edge = 0;             // index of the control edge taken
  int32_t call = -1;            // Issue: the call issued
  int32_t group = -1;           // IssueGroup: the group alternative (index into ControlProgram::groups)
  int32_t spawned_thread = -1;  // Spawn: the thread started
  int32_t comm = 0;             // Complete, CompletePair, MatchAny
  int32_t peer = 0;             // CompletePair: the receiver; MatchAny: the sender
  uint32_t slot = 0;            // Complete: device slot; CompletePair, MatchAny: pair index
  uint32_t tag = 0;             // MatchAny: the tag of the send taken
  int32_t wait = 0;             // MatchAny: the index of the receive's wait among the thread's waits
  bool operator==(const Step&) const = default;
};

// A bad outcome reached by a step (SEMANTICS.md §4). Deadlocks are not violations of a step: the
// search finds them as states with no successor that are not final.
struct Violation {
  model::Verdict verdict = model::Verdict::UsageError;
  std::string message;
  int rank = -1;
  int thread = -1;
  int call = -1;
  // The MPI usage rule (model/mpi_rules.def) the step broke, when the semantics found it in the state (an
  // epoch rule); a static usage error names its rule on its call (model::Call::mpi_rule).
  std::optional<model::MpiRule> mpi_rule;
};

struct Transition {
  Step step;
  State next;
  std::optional<Violation> violation;  // the step itself is the bad outcome; `next` is not explored
};

// Enabled steps first, successors only for the steps a search takes (LTSmin's PINS asks for the
// enabled transition groups before it builds any successor): a reduction that keeps one step of many
// builds one successor, and a search can apply a lone step in place instead of copying the state.
class NextState {
 public:
  virtual ~NextState() = default;
  virtual State initial() const = 0;
  // Appends every enabled step of `s` (for a reduction: the steps it keeps). `first_rank` is where
  // the previous step acted: a reduction looks at that rank first, since it is the likeliest to
  // still be able to move; it never changes which steps are enabled.
  virtual void enabled(const State& s, std::vector<Step>& out, int first_rank = 0) const = 0;
  // Applies an enabled `step` to `s` in place. Returns the violation the step is, if it is one;
  // `s` is then not a state to explore.
  virtual std::optional<Violation> apply(State& s, const Step& step) const = 0;
  // Every thread done, every stream empty, every collective complete.
  virtual bool is_final(const State& s) const = 0;

  // Every enabled step with its successor (enabled(), then apply() on a copy of `s` for each).
  void successors(const State& s, std::vector<Transition>& out) const;
};

}  // namespace collmc::checker
