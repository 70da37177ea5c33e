#include "choices.h"

#include <algorithm>
#include <limits>

namespace collmc::shrink {

using model::ProgramNode;

namespace {

bool is_choice(const ProgramNode& n) {
  return n.kind == ProgramNode::Kind::AnyOrder || n.kind == ProgramNode::Kind::Either;
}

void collect(const ProgramNode& n, ChoicePoint& at, std::vector<ChoicePoint>& out) {
  if (is_choice(n)) out.push_back(at);
  for (size_t i = 0; i < n.children.size(); ++i) {
    at.path.push_back(i);
    collect(n.children[i], at, out);
    at.path.pop_back();
  }
}

// The earliest position of a call under `n`; max() when none was reached.
long first_position(const ProgramNode& n, const std::vector<long>& position) {
  long best = std::numeric_limits<long>::max();
  if (n.kind == ProgramNode::Kind::Call && position[static_cast<size_t>(n.call)] >= 0)
    best = position[static_cast<size_t>(n.call)];
  for (const auto& c : n.children) best = std::min(best, first_position(c, position));
  return best;
}

ProgramNode sequence(std::vector<ProgramNode> children) {
  ProgramNode seq;
  seq.kind = ProgramNode::Kind::Seq;
  seq.children = std::move(children);
  return seq;
}

}  // namespace

std::vector<ChoicePoint> choice_points(const std::vector<model::RankProgram>& programs) {
  std::vector<ChoicePoint> out;
  for (const auto& prog : programs)
    for (size_t t = 0; t < prog.threads.size(); ++t) {
      ChoicePoint at;
      at.rank = prog.rank;
      at.thread = static_cast<int>(t);
      collect(prog.threads[t].body, at, out);
    }
  return out;
}

ProgramNode& node_at(std::vector<model::RankProgram>& programs, const ChoicePoint& point) {
  ProgramNode* n = &programs[static_cast<size_t>(point.rank)].threads[static_cast<size_t>(point.thread)].body;
  for (size_t i : point.path) n = &n->children[i];
  return *n;
}

std::vector<long> executed_positions(const checker::CheckResult& result, size_t calls) {
  std::vector<long> position(calls, -1);
  long next = 0;
  for (const auto& rank : result.executed)
    for (const auto& thread : rank)
      for (int call : thread) position[static_cast<size_t>(call)] = next++;
  for (const auto& b : result.blocked)
    if (b.call >= 0 && position[static_cast<size_t>(b.call)] < 0) position[static_cast<size_t>(b.call)] = next++;
  return position;
}

std::vector<ProgramNode> resolutions(const ProgramNode& choice, const std::vector<long>& position) {
  constexpr long kUnreached = std::numeric_limits<long>::max();
  std::vector<ProgramNode> out;
  if (choice.kind == ProgramNode::Kind::AnyOrder) {
    std::vector<std::pair<long, size_t>> order;
    for (size_t i = 0; i < choice.children.size(); ++i)
      order.emplace_back(first_position(choice.children[i], position), i);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<ProgramNode> children;
    for (const auto& [pos, i] : order) children.push_back(choice.children[i]);
    out.push_back(sequence(std::move(children)));
    return out;
  }
  for (const auto& alt : choice.children)
    if (first_position(alt, position) != kUnreached) {
      out.push_back(sequence({alt}));
      return out;
    }
  for (const auto& alt : choice.children) out.push_back(sequence({alt}));
  return out;
}

}  // namespace collmc::shrink
