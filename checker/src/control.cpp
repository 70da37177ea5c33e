#include "collmc/checker/control.h"

#include <algorithm>
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
    out_.nodes.back().scope = scopes_.empty() ? -1 : scopes_.back();
    return static_cast<int32_t>(out_.nodes.size() - 1);
  }

  // Edges point to nodes created earlier (lower numbers), except those of a dispatch node, which enter
  // its children (ControlProgram::lookahead relies on this).
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
      case ProgramNode::Kind::AnyOrder:
        return any_order(node, cont);
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

  // One dispatch node; each child compiled once, continuing back at the dispatch node (the thread's
  // done-set says which children are left). One child needs no dispatch.
  int32_t any_order(const ProgramNode& node, int32_t cont) {
    if (node.children.empty()) return cont;
    if (node.children.size() == 1) return compile(node.children.front(), cont);
    if (node.children.size() > 64)
      throw std::length_error("an any_order has more than 64 children (its done-set is 64 bits)");
    const auto id = static_cast<int32_t>(out_.any_orders.size());
    AnyOrderControl a;
    a.cont = cont;
    a.depth = static_cast<uint32_t>(scopes_.size());
    a.dispatch = new_node();
    out_.nodes[static_cast<size_t>(a.dispatch)].any_order = id;
    out_.any_orders.push_back(a);
    scopes_.push_back(id);
    std::vector<int32_t> entries;
    for (const auto& child : node.children) entries.push_back(compile(child, a.dispatch));
    scopes_.pop_back();
    auto& d = out_.nodes[static_cast<size_t>(out_.any_orders[static_cast<size_t>(id)].dispatch)];
    for (int32_t entry : entries) {
      ControlEdge e;
      e.kind = ControlEdge::Kind::Choice;
      e.target = entry;
      d.edges.push_back(e);
    }
    out_.any_orders[static_cast<size_t>(id)].children = std::move(entries);
    return out_.any_orders[static_cast<size_t>(id)].dispatch;
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
  std::vector<int32_t> scopes_;  // the any_orders whose children are being compiled, innermost last
};

}  // namespace

ControlProgram compile_control(const model::World& world, size_t max_nodes) { return Compiler(world, max_nodes).run(); }

size_t ControlProgram::edge_count(const ControlPosition& at) const {
  const ControlNode& n = nodes[static_cast<size_t>(at.node)];
  if (n.any_order < 0) return n.edges.size();
  const AnyOrderControl& a = any_orders[static_cast<size_t>(n.any_order)];
  return static_cast<size_t>(std::popcount(a.all() & ~at.done[a.depth]));
}

const ControlEdge& ControlProgram::edge_at(const ControlPosition& at, size_t edge) const {
  const ControlNode& n = nodes[static_cast<size_t>(at.node)];
  if (n.any_order < 0) return n.edges.at(edge);
  return n.edges[static_cast<size_t>(child_at(at, edge))];
}

int ControlProgram::child_at(const ControlPosition& at, size_t edge) const {
  const AnyOrderControl& a = any_orders[static_cast<size_t>(nodes[static_cast<size_t>(at.node)].any_order)];
  uint64_t left = a.all() & ~at.done[a.depth];
  for (size_t e = 0; e < edge && left != 0; ++e) left &= left - 1;
  if (left == 0) throw std::logic_error("any_order child out of range");
  return std::countr_zero(left);
}

void ControlProgram::take(ControlPosition& at, size_t edge) const {
  const ControlNode& n = nodes[static_cast<size_t>(at.node)];
  if (n.any_order >= 0) {
    const AnyOrderControl& a = any_orders[static_cast<size_t>(n.any_order)];
    const int child = child_at(at, edge);
    at.done[a.depth] |= 1ull << child;
    at.node = a.children[static_cast<size_t>(child)];
  } else {
    at.node = n.edges.at(edge).target;
  }
  settle(at);
}

void ControlProgram::enter(ControlPosition& at, int32_t node) const {
  at.node = node;
  at.done.clear();
  settle(at);
}

void ControlProgram::settle(ControlPosition& at) const {
  while (at.node >= 0) {
    const ControlNode& n = nodes[static_cast<size_t>(at.node)];
    if (n.any_order < 0) return;
    const AnyOrderControl& a = any_orders[static_cast<size_t>(n.any_order)];
    if (at.done.size() == a.depth) at.done.push_back(0);  // entered from before the any_order
    const uint64_t left = a.all() & ~at.done[a.depth];
    if (left == 0) {
      at.done.pop_back();
      at.node = a.cont;
    } else if ((left & (left - 1)) == 0) {
      at.done[a.depth] |= left;
      at.node = a.children[static_cast<size_t>(std::countr_zero(left))];
    } else {
      return;
    }
  }
}

ControlLookahead ControlProgram::lookahead(const std::function<bool(const ControlEdge&)>& edge_has) const {
  ControlLookahead out;
  out.local_.assign(nodes.size(), 0);
  out.children_.assign(any_orders.size(), 0);
  out.after_.assign(any_orders.size(), 0);
  std::vector<char> known(nodes.size(), 0);
  // Where an edge from node `from` leads: back to the dispatch node of `from`'s own any_order ends the
  // child (what remains there is the done-set's business), anything else continues.
  std::function<bool(int32_t)> local;
  auto follow = [&](int32_t from, int32_t to) {
    const ControlNode& t = nodes[static_cast<size_t>(to)];
    if (t.any_order >= 0 && nodes[static_cast<size_t>(from)].scope == t.any_order) return false;
    return local(to);
  };
  local = [&](int32_t node) -> bool {
    const auto i = static_cast<size_t>(node);
    if (known[i]) return out.local_[i] != 0;
    const ControlNode& n = nodes[i];
    bool has = false;
    if (n.any_order >= 0) {
      const auto ao = static_cast<size_t>(n.any_order);
      const AnyOrderControl& a = any_orders[ao];
      for (size_t c = 0; c < a.children.size(); ++c)
        if (local(a.children[c])) out.children_[ao] |= 1ull << c;
      out.after_[ao] = follow(node, a.cont) ? 1 : 0;
      has = out.children_[ao] != 0 || out.after_[ao] != 0;
    } else {
      for (const auto& e : n.edges) has = edge_has(e) || follow(node, e.target) || has;
    }
    known[i] = 1;
    out.local_[i] = has ? 1 : 0;
    return has;
  };
  // Upwards, so that the recursion only goes as deep as any_orders follow one another.
  for (size_t n = 0; n < nodes.size(); ++n) local(static_cast<int32_t>(n));
  return out;
}

bool ControlLookahead::ahead(const ControlProgram& program, const ControlPosition& at) const {
  const ControlNode& n = program.nodes[static_cast<size_t>(at.node)];
  int32_t scope = n.scope;
  bool has = false;
  if (n.any_order >= 0 && at.done.size() > program.any_orders[static_cast<size_t>(n.any_order)].depth)
    scope = n.any_order;  // at the dispatch node with its frame: what is left of it is the frame's
  else
    has = local_[static_cast<size_t>(at.node)] != 0;
  while (!has && scope >= 0) {
    const auto ao = static_cast<size_t>(scope);
    const AnyOrderControl& a = program.any_orders[ao];
    has = (children_[ao] & ~at.done[a.depth]) != 0 || after_[ao] != 0;
    scope = program.nodes[static_cast<size_t>(a.dispatch)].scope;
  }
  return has;
}

}  // namespace collmc::checker
