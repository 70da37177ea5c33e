#include "collmc/checker/search.h"

#include <sys/resource.h>

#include <chrono>
#include <deque>
#include <unordered_map>

namespace collmc::checker {

namespace {

uint64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

struct Parent {
  uint32_t parent;
  uint32_t depth;
  Step step;
};

constexpr uint32_t kNoParent = UINT32_MAX;
// Per-state bookkeeping besides the key's bytes: hash node, bucket, key header, parent record.
constexpr uint64_t kStateOverhead = 64 + sizeof(Parent);

}  // namespace

SearchResult explore(const NextState& system, const SearchOptions& options) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SearchResult result;
  std::unordered_map<std::string, uint32_t> index;
  std::vector<const std::string*> keys;
  std::vector<Parent> parents;
  std::deque<uint32_t> frontier;
  uint64_t key_bytes = 0;

  auto add = [&](const State& s, uint32_t parent, uint32_t depth, const Step& step) {
    auto [it, inserted] = index.emplace(encode_state(s), static_cast<uint32_t>(keys.size()));
    if (!inserted) return;
    key_bytes += it->first.size();
    keys.push_back(&it->first);
    parents.push_back(Parent{parent, depth, step});
    frontier.push_back(it->second);
    if (depth > result.stats.max_depth) result.stats.max_depth = depth;
  };
  auto schedule_to = [&](uint32_t id) {
    std::vector<Step> steps;
    while (id != kNoParent && parents[id].parent != kNoParent) {
      steps.push_back(parents[id].step);
      id = parents[id].parent;
    }
    return std::vector<Step>(steps.rbegin(), steps.rend());
  };
  auto memory = [&]() {
    return key_bytes + keys.size() * kStateOverhead + frontier.size() * sizeof(uint32_t) +
           index.bucket_count() * sizeof(void*);
  };
  auto finish = [&](model::Verdict v) {
    result.verdict = v;
    result.stats.states = keys.size();
    result.stats.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    result.stats.memory_bytes = memory();
    result.stats.peak_rss_bytes = peak_rss_bytes();
    return result;
  };

  auto limit_hit = [&]() -> std::string {
    if (options.max_states && keys.size() >= options.max_states)
      return "max-states (" + std::to_string(options.max_states) + ")";
    if ((result.stats.expanded & 255) != 0) return {};
    if (options.time_limit_s > 0 && std::chrono::duration<double>(Clock::now() - start).count() > options.time_limit_s)
      return "time-limit (" + std::to_string(options.time_limit_s) + " s)";
    if (options.max_memory_mib && memory() > (options.max_memory_mib << 20))
      return "max-memory (" + std::to_string(options.max_memory_mib) + " MiB)";
    return {};
  };

  add(system.initial(), kNoParent, 0, Step{});
  std::vector<Transition> succ;
  uint32_t violation_depth = kNoParent;  // breadth-first: depth of the state a violation was found from
  while (!frontier.empty()) {
    if (std::string limit = limit_hit(); !limit.empty()) {
      // A violation already found stands (perhaps not the shortest); otherwise nothing is proven.
      if (violation_depth != kNoParent) return finish(result.violation->verdict);
      result.limit = limit;
      return finish(model::Verdict::Inconclusive);
    }
    uint32_t id;
    if (options.shortest) {
      id = frontier.front();
      if (violation_depth != kNoParent && parents[id].depth > violation_depth) return finish(result.violation->verdict);
      frontier.pop_front();
    } else {
      id = frontier.back();
      frontier.pop_back();
    }
    State s = decode_state(*keys[id]);
    succ.clear();
    system.successors(s, succ);
    ++result.stats.expanded;
    result.stats.transitions += succ.size();
    if (succ.empty()) {
      if (!system.is_final(s)) {
        result.violation.reset();
        result.schedule = schedule_to(id);
        result.end_state = std::move(s);
        return finish(model::Verdict::Deadlock);
      }
      continue;
    }
    for (auto& tr : succ) {
      if (!tr.violation) continue;
      result.schedule = schedule_to(id);
      result.schedule.push_back(tr.step);
      result.violation = std::move(tr.violation);
      result.end_state = s;  // the state the violating step starts from
      if (!options.shortest) return finish(result.violation->verdict);
      // Breadth-first: a deadlock among the states still queued at this depth is shorter.
      violation_depth = parents[id].depth;
      break;
    }
    if (violation_depth != kNoParent) continue;
    const uint32_t depth = parents[id].depth + 1;
    if (options.shortest) {
      for (const auto& tr : succ) add(tr.next, id, depth, tr.step);
    } else {
      // Pushed in reverse so that the first successor is explored first.
      for (auto it = succ.rbegin(); it != succ.rend(); ++it) add(it->next, id, depth, it->step);
    }
  }
  if (violation_depth != kNoParent) return finish(result.violation->verdict);
  return finish(model::Verdict::Safe);
}

}  // namespace collmc::checker
