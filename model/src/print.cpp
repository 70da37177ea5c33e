#include "collmc/model/print.h"

#include <sstream>

namespace collmc::model {

namespace {

std::string size_text(uint64_t bytes) {
  constexpr uint64_t kKiB = 1ull << 10, kMiB = 1ull << 20, kGiB = 1ull << 30;
  if (bytes > 0 && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + "GiB";
  if (bytes > 0 && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + "MiB";
  if (bytes > 0 && bytes % kKiB == 0) return std::to_string(bytes / kKiB) + "KiB";
  return std::to_string(bytes);
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\n') continue;  // a name string stays on one line
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The name a rank body uses for a comm: the declaration's name (for a family, the instance holding
// the rank is found again by the resolver).
const std::string& comm_word(const World& w, int comm) { return w.comms[static_cast<size_t>(comm)].decl_name; }

std::string call_args(const World& w, const Call& c) {
  std::string out;
  if (c.count >= 0) out += " count=" + std::to_string(c.count);
  if (c.root >= 0) out += " root=" + std::to_string(c.root);
  if (c.dtype != 0) out += " dtype=" + w.dtypes[static_cast<size_t>(c.dtype)];
  if (c.redop != 0) out += " op=" + w.redops[static_cast<size_t>(c.redop)];
  if (!c.mpi_call.empty()) out += " call=" + c.mpi_call;
  if (!c.coll_config.empty()) out += " config=" + c.coll_config;
  if (c.tag != 0) out += " tag=" + (c.tag == kAnyTag ? std::string("any") : std::to_string(c.tag));
  if (c.buffered) out += " mode=buffered";
  if (c.win_mode != WinMode::Plain) out += " mode=" + std::string(win_mode_name(c.win_mode));
  if (c.stream != 0) out += " on " + w.streams[static_cast<size_t>(c.stream)];
  return out;
}

class Printer {
 public:
  explicit Printer(const World& w) : w_(w) {}

  std::string run(const std::string& header) {
    std::istringstream lines(header);
    for (std::string line; std::getline(lines, line);) out_ << "# " << line << "\n";
    out_ << "ranks " << w_.ranks << "\n";
    if (!w_.name.empty()) out_ << "name " << quoted(w_.name) << "\n";
    if (w_.expect) out_ << "expect " << verdict_name(*w_.expect) << "\n";
    if (w_.observed)
      out_ << "observed " << observed_outcome_name(w_.observed->outcome) << " " << quoted(w_.observed->source) << "\n";
    knobs();
    comms();
    histories();
    for (const auto& p : w_.processes) out_ << "process " << p.name << " = " << rank_list_text(p.ranks) << "\n";
    for (const auto& prog : w_.programs) rank(prog);
    return out_.str();
  }

 private:
  void knobs() {
    const Knobs defaults;
    const Knobs& k = w_.knobs;
    if (k.profile != defaults.profile) out_ << "set profile = " << profile_name(k.profile) << "\n";
    if (k.comm_mode != defaults.comm_mode) out_ << "set comm_mode = " << comm_mode_name(k.comm_mode) << "\n";
    if (k.runtime_connect != defaults.runtime_connect)
      out_ << "set runtime_connect = " << (k.runtime_connect ? "on" : "off") << "\n";
    if (k.nccl_version != defaults.nccl_version)
      out_ << "set nccl_version = " << nccl_version_text(k.nccl_version) << "\n";
    if (k.stream_progress != defaults.stream_progress)
      out_ << "set stream_progress = "
           << (k.stream_progress == StreamProgress::Serialized ? "serialized" : "independent") << "\n";
    if (k.mpi_progress != defaults.mpi_progress)
      out_ << "set mpi_progress = " << mpi_progress_name(k.mpi_progress) << "\n";
    if (k.mpi_tag_ub != defaults.mpi_tag_ub) out_ << "set mpi_tag_ub = " << k.mpi_tag_ub << "\n";
    if (k.rma_eager_init) out_ << "set rma_eager_init = on\n";
  }

  // Instances of one declaration stay together, in the World's order (which is the resolver's).
  void comms() {
    for (size_t i = 0; i < w_.comms.size();) {
      const CommInstance& first = w_.comms[i];
      const bool family = first.name != first.decl_name;
      out_ << "comm " << first.decl_name << " = ";
      size_t end = i + 1;
      while (end < w_.comms.size() && w_.comms[end].decl_name == first.decl_name) ++end;
      if (first.per_rank) {
        out_ << "per_rank";
      } else if (family) {
        out_ << "{";
        for (size_t j = i; j < end; ++j) out_ << (j > i ? ", " : "") << rank_list_text(w_.comms[j].members);
        out_ << "}";
      } else {
        out_ << rank_list_text(first.members);
      }
      if (first.mode != w_.knobs.comm_mode) out_ << " " << comm_mode_name(first.mode);
      if (first.uninit && !first.per_rank) out_ << " uninit";
      if (first.profile != w_.knobs.profile) out_ << " " << profile_name(first.profile);
      if (first.serialized) out_ << " serialized";
      if (first.launch_order_implicit) out_ << " launch_order_implicit";
      out_ << "\n";
      i = end;
    }
  }

  // `history` of the comms that have one (a family's instances share their declaration's).
  void histories() {
    for (size_t i = 0; i < w_.comms.size(); ++i) {
      const CommInstance& c = w_.comms[i];
      if (i > 0 && w_.comms[i - 1].decl_name == c.decl_name) continue;
      if (c.start_host == 0 && c.start_device == 0 && !c.start_connected) continue;
      out_ << "history " << c.decl_name;
      if (c.start_device > 0) out_ << " device=" << c.start_device;
      if (c.start_host > 0) out_ << " host=" << c.start_host;
      if (c.start_connected) out_ << " connected";
      out_ << "\n";
    }
  }

  void rank(const RankProgram& prog) {
    const ProgramNode& main = prog.threads.front().body;
    if (main.children.empty()) return;
    out_ << "rank " << prog.rank << " {\n";
    prog_ = &prog;
    sequence(main, 1);
    out_ << "}\n";
  }

  void indent(int depth) {
    for (int i = 0; i < depth; ++i) out_ << "  ";
  }

  void sequence(const ProgramNode& seq, int depth) {
    for (const auto& child : seq.children) node(child, depth);
  }

  // A child of any_order or an alternative of either: one statement, or a block.
  void block(const ProgramNode& n, int depth) {
    out_ << "{\n";
    sequence(n, depth + 1);
    indent(depth);
    out_ << "}";
  }

  void node(const ProgramNode& n, int depth) {
    switch (n.kind) {
      case ProgramNode::Kind::Call:
        indent(depth);
        out_ << print_call(w_, w_.calls[static_cast<size_t>(n.call)]) << "\n";
        return;
      case ProgramNode::Kind::Seq:
        indent(depth);
        block(n, depth);
        out_ << "\n";
        return;
      case ProgramNode::Kind::Group:
        indent(depth);
        out_ << "group ";
        block(n, depth);
        out_ << "\n";
        return;
      case ProgramNode::Kind::AnyOrder:
        indent(depth);
        out_ << "any_order {\n";
        for (const auto& child : n.children) {
          if (child.kind == ProgramNode::Kind::Seq && child.children.size() == 1 &&
              child.children.front().kind != ProgramNode::Kind::Seq) {
            node(child.children.front(), depth + 1);
          } else {
            indent(depth + 1);
            block(child, depth + 1);
            out_ << "\n";
          }
        }
        indent(depth);
        out_ << "}\n";
        return;
      case ProgramNode::Kind::Either:
        indent(depth);
        out_ << "either ";
        for (size_t i = 0; i < n.children.size(); ++i) {
          if (i) out_ << " or ";
          block(n.children[i], depth);
        }
        out_ << "\n";
        return;
      case ProgramNode::Kind::Spawn: {
        const ThreadProgram& t = prog_->threads[static_cast<size_t>(n.thread)];
        indent(depth);
        out_ << "thread " << t.name << " ";
        block(t.body, depth);
        out_ << "\n";
        return;
      }
    }
  }

  const World& w_;
  const RankProgram* prog_ = nullptr;
  std::ostringstream out_;
};

}  // namespace

std::string print_call(const World& w, const Call& c) {
  std::string op(op_name(c.kind));  // not const: the bare form returns it, moved
  auto buffer = [&](int b) { return w.buffers[static_cast<size_t>(b)]; };
  switch (op_form(c.kind)) {
    case OpForm::BufferSize:
      return op + " " + buffer(c.buffer) + " " + size_text(c.size);
    case OpForm::Buffer:
      return op + " " + buffer(c.buffer);
    case OpForm::Window:
      return op + " " + comm_word(w, c.comm) + " " + buffer(c.buffer) +
             (c.flag == RegFlag::Default   ? " default"
              : c.flag == RegFlag::GinOnly ? " gin"
                                           : "");
    case OpForm::CommBuffer:
      return op + " " + comm_word(w, c.comm) + " " + buffer(c.buffer);
    case OpForm::Comm:
      return op + " " + comm_word(w, c.comm) + (c.members_view.empty() ? "" : " " + rank_list_text(c.members_view));
    case OpForm::Split:
      return op + " " + (c.comm >= 0 ? comm_word(w, c.comm) : std::string("none")) + " -> " +
             (c.child >= 0 ? comm_word(w, c.child) : "none");
    case OpForm::Barrier:
      return op + " " + comm_word(w, c.comm) + call_args(w, c);
    case OpForm::PointToPoint:
      return op + " " + comm_word(w, c.comm) + " " + (c.any_source ? std::string("any") : std::to_string(c.peer)) +
             (c.kind == OpKind::Probe ? std::string() : " " + buffer(c.buffer)) + call_args(w, c);
    case OpForm::WindowTarget:
      return op + " " + comm_word(w, c.comm) + " " + std::to_string(c.peer) + " " + buffer(c.buffer) + call_args(w, c);
    case OpForm::WindowSync:
      return op + " " + comm_word(w, c.comm) + " " + buffer(c.buffer) + call_args(w, c);
    case OpForm::Bare:
      return op;
    case OpForm::SyncStream:
      return "sync " + w.streams[static_cast<size_t>(c.stream)];
    case OpForm::SyncDevice:
      return "sync device";
    case OpForm::PutSignal:
      return op + " " + comm_word(w, c.comm) + " " + std::to_string(c.peer) + " " + buffer(c.buffer) + " -> " +
             buffer(c.buffer2) + call_args(w, c);
    case OpForm::Signal:
      return op + " " + comm_word(w, c.comm) + " " + std::to_string(c.peer) + call_args(w, c);
    case OpForm::Key:
      // A call the resolver turned into its usage error (a collective on MPI_COMM_NULL): as written.
      if (c.key < 0) return c.text;
      if (c.kind == OpKind::MpiError && c.mpi_rule)
        return op + " " + std::string(mpi_rule_info(*c.mpi_rule).name) + " \"" + w.keys[static_cast<size_t>(c.key)] +
               "\"";
      return op + " \"" + w.keys[static_cast<size_t>(c.key)] + "\"";
    case OpForm::KeyRanks:
      return op + " \"" + w.keys[static_cast<size_t>(c.key)] + "\" " + rank_list_text(c.members_view);
    case OpForm::Collective:
      break;
  }
  return op + " " + comm_word(w, c.comm) + " " + buffer(c.buffer) + (c.buffer2 >= 0 ? " -> " + buffer(c.buffer2) : "") +
         call_args(w, c);
}

std::string print_world(const World& world, const std::string& header) { return Printer(world).run(header); }

}  // namespace collmc::model
