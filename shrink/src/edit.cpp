#include "collmc/shrink/edit.h"

#include <algorithm>

namespace collmc::shrink {

using model::Call;
using model::ProgramNode;
using model::World;

Edit Edit::identity(const World& world) {
  Edit e;
  e.keep_rank.assign(static_cast<size_t>(world.ranks), 1);
  e.keep_comm.assign(world.comms.size(), 1);
  e.keep_call.assign(world.calls.size(), 1);
  e.programs = world.programs;
  return e;
}

namespace {

class Projector {
 public:
  Projector(const World& w, const Edit& e) : w_(w), e_(e) {}

  World run() {
    out_.name = w_.name;
    out_.knobs = w_.knobs;
    out_.expect = w_.expect;
    out_.buffers = w_.buffers;
    out_.streams = w_.streams;
    out_.dtypes = w_.dtypes;
    out_.redops = w_.redops;
    out_.keys = w_.keys;
    new_rank_.assign(static_cast<size_t>(w_.ranks), -1);
    for (int r = 0; r < w_.ranks; ++r)
      if (e_.keep_rank[static_cast<size_t>(r)]) new_rank_[static_cast<size_t>(r)] = out_.ranks++;
    project_comms();
    for (int r = 0; r < w_.ranks; ++r)
      if (new_rank_[static_cast<size_t>(r)] >= 0) project_rank(r);
    model::number_grown_comms(out_);  // the grown comms and their parent's numbering, as projected
    return std::move(out_);
  }

 private:
  void project_comms() {
    new_comm_.assign(w_.comms.size(), -1);
    for (const auto& c : w_.comms) {
      if (!e_.keep_comm[static_cast<size_t>(c.id)]) continue;
      model::CommInstance n = c;
      n.members.clear();
      for (int m : c.members)
        if (new_rank_[static_cast<size_t>(m)] >= 0) n.members.push_back(new_rank_[static_cast<size_t>(m)]);
      if (n.members.empty() || (c.members.size() >= 2 && n.members.size() < 2)) continue;
      n.id = static_cast<int>(out_.comms.size());
      new_comm_[static_cast<size_t>(c.id)] = n.id;
      out_.comms.push_back(std::move(n));
    }
  }

  // The call as the projected World has it, or false when it is dropped.
  bool project_call(const Call& c, Call& n) const {
    if (!e_.keep_call[static_cast<size_t>(c.id)]) return false;
    n = c;
    n.rank = new_rank_[static_cast<size_t>(c.rank)];
    if (c.comm >= 0) {
      n.comm = new_comm_[static_cast<size_t>(c.comm)];
      if (n.comm < 0) return false;
    }
    if (c.child >= 0) n.child = new_comm_[static_cast<size_t>(c.child)];
    if (c.peer >= 0) {
      if (c.peer >= w_.ranks) return false;
      n.peer = new_rank_[static_cast<size_t>(c.peer)];
      if (n.peer < 0) return false;
    }
    if (c.root >= 0) {
      n.root = c.root < w_.ranks ? new_rank_[static_cast<size_t>(c.root)] : -1;
      if (n.root < 0 && n.comm >= 0) n.root = out_.comms[static_cast<size_t>(n.comm)].members.front();
    }
    // The ranks an `init C [..]` or a `host_barrier KEY [..]` names, as the projection numbers them.
    n.members_view.clear();
    for (int m : c.members_view)
      if (m < w_.ranks && new_rank_[static_cast<size_t>(m)] >= 0)
        n.members_view.push_back(new_rank_[static_cast<size_t>(m)]);
    n.usage_error.clear();
    return true;
  }

  void project_rank(int rank) {
    const model::RankProgram& src = e_.programs[static_cast<size_t>(rank)];
    model::RankProgram prog;
    prog.rank = new_rank_[static_cast<size_t>(rank)];
    prog.threads.push_back(model::ThreadProgram{"main", {}});
    src_ = &src;
    prog_ = &prog;
    ProgramNode main;
    main.kind = ProgramNode::Kind::Seq;
    append(main, src.threads.front().body, 0);
    prog.threads.front().body = std::move(main);
    out_.programs.push_back(std::move(prog));
  }

  // Appends what `n` projects to onto the sequence `seq` (nested sequences are spliced).
  void append(ProgramNode& seq, const ProgramNode& n, int thread) {
    switch (n.kind) {
      case ProgramNode::Kind::Call: {
        Call c;
        if (!project_call(w_.calls[static_cast<size_t>(n.call)], c)) return;
        c.id = static_cast<int>(out_.calls.size());
        c.thread = thread;
        ProgramNode leaf;
        leaf.kind = ProgramNode::Kind::Call;
        leaf.call = c.id;
        out_.calls.push_back(std::move(c));
        seq.children.push_back(std::move(leaf));
        return;
      }
      case ProgramNode::Kind::Seq:
        for (const auto& child : n.children) append(seq, child, thread);
        return;
      case ProgramNode::Kind::Group: {
        ProgramNode g = sequence_of(n.children, thread);
        if (g.children.empty()) return;
        g.kind = ProgramNode::Kind::Group;
        seq.children.push_back(std::move(g));
        return;
      }
      case ProgramNode::Kind::AnyOrder: {
        ProgramNode any;
        any.kind = ProgramNode::Kind::AnyOrder;
        for (const auto& child : n.children) {
          ProgramNode one = sequence_of({child}, thread);
          if (!one.children.empty()) any.children.push_back(std::move(one));
        }
        if (any.children.size() == 1) {
          for (auto& c : any.children.front().children) seq.children.push_back(std::move(c));
        } else if (!any.children.empty()) {
          seq.children.push_back(std::move(any));
        }
        return;
      }
      case ProgramNode::Kind::Either: {
        ProgramNode either;
        either.kind = ProgramNode::Kind::Either;
        bool any_call = false;
        for (const auto& alt : n.children) {
          either.children.push_back(sequence_of({alt}, thread));
          any_call = any_call || !either.children.back().children.empty();
        }
        if (any_call) seq.children.push_back(std::move(either));
        return;
      }
      case ProgramNode::Kind::Spawn: {
        const model::ThreadProgram& t = src_->threads[static_cast<size_t>(n.thread)];
        const int id = static_cast<int>(prog_->threads.size());
        prog_->threads.push_back(model::ThreadProgram{t.name, {}});
        ProgramNode body = sequence_of({t.body}, id);
        if (body.children.empty()) {
          prog_->threads.pop_back();
          return;
        }
        prog_->threads[static_cast<size_t>(id)].body = std::move(body);
        ProgramNode spawn;
        spawn.kind = ProgramNode::Kind::Spawn;
        spawn.thread = id;
        seq.children.push_back(std::move(spawn));
        return;
      }
    }
  }

  ProgramNode sequence_of(const std::vector<ProgramNode>& nodes, int thread) {
    ProgramNode seq;
    seq.kind = ProgramNode::Kind::Seq;
    for (const auto& n : nodes) append(seq, n, thread);
    return seq;
  }

  const World& w_;
  const Edit& e_;
  World out_;
  std::vector<int> new_rank_;
  std::vector<int> new_comm_;
  const model::RankProgram* src_ = nullptr;
  model::RankProgram* prog_ = nullptr;
};

}  // namespace

World project(const World& world, const Edit& edit) { return Projector(world, edit).run(); }

}  // namespace collmc::shrink
