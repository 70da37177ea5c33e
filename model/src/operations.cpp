#include "collmc/model/operations.h"

#include "collmc/model/ast.h"

#include <array>
#include <utility>

namespace collmc::model {

namespace {
constexpr std::array<std::pair<Verdict, std::string_view>, 8> kVerdictNames{{
    {Verdict::Safe, "safe"},
    {Verdict::Deadlock, "deadlock"},
    {Verdict::Mismatch, "mismatch"},
    {Verdict::DivergentKernel, "divergent_kernel"},
    {Verdict::UseAfterDeregister, "use_after_deregister"},
    {Verdict::UseAfterFree, "use_after_free"},
    {Verdict::UsageError, "usage_error"},
    {Verdict::Inconclusive, "inconclusive"},
}};

constexpr MpiRuleInfo kMpiRules[] = {
#define COLLMC_MPI_RULE(kind, name, judge, section, what) {MpiRule::kind, name, MpiRuleJudge::judge, section, what},
#include "collmc/model/mpi_rules.def"
#undef COLLMC_MPI_RULE
};
}  // namespace

const MpiRuleInfo& mpi_rule_info(MpiRule rule) { return kMpiRules[static_cast<size_t>(rule)]; }

std::optional<MpiRule> mpi_rule_named(std::string_view name) {
  for (const MpiRuleInfo& r : kMpiRules)
    if (r.name == name) return r.rule;
  return std::nullopt;
}

std::string mpi_rule_names() {
  std::string out;
  for (const MpiRuleInfo& r : kMpiRules) out += (out.empty() ? "" : ", ") + std::string(r.name);
  return out;
}

std::string mpi_rule_message(MpiRule rule, const std::string& text) {
  const MpiRuleInfo& r = mpi_rule_info(rule);
  std::string out = text + ": " + std::string(r.what);
  if (!r.section.empty()) out += " (MPI 4.1 sec. " + std::string(r.section) + ")";
  return out;
}

std::string_view op_name(OpKind kind) { return op_info(kind).keyword; }

std::optional<OpKind> op_from_keyword(std::string_view word) {
  if (word == "sync") return std::nullopt;
  for (const OpInfo& op : kOperations)
    if (op.keyword == word) return op.kind;
  return std::nullopt;
}

std::string op_keyword_list() {
  std::string out;
  for (const OpInfo& op : kOperations) {
    if (op.form == OpForm::SyncDevice) continue;  // `sync` once
    if (!out.empty()) out += ", ";
    out += op.keyword;
  }
  return out;
}

std::string_view verdict_name(Verdict v) {
  for (const auto& [k, name] : kVerdictNames)
    if (k == v) return name;
  return "?";
}

std::optional<Verdict> verdict_from_name(std::string_view name) {
  for (const auto& [k, n] : kVerdictNames)
    if (n == name) return k;
  return std::nullopt;
}

std::optional<ObservedOutcome> observed_outcome_from_name(std::string_view name) {
  if (name == "completed") return ObservedOutcome::Completed;
  if (name == "hung") return ObservedOutcome::Hung;
  if (name == "killed") return ObservedOutcome::Killed;
  return std::nullopt;
}

std::string_view observed_outcome_name(ObservedOutcome outcome) {
  switch (outcome) {
    case ObservedOutcome::Completed:
      return "completed";
    case ObservedOutcome::Hung:
      return "hung";
    case ObservedOutcome::Killed:
      return "killed";
  }
  return "?";
}

std::string nccl_version_text(uint32_t code) {
  if (code == kMeasuredPrerelease)
    return "2.31.0a" + std::to_string(kMeasuredPrereleaseNumber);  // the 2.31.0 collmc knows (operations.h)
  return std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
}

bool known_nccl_release(uint32_t code) {
  for (uint32_t r : kKnownNcclReleases)
    if (r == code || (code % 100 == 0 && r / 100 == code / 100)) return true;
  return false;
}

uint32_t nearest_known_nccl_release(uint32_t code) {
  uint32_t best = kKnownNcclReleases[0];
  for (uint32_t r : kKnownNcclReleases) {
    const uint32_t d = r > code ? r - code : code - r;
    const uint32_t bd = best > code ? best - code : code - best;
    if (d < bd) best = r;
  }
  return best;
}

std::string_view profile_name(Profile p) { return p == Profile::Mpi ? "mpi" : "nccl"; }
std::string_view comm_mode_name(CommMode m) { return m == CommMode::Nonblocking ? "nonblocking" : "blocking"; }
std::string_view mpi_progress_name(MpiProgress p) {
  switch (p) {
    case MpiProgress::Sync:
      return "sync";
    case MpiProgress::Strong:
      return "strong";
    case MpiProgress::Weak:
      return "weak";
    case MpiProgress::Portable:
      return "portable";
  }
  return "portable";
}

std::string_view win_mode_name(WinMode m) {
  switch (m) {
    case WinMode::Plain:
      return "";
    case WinMode::Shared:
      return "shared";
    case WinMode::Local:
      return "local";
    case WinMode::NoSucceed:
      return "nosucceed";
  }
  return "";
}

std::optional<WinMode> win_mode_from_name(std::string_view name) {
  for (WinMode m : {WinMode::Shared, WinMode::Local, WinMode::NoSucceed})
    if (win_mode_name(m) == name) return m;
  return std::nullopt;
}

}  // namespace collmc::model
