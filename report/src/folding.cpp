#include "folding.h"

#include <algorithm>
#include <set>

#include "collmc/model/world.h"

namespace collmc::report {

using checker::StepKind;
using checker::WaitForGraph;
using checker::WaitNode;

std::string count_of(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string ranks_text(std::vector<int> ranks, const std::string& separator, size_t max_chars) {
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::string all = model::rank_ranges_text(ranks, separator);  // not const: it moves on return
  if (max_chars == 0 || all.size() <= max_chars) return all;
  // Cut after the last whole piece that fits, and count the ranks of the pieces left out: a piece is
  // "a", "a..b" or "a..b step s", so the ranks shown are those up to the last number kept.
  size_t cut = all.rfind(separator, max_chars);
  if (cut == std::string::npos || cut == 0) cut = all.find(separator);
  if (cut == std::string::npos) return all;
  const std::string shown = all.substr(0, cut);
  // The last rank shown: the end of the last piece ("a", "a..b", "a..b step s": b, not s).
  std::string piece =
      shown.substr(shown.rfind(separator) == std::string::npos ? 0 : shown.rfind(separator) + separator.size());
  if (const size_t step = piece.find(" step "); step != std::string::npos) piece.resize(step);
  if (const size_t dots = piece.find(".."); dots != std::string::npos) piece = piece.substr(dots + 2);
  const int last = std::stoi(piece);
  const auto kept = static_cast<size_t>(std::upper_bound(ranks.begin(), ranks.end(), last) - ranks.begin());
  return shown + separator + "\xE2\x80\xA6 (" + std::to_string(ranks.size() - kept) + " more)";
}

std::map<std::tuple<int, int, int>, Role> cycle_roles(const WaitForGraph& g) {
  std::map<std::tuple<int, int, int>, Role> roles;
  for (size_t s = 0; s < g.cycle_shapes.size(); ++s) {
    const auto& shape = g.cycle_shapes[s];
    for (size_t m = 0; m < shape.members.size(); ++m) {
      const auto& cycle = g.cycles[static_cast<size_t>(shape.members[m])];
      const size_t k = cycle.size();
      for (size_t i = 0; i < k; ++i) {
        const auto& n = g.nodes[static_cast<size_t>(cycle[(static_cast<size_t>(shape.offsets[m]) + i) % k])];
        const auto key = std::make_tuple(n.rank, n.kind == WaitNode::Kind::StreamHead ? -1 : n.thread,
                                         n.kind == WaitNode::Kind::StreamHead ? n.stream : -1);
        roles.emplace(key, Role{static_cast<int>(s), static_cast<int>(i), m == 0});
      }
    }
  }
  return roles;
}

std::vector<int> focus_ranks(const WaitForGraph& g) {
  std::vector<int> ranks;
  if (const auto* cycle = g.first_cycle()) {
    for (int n : *cycle) ranks.push_back(g.nodes[static_cast<size_t>(n)].rank);
  } else if (!g.cause_shapes.empty()) {
    const auto& e = g.edges[static_cast<size_t>(g.causes[static_cast<size_t>(g.cause_shapes.front().members.front())])];
    ranks = {g.nodes[static_cast<size_t>(e.from)].rank, g.nodes[static_cast<size_t>(e.to)].rank};
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

std::vector<size_t> steps_that_matter(const checker::CheckResult& r, const std::vector<int>& ranks, size_t max_steps) {
  const std::set<int> wanted(ranks.begin(), ranks.end());
  const model::World& w = *r.world;
  std::vector<size_t> steps;
  for (size_t i = 0; i < r.schedule.size(); ++i) {
    const auto& s = r.schedule[i];
    bool matters = false;
    switch (s.kind) {
      case StepKind::Complete:
        if (s.comm >= 0)
          for (int m : w.comms[static_cast<size_t>(s.comm)].members) matters = matters || wanted.count(m) > 0;
        break;
      case StepKind::CompletePair:
        matters = wanted.count(s.rank) > 0 || wanted.count(s.peer) > 0;
        break;
      default:
        matters = wanted.count(s.rank) > 0;
    }
    if (matters) steps.push_back(i);
  }
  if (max_steps > 0 && steps.size() > max_steps)
    steps.erase(steps.begin(), steps.end() - static_cast<std::ptrdiff_t>(max_steps));
  return steps;
}

namespace {

std::string marked(std::string text, const std::string& name, const char* mark) {
  if (name.empty()) return text;
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
    text.replace(at, name.size(), mark);
  return text;
}

}  // namespace

int role_comm(const model::World& w, const checker::BlockedCall& b) {
  return b.call >= 0 && !b.finished ? w.calls[static_cast<size_t>(b.call)].comm : -1;
}

std::string role_key(const model::World& w, const checker::BlockedCall& b) {
  std::string key =
      b.stream >= 0 ? std::string("stream")
                    : "thread " + w.programs[static_cast<size_t>(b.rank)].threads[static_cast<size_t>(b.thread)].name;
  if (b.finished) return key + "|finished";
  if (b.call < 0) return key + "|" + b.reason;
  const auto& c = w.calls[static_cast<size_t>(b.call)];
  std::string text = std::to_string(static_cast<int>(c.kind)) + "|" + c.text;
  if (c.comm >= 0) text = marked(text, w.comms[static_cast<size_t>(c.comm)].name, "\x01");
  // The stream the call runs on ("on pg_1"), which an import names after the comm.
  const int stream = b.stream >= 0 ? b.stream : c.stream;
  if (stream > 0) text = marked(text, w.streams[static_cast<size_t>(stream)], "\x02");
  return key + "|" + text;
}

std::string like_it_text(const checker::Shape& shape, size_t max_chars) {
  if (shape.members.size() < 2) return {};
  const std::vector<int> others(shape.lead_ranks.begin() + 1, shape.lead_ranks.end());
  std::set<int> distinct(others.begin(), others.end());
  std::string text = "and " + std::to_string(shape.members.size() - 1) + " like it";
  // A lead rank may lead several members (two cycles through one rank are two knots only if the
  // rank has two threads); the set says who, the count says how many.
  text += ", with rank " + std::to_string(shape.lead_ranks.front()) + "'s place taken by " +
          (distinct.size() == 1 ? "rank " : "ranks ") +
          ranks_text(std::vector<int>(distinct.begin(), distinct.end()), ",", max_chars);
  return text;
}

}  // namespace collmc::report
