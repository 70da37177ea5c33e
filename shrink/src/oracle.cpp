#include "oracle.h"

#include "collmc/model/parser.h"
#include "collmc/model/print.h"

namespace collmc::shrink {

using model::Verdict;

ViolationShape shape_of(const checker::CheckResult& result) {
  ViolationShape s;
  s.verdict = result.verdict;
  s.cycle = !result.wait_for.cycles.empty();
  for (const auto& n : result.wait_for.nodes)
    if (n.kind == checker::WaitNode::Kind::Exited) s.waits_on_exit = true;
  return s;
}

Oracle::Oracle(const ShrinkOptions& options, ShrinkStats& stats) : options_(options), stats_(stats) {
  if (options_.search.max_states == 0) options_.search.max_states = kDefaultCandidateStates;
  if (options_.time_limit_s > 0) {
    has_deadline_ = true;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                       std::chrono::duration<double>(options_.time_limit_s));
  }
}

bool Oracle::out_of_time() const { return has_deadline_ && std::chrono::steady_clock::now() >= deadline_; }

Checked Oracle::check(const model::World& world, const std::string& name) const {
  return check_text(model::print_world(world), name);
}

Checked Oracle::check_text(std::string text, const std::string& name) const {
  Checked c;
  c.text = std::move(text);
  c.world = std::make_unique<model::World>(model::resolve(model::parse_string(c.text, name)));
  checker::SearchOptions search = options_.search;
  if (has_deadline_) {
    const double left = std::chrono::duration<double>(deadline_ - std::chrono::steady_clock::now()).count();
    search.time_limit_s = std::max(left, 0.001);
  }
  c.result = checker::check(*c.world, search);
  return c;
}

bool Oracle::keeps_violation(const checker::CheckResult& r) const {
  const ViolationShape s = shape_of(r);
  if (s.verdict != target_.verdict) return false;
  if (s.verdict != Verdict::Deadlock) return true;
  if (target_.cycle && !s.cycle) return false;
  if (!target_.waits_on_exit && s.waits_on_exit) return false;
  return true;
}

std::optional<Checked> Oracle::test(const model::World& base, const Edit& edit) {
  ++stats_.candidates;
  if (out_of_time()) {
    time_limit_hit_ = true;
    return std::nullopt;
  }
  const model::World candidate = project(base, edit);
  if (candidate.ranks == 0) return std::nullopt;
  std::string text = model::print_world(candidate);
  if (rejected_.count(text)) return std::nullopt;
  Checked c = check_text(std::move(text), "<shrink candidate>");
  ++stats_.checks;
  if (c.result.verdict == Verdict::Inconclusive) {
    ++stats_.inconclusive;
    if (out_of_time()) time_limit_hit_ = true;
  }
  if (!keeps_violation(c.result)) {
    rejected_.insert(c.text);
    return std::nullopt;
  }
  ++stats_.accepted;
  return c;
}

}  // namespace collmc::shrink
