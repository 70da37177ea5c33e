#include "collmc/checker/control.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace collmc::checker {

namespace {

using model::ProgramNode;

class Compiler {
 public:
  Compiler(const model::World& w, size_t max_nodes) : w_(w), max_nodes_(max_nodes) {}

  ControlProgram run() {
    for (const auto& prog : w_.programs) {
      std::vector<ThreadControl> threads;
      for (const auto& t : prog.threads) {
        int32_t end = new_node();
        int32_t entry = compile(t.body, end);
        threads.push_back(ThreadControl{entry, end});
      }
      out_.threads.push_back(std::move(threads));
    }
    return std::move(out_);
  }

 private:
  int32_t new_node() {
    if (out_.nodes.size() >= max_nodes_)
      throw std::length_error("the control automaton exceeds " + std::to_string(max_nodes_) +
                              " nodes (any_order or group alternatives too large)");
    out_.nodes.emplace_back();
    return static_cast<int32_t>(out_.nodes.size() - 1);
  }

  // Edges always point to nodes created earlier (lower numbers); Semantics relies on this order.
  int32_t edge_node(ControlEdge e) {
    int32_t n = new_node();
    out_.nodes[static_cast<size_t>(n)].edges.push_back(e);
    return n;
  }

  int32_t choice_node(const std::vector<int32_t>& targets) {
    if (targets.size() == 1) return targets.front();
    int32_t n = new_node();
    for (int32_t t : targets) {
      ControlEdge e;
      e.kind = ControlEdge::Kind::Choice;
      e.target = t;
      out_.nodes[static_cast<size_t>(n)].edges.push_back(e);
    }
    return n;
  }

  // Builds backwards: the returned node runs `node`, then continues at `cont`.
  int32_t compile(const ProgramNode& node, int32_t cont) {
    switch (node.kind) {
      case ProgramNode::Kind::Call: {
        ControlEdge e;
        e.kind = ControlEdge::Kind::Call;
        e.call = node.call;
        e.target = cont;
        return edge_node(e);
      }
      case ProgramNode::Kind::Spawn: {
        ControlEdge e;
        e.kind = ControlEdge::Kind::Spawn;
        e.thread = node.thread;
        e.target = cont;
        return edge_node(e);
      }
      case ProgramNode::Kind::Seq: {
        int32_t at = cont;
        for (auto it = node.children.rbegin(); it != node.children.rend(); ++it) at = compile(*it, at);
        return at;
      }
      case ProgramNode::Kind::Either: {
        std::vector<int32_t> targets;
        for (const auto& alt : node.children) targets.push_back(compile(alt, cont));
        return choice_node(targets);
      }
      case ProgramNode::Kind::AnyOrder: {
        std::map<uint32_t, int32_t> memo;
        return any_order(node, 0, cont, memo);
      }
      case ProgramNode::Kind::Group: {
        std::vector<std::vector<int32_t>> alts = linearize(node);
        std::vector<int32_t> targets;
        for (auto& calls : alts) {
          ControlEdge e;
          e.kind = ControlEdge::Kind::Group;
          e.group = static_cast<int32_t>(out_.groups.size());
          out_.groups.push_back(std::move(calls));
          e.target = cont;
          targets.push_back(edge_node(e));
        }
        return choice_node(targets);
      }
    }
    return cont;
  }

  int32_t any_order(const ProgramNode& node, uint32_t done, int32_t cont, std::map<uint32_t, int32_t>& memo) {
    const auto n = static_cast<uint32_t>(node.children.size());
    if (done == (n >= 32 ? ~0u : (1u << n) - 1)) return cont;
    if (auto it = memo.find(done); it != memo.end()) return it->second;
    std::vector<int32_t> targets;
    for (uint32_t i = 0; i < n; ++i) {
      if (done & (1u << i)) continue;
      int32_t after = any_order(node, done | (1u << i), cont, memo);
      targets.push_back(compile(node.children[i], after));
    }
    int32_t entry = choice_node(targets);
    memo[done] = entry;
    return entry;
  }

  // Every way a group's body can be resolved, as lists of calls issued together.
  std::vector<std::vector<int32_t>> linearize(const ProgramNode& node) {
    constexpr size_t kMaxAlternatives = 4096;
    auto cap = [&](std::vector<std::vector<int32_t>>& v) {
      if (v.size() > kMaxAlternatives)
        throw std::length_error("a group's body has more than 4096 resolutions of its choices");
    };
    auto concat = [&](const std::vector<std::vector<int32_t>>& a, const std::vector<std::vector<int32_t>>& b) {
      std::vector<std::vector<int32_t>> out;
      for (const auto& x : a)
        for (const auto& y : b) {
          auto z = x;
          z.insert(z.end(), y.begin(), y.end());
          out.push_back(std::move(z));
        }
      cap(out);
      return out;
    };
    switch (node.kind) {
      case ProgramNode::Kind::Call:
        return {{node.call}};
      case ProgramNode::Kind::Spawn:
        return {{}};
      case ProgramNode::Kind::Seq:
      case ProgramNode::Kind::Group: {
        std::vector<std::vector<int32_t>> acc{{}};
        for (const auto& c : node.children) acc = concat(acc, linearize(c));
        return acc;
      }
      case ProgramNode::Kind::Either: {
        std::vector<std::vector<int32_t>> out;
        for (const auto& c : node.children) {
          auto alts = linearize(c);
          out.insert(out.end(), alts.begin(), alts.end());
          cap(out);
        }
        return out;
      }
      case ProgramNode::Kind::AnyOrder: {
        // Order inside a group matters only for slots of one comm; enumerate the permutations.
        std::vector<size_t> idx(node.children.size());
        for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
        std::vector<std::vector<int32_t>> out;
        do {
          std::vector<std::vector<int32_t>> acc{{}};
          for (size_t i : idx) acc = concat(acc, linearize(node.children[i]));
          out.insert(out.end(), acc.begin(), acc.end());
          cap(out);
        } while (std::next_permutation(idx.begin(), idx.end()));
        return out;
      }
    }
    return {{}};
  }

  const model::World& w_;
  size_t max_nodes_;
  ControlProgram out_;
};

}  // namespace

ControlProgram compile_control(const model::World& world, size_t max_nodes) { return Compiler(world, max_nodes).run(); }

}  // namespace collmc::checker
