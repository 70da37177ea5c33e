// The test every candidate must pass: printed, parsed and resolved again, then checked, it must end in
// the same kind of violation as the input. For a deadlock the kind includes its shape: a wait-for
// cycle stays a cycle, and a deadlock where no rank waits on a rank that has exited keeps that (so a
// shrink cannot turn "two ranks register in opposite orders" into "a rank's peer never registers").
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "collmc/checker/check.h"
#include "collmc/shrink/edit.h"
#include "collmc/shrink/shrink.h"

namespace collmc::shrink {

// A scenario the oracle checked: its text (no header), the World parsed from it, and its check.
struct Checked {
  std::string text;
  std::unique_ptr<model::World> world;
  checker::CheckResult result;
};

struct ViolationShape {
  model::Verdict verdict = model::Verdict::Safe;
  bool cycle = false;          // the wait-for graph has a cycle
  bool waits_on_exit = false;  // some rank waits for a rank that exited
};
ViolationShape shape_of(const checker::CheckResult& result);

class Oracle {
 public:
  Oracle(const ShrinkOptions& options, ShrinkStats& stats);

  // Prints, parses, resolves and checks `world`. Throws InputError if the printed text does not parse.
  Checked check(const model::World& world, const std::string& name) const;
  Checked check_text(std::string text, const std::string& name) const;
  void set_target(const ViolationShape& target) { target_ = target; }

  // The projected candidate if it keeps the violation, else nothing.
  std::optional<Checked> test(const model::World& base, const Edit& edit);
  bool out_of_time() const;
  bool time_limit_hit() const { return time_limit_hit_; }

 private:
  bool keeps_violation(const checker::CheckResult& r) const;

  ShrinkOptions options_;
  ShrinkStats& stats_;
  ViolationShape target_;
  std::chrono::steady_clock::time_point deadline_;
  bool has_deadline_ = false;
  bool time_limit_hit_ = false;
  std::set<std::string> rejected_;  // texts already checked and rejected
};

}  // namespace collmc::shrink
