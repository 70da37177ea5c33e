#include <algorithm>
#include <map>
#include <set>

#include "collmc/model/parser.h"
#include "collmc/model/world.h"

namespace collmc::model {

bool CommInstance::has_member(int rank) const { return member_index(rank) >= 0; }

int CommInstance::member_index(int rank) const {
  auto it = std::lower_bound(members.begin(), members.end(), rank);
  if (it == members.end() || *it != rank) return -1;
  return static_cast<int>(it - members.begin());
}

namespace {

struct DtypeInfo {
  const char* name;
  uint64_t size;
};
constexpr DtypeInfo kDtypes[] = {
    {"float32", 4}, {"float", 4},   {"f32", 4},    {"float16", 2}, {"half", 2},   {"f16", 2},        {"bfloat16", 2},
    {"bf16", 2},    {"float64", 8}, {"double", 8}, {"f64", 8},     {"int8", 1},   {"char", 1},       {"uint8", 1},
    {"int32", 4},   {"int", 4},     {"uint32", 4}, {"int64", 8},   {"uint64", 8}, {"float8e4m3", 1}, {"float8e5m2", 1},
};
constexpr const char* kRedops[] = {"sum", "prod", "max", "min", "avg"};
constexpr const char* kThreadPlacement = "'thread' must stand directly inside a rank body (or a 'when' there)";
// Limits on the unrolled program (every rank together).
// 2^20 calls, or 32 per rank in a larger world: a generated Megatron layout has about 14 per rank, so the
// largest world (model::kMaxWorldRanks) of such a layout resolves.
constexpr uint64_t kMaxCalls = 1ull << 20;
constexpr uint64_t kMaxCallsPerRank = 32;
constexpr uint64_t kMaxIterations = 1ull << 24;

// MPI's null handles as the language writes them (`barrier null`, `dtype=null`, `op=null`; mpi profile).
constexpr const char* kNullComm = "null";
constexpr const char* kNullHandle = "null";

bool is_open_dtype(const std::string& d) { return d == "any" || (d.rfind("mpi_", 0) == 0 && d.size() > 4); }

std::string canonical_dtype(const std::string& d) {
  if (d == "float" || d == "f32") return "float32";
  if (d == "half" || d == "f16") return "float16";
  if (d == "bf16") return "bfloat16";
  if (d == "double" || d == "f64") return "float64";
  if (d == "char") return "int8";
  if (d == "int") return "int32";
  return d;
}

class Resolver {
 public:
  explicit Resolver(const Scenario& sc) : sc_(sc) {}

  World run() {
    w_.source = sc_.source;
    w_.name = sc_.name;
    w_.ranks = sc_.ranks;
    w_.knobs = sc_.knobs;
    w_.expect = sc_.expect;
    if (sc_.nccl_version_loc && !known_nccl_release(sc_.knobs.nccl_version)) {
      const std::string nearest = nccl_version_text(nearest_known_nccl_release(sc_.knobs.nccl_version));
      w_.warnings.push_back(
          Diagnostic{*sc_.nccl_version_loc, "NCCL " + nccl_version_text(sc_.knobs.nccl_version) +
                                                " is not a release collmc knows; the nearest known is " + nearest});
      w_.notes.push_back("NCCL " + nccl_version_text(sc_.knobs.nccl_version) +
                         " is not a release collmc knows (nearest: " + nearest +
                         "): the version rules are applied by number");
    }
    w_.observed = sc_.observed;
    w_.streams.push_back("main");
    w_.dtypes.push_back("float32");
    w_.redops.push_back("sum");
    for (const auto& decl : sc_.comms) {
      const std::vector<std::vector<int>> instances =
          decl.per_rank ? std::vector<std::vector<int>>{per_rank_members(decl)} : decl.instances;
      for (size_t i = 0; i < instances.size(); ++i) {
        CommInstance c;
        c.id = static_cast<int>(w_.comms.size());
        c.decl_name = decl.name;
        c.instance = static_cast<int>(i);
        c.members = instances[i];
        c.mode = decl.mode.value_or(sc_.knobs.comm_mode);
        c.uninit = decl.uninit;
        c.per_rank = decl.per_rank;
        c.profile = decl.profile.value_or(sc_.knobs.profile);
        c.serialized = decl.serialized;
        c.launch_order_implicit = decl.launch_order_implicit;
        if (c.launch_order_implicit && i == 0 && sc_.knobs.nccl_version < kCollConfig)
          w_.warnings.push_back(Diagnostic{decl.loc,
                                           "launch_order_implicit (ncclConfig_t.launchOrderImplicit) is an "
                                           "NCCL 2.31 setting; the scenario models " +
                                               nccl_version_text(sc_.knobs.nccl_version) + ", where it has no effect"});
        c.loc = decl.loc;
        if (decl.family) {
          std::string n = decl.name + "{";
          // Appended piece by piece: `"," + std::to_string(...)` here trips GCC 12's -Wrestrict false
          // positive at -O3 (a Release build).
          // Every member up to 64; past that (a data-parallel group of a 16k-rank job) the first eight,
          // the last and the count, so that messages naming the comm stay short.
          const size_t shown = c.members.size() <= 64 ? c.members.size() : 8;
          for (size_t m = 0; m < shown; ++m) {
            if (m > 0) n += ',';
            n += std::to_string(c.members[m]);
          }
          if (shown < c.members.size()) {
            n += ",...,";
            n += std::to_string(c.members.back());
            n += " (";
            n += std::to_string(c.members.size());
            n += " ranks)";
          }
          c.name = n + "}";
        } else {
          c.name = decl.name;
        }
        decl_index_[decl.name].push_back(c.id);
        w_.comms.push_back(std::move(c));
      }
    }
    // `history`: the state an import's left-out calls leave behind, on every instance of the comm. An
    // MPI comm has no connect, and its collectives take host slots: `connected` and device= are NCCL's.
    for (const auto& h : sc_.histories)
      for (int id : known_comm(h.comm, h.comm_loc)) {
        CommInstance& c = w_.comms[static_cast<size_t>(id)];
        if (c.profile == Profile::Mpi && (h.connected || h.device > 0))
          throw InputError(h.loc, "history of '" + h.comm +
                                      "', an mpi comm: only host=N applies (MPI has no "
                                      "device slots and no connect)");
        c.start_host = h.host;
        c.start_device = h.device;
        c.start_connected = h.connected;
      }
    // Names and placement are checked on the text, so that a body no rank runs (a `rank *` every
    // rank overrides, a `when` for ranks without that body, `repeat 0`) cannot hide an error.
    for (const auto& b : sc_.bodies) check_statements(b.body, true, false);
    const RankBody* star = nullptr;
    std::map<int, const RankBody*> own;
    for (const auto& b : sc_.bodies) {
      if (b.star) star = &b;
      for (int r : b.ranks) own[r] = &b;
    }
    for (int r = 0; r < sc_.ranks; ++r) {
      const RankBody* body = own.count(r) ? own[r] : star;
      RankProgram prog;
      prog.rank = r;
      prog.threads.push_back(ThreadProgram{"main", {}});
      rank_ = r;
      prog_ = &prog;
      if (body) prog.threads[0].body = top_body(body->body, 0);
      w_.programs.push_back(std::move(prog));
    }
    check_put_targets();
    note_peers_after_wildcards();
    number_grown_comms(w_);
    processes();
    warn_ranks_without_body(star != nullptr, own);
    warn_misspelt_buffers();
    {
      const bool rooted = std::any_of(w_.calls.begin(), w_.calls.end(), [&](const Call& c) {
        return takes_root(c.kind) && w_.profile_of(c) == Profile::Mpi;
      });
      if (rooted) switch (sc_.knobs.mpi_progress) {
          case MpiProgress::Portable:
            w_.notes.push_back(
                "mpi: broadcast and reduce are checked under every progress model MPI allows (mpi_progress = "
                "sync, strong and weak: MPI 4.1 sec. 2.9, 6.14); a hang any of them reaches is reported, naming "
                "it; set mpi_progress = NAME to check one library's behaviour only");
            break;
          case MpiProgress::Sync:
            w_.notes.push_back(
                "mpi_progress = sync: broadcast and reduce are assumed to synchronize every member; a real MPI "
                "may let some ranks leave early (eager protocol for small messages): set mpi_progress = strong "
                "or weak to check that");
            break;
          case MpiProgress::Strong:
            w_.notes.push_back(
                "mpi_progress = strong: a broadcast's root and a reduce's other ranks leave at once; the others "
                "complete without them");
            break;
          case MpiProgress::Weak:
            w_.notes.push_back(
                "mpi_progress = weak: a broadcast's root and a reduce's other ranks leave at once; the others "
                "complete only once each of them entered MPI again (a rank blocked outside MPI moves no messages)");
            break;
        }
    }
    return std::move(w_);
  }

 private:
  // `ranks 3` with a body for rank 0 only: ranks 1 and 2 do nothing, which the language allows (a
  // rank with no body) but which is rarely meant; every `deadlock` then names the idle ranks.
  // An imported MPI run (`observed`): a call after a wildcard receive keeps the peer the run recorded, where
  // the program may have taken it from the source the receive matched (MPI_Status.MPI_SOURCE); a schedule in
  // which another sender matches first then still names the recorded peer (the review's N7). Said once per
  // scenario, with the first such rank and calls.
  void note_peers_after_wildcards() {
    if (!w_.observed) return;
    // One pass over the calls (a rank's in program order): per rank its first wildcard and the calls after it.
    std::vector<const Call*> wildcard(static_cast<size_t>(w_.ranks), nullptr);
    std::vector<std::vector<const Call*>> after(static_cast<size_t>(w_.ranks));
    for (const Call& c : w_.calls) {
      const auto r = static_cast<size_t>(c.rank);
      if (!wildcard[r] && c.any_source && (c.kind == OpKind::Recv || c.kind == OpKind::Probe)) {
        wildcard[r] = &c;
      } else if (wildcard[r] && c.peer >= 0 && is_p2p(c.kind) && after[r].size() < 4) {
        after[r].push_back(&c);
      }
    }
    size_t ranks = 0;
    std::string first;
    for (size_t r = 0; r < after.size(); ++r) {
      if (after[r].empty() || ranks++ > 0) continue;
      first = "rank " + std::to_string(r) + "'s `" + wildcard[r]->text + "` (" + wildcard[r]->loc.str() +
              ") is followed by ";
      for (size_t i = 0; i < after[r].size() && i < 3; ++i)
        first += (i ? ", `" : "`") + after[r][i]->text + "` (" + after[r][i]->loc.str() + ")";
      if (after[r].size() > 3) first += ", ...";
    }
    if (ranks == 0) return;
    w_.notes.push_back(first + (ranks > 1 ? " (and so " + std::to_string(ranks - 1) + " more rank(s))" : "") +
                       ": their peers are the ones the recorded run used; where the program took a peer from the "
                       "source the wildcard receive matched (MPI_Status.MPI_SOURCE), a schedule in which another "
                       "sender matches first still names the recorded peer, which the program would not");
  }

  void warn_ranks_without_body(bool has_star, const std::map<int, const RankBody*>& own) {
    if (has_star || sc_.bodies.empty()) return;
    std::vector<int> idle;
    for (int r = 0; r < sc_.ranks; ++r)
      if (!own.count(r)) idle.push_back(r);
    if (idle.empty()) return;
    std::string list;
    for (size_t i = 0; i < idle.size() && i < 8; ++i) list += (i ? ", " : "") + std::to_string(idle[i]);
    if (idle.size() > 8) list += ", ... (" + std::to_string(idle.size()) + " ranks)";
    w_.warnings.push_back(
        Diagnostic{sc_.ranks_loc, "rank" + std::string(idle.size() == 1 ? " " : "s ") + list +
                                      (idle.size() == 1 ? " has no body and does nothing; give it one"
                                                        : " have no body and do nothing; give them one") +
                                      " (`rank * { ... }` for every rank "
                                      "without its own) or lower `ranks`"});
  }

  // A buffer a rank uses but never allocates is a plain cudaMalloc buffer (LANGUAGE.md); when its
  // name is one edit from a buffer the rank does allocate, it is most likely a typo (`wx` for `wa`).
  void warn_misspelt_buffers() {
    std::vector<std::vector<std::string>> allocated(static_cast<size_t>(w_.ranks));
    for (const auto& c : w_.calls)
      if ((c.kind == OpKind::Alloc || c.kind == OpKind::CudaMalloc) && c.buffer >= 0)
        allocated[static_cast<size_t>(c.rank)].push_back(w_.buffers[static_cast<size_t>(c.buffer)]);
    std::set<std::pair<std::string, std::string>> warned;  // (location, buffer): a shared body warns once
    for (const auto& c : w_.calls) {
      if (c.kind == OpKind::Alloc || c.kind == OpKind::CudaMalloc) continue;
      const auto& mine = allocated[static_cast<size_t>(c.rank)];
      for (int b : {c.buffer, c.buffer2}) {
        if (b < 0) continue;
        const std::string& name = w_.buffers[static_cast<size_t>(b)];
        if (std::find(mine.begin(), mine.end(), name) != mine.end()) continue;
        const auto guess = closest_spelling(name, mine);
        if (!guess || !warned.insert({c.loc.str(), name}).second) continue;
        w_.warnings.push_back(Diagnostic{
            c.loc, "buffer '" + name + "' is never allocated on rank " + std::to_string(c.rank) +
                       ", so it is a plain cudaMalloc buffer made before the program starts; did you mean '" + *guess +
                       "'?"});
      }
    }
  }

  // Throws for what is wrong whichever rank runs the statements: a misplaced `thread`, an unknown
  // communicator, datatype or reduction, a call that cannot stand in a group.
  void check_statements(const std::vector<Stmt>& stmts, bool top, bool in_group) const {
    for (const auto& s : stmts) {
      switch (s.kind) {
        case StmtKind::Op:
          check_names(s);
          if (in_group) check_group_member(s);
          break;
        case StmtKind::Thread:
          if (!top) throw InputError(s.loc, kThreadPlacement);
          check_statements(s.body, false, false);
          break;
        case StmtKind::When:
          check_statements(s.body, top, in_group);
          break;
        case StmtKind::Group:
          check_statements(s.body, false, true);
          break;
        case StmtKind::Either:
          for (const auto& alt : s.alternatives) check_statements(alt, false, in_group);
          break;
        default:
          check_statements(s.body, false, in_group);
          break;
      }
    }
  }

  void check_names(const Stmt& s) const {
    if (s.any_source && sc_.knobs.profile != Profile::Mpi)
      throw InputError(s.peer_loc, "'" + std::string(op_name(s.op)) +
                                       " COMM any' (MPI_ANY_SOURCE) needs 'set profile = mpi': NCCL has no wildcard "
                                       "receive");
    if (s.op == OpKind::Probe && stmt_profile(s) != Profile::Mpi)
      throw InputError(s.loc, "'probe' (MPI_Probe) needs an mpi communicator: NCCL has no probe");
    if (mpi_only(s.op) && (s.op == OpKind::MpiFinalize ? sc_.knobs.profile : stmt_profile(s)) != Profile::Mpi)
      throw InputError(
          s.loc,
          "'" + std::string(op_name(s.op)) + "' (" + std::string(op_info(s.op).mpi_name) + ") needs " +
              (s.op == OpKind::MpiFinalize ? std::string("'set profile = mpi'") : std::string("an mpi communicator")) +
              ": NCCL has no such call");
    if (s.args.tag && sc_.knobs.profile != Profile::Mpi)
      throw InputError(s.args.tag_loc, "'tag=' needs 'set profile = mpi': NCCL's send and recv have no tags");
    if (s.comm == kNullComm) {
      if (sc_.knobs.profile != Profile::Mpi)
        throw InputError(s.comm_loc, "'null' (MPI_COMM_NULL) needs 'set profile = mpi': NCCL has no null communicator");
    } else if (!s.comm.empty()) {
      known_comm(s.comm, s.comm_loc);
    }
    if (op_form(s.op) == OpForm::Split && !s.child.empty()) known_comm(s.child, s.child_loc);
    if (!s.args.dtype.empty()) {
      std::string d = canonical_dtype(s.args.dtype);
      if (d == kNullHandle && stmt_profile(s) != Profile::Mpi)
        throw InputError(s.loc, "'dtype=null' (MPI_DATATYPE_NULL) needs an mpi communicator");
      // `any`: a type the trace could not say (never compared); `mpi_NAME`: an MPI type the list does not name
      // or a flattened type signature (compared by name). Issue 32.
      bool known =
          std::any_of(std::begin(kDtypes), std::end(kDtypes), [&](const DtypeInfo& i) { return d == i.name; }) ||
          is_open_dtype(d) || d == kNullHandle;
      if (!known)
        throw InputError(s.loc, "unknown dtype '" + s.args.dtype +
                                    "': expected float32, float16, bfloat16, float64, int8, uint8, int32, "
                                    "uint32, int64, uint64, float8e4m3, float8e5m2, any or mpi_NAME");
    }
    if (!s.args.redop.empty()) {
      bool known =
          std::any_of(std::begin(kRedops), std::end(kRedops), [&](const char* r) { return s.args.redop == r; });
      if (s.args.redop == kNullHandle && stmt_profile(s) != Profile::Mpi)
        throw InputError(s.loc, "'op=null' (MPI_OP_NULL) needs an mpi communicator");
      if (!known && s.args.redop != kNullHandle)
        throw InputError(s.loc, "unknown op '" + s.args.redop + "': expected sum, prod, max, min, avg or null");
    }
  }

  void check_group_member(const Stmt& s) const {
    const Profile profile = stmt_profile(s);
    OpClass cls = op_class(s.op, profile);
    // In the mpi profile a group may hold send and recv: posted together, waited for together
    // (MPI_Sendrecv, MPI_Isend/MPI_Irecv ... MPI_Waitall).
    const bool mpi = profile == Profile::Mpi;
    if (s.op == OpKind::Probe)
      throw InputError(s.loc, "'probe' cannot stand inside 'group': MPI_Probe blocks, it posts nothing to wait for");
    if (cls == OpClass::DeviceSync || cls == OpClass::LocalAfterSync || cls == OpClass::StreamThenSync ||
        (cls == OpClass::HostPair && !mpi))
      throw InputError(s.loc, "'" + std::string(op_name(s.op)) +
                                  "' cannot stand inside 'group': a group holds calls that are issued "
                                  "together (registrations, collectives, send/recv, split, init)");
  }

  // The profile of a statement's communicator (the knob's when it names none or an unknown one).
  Profile stmt_profile(const Stmt& s) const {
    for (const auto& d : sc_.comms)
      if (d.name == s.comm) return d.profile.value_or(sc_.knobs.profile);
    return sc_.knobs.profile;
  }

  const std::vector<int>& known_comm(const std::string& name, const SourceLoc& loc) const {
    auto it = decl_index_.find(name);
    if (it == decl_index_.end()) {
      std::string known;
      for (const auto& d : sc_.comms) known += (known.empty() ? "" : ", ") + d.name;
      throw InputError(loc, "unknown communicator '" + name + "': expected one of the declared comms (" +
                                (known.empty() ? std::string("none declared") : known) + ")");
    }
    return it->second;
  }

  // Bounds the unrolled program: nested `repeat`s (each within the parser's limit) or a large world
  // could otherwise multiply into more calls than fit in memory, or loop for hours.
  void spend_call(const SourceLoc& loc) {
    const uint64_t limit = std::max(kMaxCalls, kMaxCallsPerRank * static_cast<uint64_t>(std::max(sc_.ranks, 0)));
    if (++calls_made_ > limit)
      throw InputError(loc, "scenario too large: more than " + std::to_string(limit) +
                                " calls over all ranks after unrolling 'repeat': expected a smaller scenario");
  }
  void spend_iteration(const SourceLoc& loc) {
    if (++iterations_ > kMaxIterations)
      throw InputError(loc, "scenario too large: more than " + std::to_string(kMaxIterations) +
                                " 'repeat' iterations over all ranks: expected a smaller scenario");
  }

  // The rank body: `thread` allowed here (and in `when` at this level).
  ProgramNode top_body(const std::vector<Stmt>& stmts, int thread) {
    ProgramNode seq;
    seq.kind = ProgramNode::Kind::Seq;
    for (const auto& s : stmts) {
      if (s.kind == StmtKind::Thread) {
        if (s.thread_name == "main")
          throw InputError(s.loc, "'main' names the rank body itself: choose another thread name");
        for (const auto& t : prog_->threads)
          if (t.name == s.thread_name)
            throw InputError(
                s.loc, "thread '" + s.thread_name + "' declared twice in the program of rank " + std::to_string(rank_));
        int id = static_cast<int>(prog_->threads.size());
        prog_->threads.push_back(ThreadProgram{s.thread_name, {}});
        ProgramNode body = stmt_list(s.body, id, false);
        prog_->threads[static_cast<size_t>(id)].body = std::move(body);
        ProgramNode spawn;
        spawn.kind = ProgramNode::Kind::Spawn;
        spawn.thread = id;
        seq.children.push_back(std::move(spawn));
      } else if (s.kind == StmtKind::When) {
        if (s.when_ranks.contains(rank_)) {
          ProgramNode inner = top_body(s.body, thread);
          for (auto& c : inner.children) seq.children.push_back(std::move(c));
        }
      } else {
        append(seq, s, thread, false);
      }
    }
    return seq;
  }

  ProgramNode stmt_list(const std::vector<Stmt>& stmts, int thread, bool in_group) {
    ProgramNode seq;
    seq.kind = ProgramNode::Kind::Seq;
    for (const auto& s : stmts) append(seq, s, thread, in_group);
    return seq;
  }

  void append(ProgramNode& seq, const Stmt& s, int thread, bool in_group) {
    switch (s.kind) {
      case StmtKind::Op: {
        // `init C [RANKS]` that leaves its caller out joins nothing (torch's new_group on a non-member).
        if (s.op == OpKind::Init && s.members && !s.members->contains(rank_)) return;
        ProgramNode n;
        n.kind = ProgramNode::Kind::Call;
        n.call = call(s, thread, in_group);
        seq.children.push_back(std::move(n));
        return;
      }
      case StmtKind::Block: {
        ProgramNode inner = stmt_list(s.body, thread, in_group);
        for (auto& c : inner.children) seq.children.push_back(std::move(c));
        return;
      }
      case StmtKind::When:
        if (s.when_ranks.contains(rank_)) append_all(seq, s.body, thread, in_group);
        return;
      case StmtKind::Repeat:
        for (int64_t i = 0; i < s.repeat_count; ++i) {
          spend_iteration(s.loc);
          append_all(seq, s.body, thread, in_group);
        }
        return;
      case StmtKind::Group: {
        ProgramNode g = stmt_list(s.body, thread, true);
        g.kind = ProgramNode::Kind::Group;
        seq.children.push_back(std::move(g));
        return;
      }
      case StmtKind::AnyOrder: {
        ProgramNode n;
        n.kind = ProgramNode::Kind::AnyOrder;
        for (const auto& child : s.body) {
          ProgramNode one;
          one.kind = ProgramNode::Kind::Seq;
          append(one, child, thread, in_group);
          n.children.push_back(std::move(one));
        }
        if (n.children.size() > 64)
          throw InputError(s.loc, "any_order with more than 64 children: the checker keeps a 64-bit done-set");
        seq.children.push_back(std::move(n));
        return;
      }
      case StmtKind::Either: {
        ProgramNode n;
        n.kind = ProgramNode::Kind::Either;
        for (const auto& alt : s.alternatives) n.children.push_back(stmt_list(alt, thread, in_group));
        seq.children.push_back(std::move(n));
        return;
      }
      case StmtKind::Maybe: {
        ProgramNode n;
        n.kind = ProgramNode::Kind::Either;
        n.children.push_back(stmt_list(s.body, thread, in_group));
        ProgramNode empty;
        empty.kind = ProgramNode::Kind::Seq;
        n.children.push_back(std::move(empty));
        seq.children.push_back(std::move(n));
        return;
      }
      case StmtKind::Thread:
        throw InputError(s.loc, kThreadPlacement);
    }
  }

  // A put_signal writes into a window of its target: the target must register that buffer on that comm
  // somewhere in its program, else NCCL has no window to write into.
  // `process P = [..]`: the ranks one host thread drives. Their bodies are that thread's program, so a
  // `thread` block in one of them has no meaning here (a second host thread is another process's).
  void processes() {
    w_.rank_process.assign(static_cast<size_t>(w_.ranks), -1);
    for (const auto& decl : sc_.processes) {
      std::vector<int> ranks = decl.ranks.expand(w_.ranks);
      if (ranks.size() < 2) continue;  // a process of one rank is what every rank is by default
      if (ranks.size() > 32)
        throw InputError(decl.loc, "process '" + decl.name + "' drives " + std::to_string(ranks.size()) +
                                       " ranks: at most 32 GPUs per process");
      const int id = static_cast<int>(w_.processes.size());
      for (int r : ranks) {
        w_.rank_process[static_cast<size_t>(r)] = id;
        if (w_.programs[static_cast<size_t>(r)].threads.size() > 1)
          throw InputError(decl.loc, "rank " + std::to_string(r) + " of process '" + decl.name +
                                         "' has a `thread` block: the ranks of a process are driven by its one "
                                         "host thread (write the process's ranks without threads)");
      }
      w_.processes.push_back(ProcessInstance{decl.name, std::move(ranks), decl.loc});
    }
  }

  void check_put_targets() {
    for (auto& c : w_.calls) {
      if (c.kind != OpKind::PutSignal || c.peer < 0 || c.comm < 0 || !c.usage_error.empty()) continue;
      const bool registered = std::any_of(w_.calls.begin(), w_.calls.end(), [&](const Call& r) {
        return r.kind == OpKind::Register && r.rank == c.peer && r.comm == c.comm && r.buffer == c.buffer2;
      });
      if (!registered)
        usage(c, c.loc,
              "put_signal into '" + w_.buffers[static_cast<size_t>(c.buffer2)] + "' of rank " + std::to_string(c.peer) +
                  ", which rank " + std::to_string(c.peer) + " never registers on '" + w_.comm_name(c.comm) + "'");
    }
  }

  // Who is in a `per_rank` comm: every rank named by the list of an `init C [..]` whose caller names
  // itself (joins), over every body a rank runs (its own or `rank *`, `when` decided; the branches
  // of `either`/`maybe` all count: each may be taken). A rank named only by others never joins: the
  // joiners wait for it, as ncclCommInitRank does for nranks callers.
  std::vector<int> per_rank_members(const CommDecl& decl) const {
    const RankBody* star = nullptr;
    std::map<int, const RankBody*> own;
    for (const auto& b : sc_.bodies) {
      if (b.star) star = &b;
      for (int r : b.ranks) own[r] = &b;
    }
    std::set<int> members;
    for (int r = 0; r < sc_.ranks; ++r) {
      const RankBody* body = own.count(r) ? own[r] : star;
      if (body != nullptr) collect_views(decl.name, body->body, r, members);
    }
    if (members.empty())
      throw InputError(decl.loc, "no rank joins per_rank communicator '" + decl.name + "': write 'init " + decl.name +
                                     " [RANKS]' in the bodies of its members");
    return {members.begin(), members.end()};
  }

  void collect_views(const std::string& comm, const std::vector<Stmt>& body, int rank, std::set<int>& out) const {
    for (const Stmt& s : body) {
      if (s.kind == StmtKind::When && !s.when_ranks.contains(rank)) continue;
      if (s.kind == StmtKind::Op && s.op == OpKind::Init && s.comm == comm) {
        if (!s.members)
          throw InputError(s.comm_loc, "'" + comm +
                                           "' is per_rank: its init needs the member list this rank passes ('init " +
                                           comm + " [RANKS]')");
        const std::vector<int> view = s.members->expand(sc_.ranks);
        if (std::find(view.begin(), view.end(), rank) != view.end()) out.insert(view.begin(), view.end());
      }
      collect_views(comm, s.body, rank, out);
      for (const auto& alt : s.alternatives) collect_views(comm, alt, rank, out);
    }
  }

  void append_all(ProgramNode& seq, const std::vector<Stmt>& body, int thread, bool in_group) {
    for (const auto& s : body) append(seq, s, thread, in_group);
  }

  int comm_for_rank(const std::string& name, const SourceLoc& loc, Call& c, bool must_be_member) {
    const std::vector<int>& ids = known_comm(name, loc);
    // A family's instance of each rank, computed once per family: a scan of the instances for every
    // call would cost O(W) per call, O(W^2) for the program.
    auto [at, fresh] = instance_of_rank_.try_emplace(name);
    if (fresh) {
      at->second.assign(static_cast<size_t>(w_.ranks), -1);
      for (auto id = ids.rbegin(); id != ids.rend(); ++id)  // the first instance that has the rank wins
        for (int m : w_.comms[static_cast<size_t>(*id)].members)
          if (m >= 0 && m < w_.ranks) at->second[static_cast<size_t>(m)] = *id;
    }
    if (int id = at->second[static_cast<size_t>(rank_)]; id >= 0) return id;
    if (must_be_member)
      usage(c, loc,
            "rank " + std::to_string(rank_) + " is not a member of " +
                (ids.size() > 1 ? "any instance of family '" + name + "'" : "'" + name + "'"));
    return ids.front();
  }

  // shrink: the child is the parent less the excluded ranks (at least one: ncclCommShrink refuses an
  // empty exclude list); grow: the child holds every rank of the parent and more.
  void check_child_members(Call& c, const Stmt& s) {
    const auto& parent = w_.comms[static_cast<size_t>(c.comm)].members;
    const auto& child = w_.comms[static_cast<size_t>(c.child)].members;
    const bool inside = std::includes(parent.begin(), parent.end(), child.begin(), child.end());
    const bool covers = std::includes(child.begin(), child.end(), parent.begin(), parent.end());
    if (s.op == OpKind::Shrink && !(inside && child.size() < parent.size()))
      usage(c, s.child_loc,
            "shrink of '" + w_.comm_name(c.comm) + "' to '" + w_.comm_name(c.child) + "': the child's members " +
                rank_list_text(child) + " must be the parent's " + rank_list_text(parent) +
                " less at least one excluded rank");
    if (s.op == OpKind::Grow && !(covers && child.size() > parent.size()))
      usage(c, s.child_loc,
            "grow of '" + w_.comm_name(c.comm) + "' to '" + w_.comm_name(c.child) + "': the child's members " +
                rank_list_text(child) + " must hold every rank of the parent's " + rank_list_text(parent) +
                " and more");
  }

  // The MPI usage rules the statement's own arguments decide (mpi_rules.def, judged by the semantics): the
  // facts are what the program passed (an import writes them as recorded), the verdict is decided here.
  void check_mpi_arguments(Call& c, const Stmt& s) {
    const std::string call(op_name(s.op));
    if (s.comm == kNullComm) {
      usage(c, s.comm_loc, MpiRule::NullCommunicator, call + " on MPI_COMM_NULL ('null')");
      c.kind = OpKind::MpiError;  // no communicator to take part in: the call is the error, nothing more
    }
    if (canonical_dtype(s.args.dtype) == kNullHandle && s.op != OpKind::Barrier)
      usage(c, s.loc, MpiRule::NullDatatype, call + " with dtype=null (MPI_DATATYPE_NULL)");
    if (s.args.redop == kNullHandle) usage(c, s.loc, MpiRule::NullOperation, call + " with op=null (MPI_OP_NULL)");
    if (!s.args.tag || *s.args.tag == kAnyTag) return;
    const int64_t tag = *s.args.tag;
    const std::string with = call + " with tag " + std::to_string(tag);
    if (tag < 0)
      usage(c, s.args.tag_loc, s.op == OpKind::Send ? MpiRule::SendTagNegative : MpiRule::ReceiveTagInvalid, with);
    else if (tag > sc_.knobs.mpi_tag_ub)
      usage(c, s.args.tag_loc, MpiRule::TagAboveUpperBound,
            with + " above MPI_TAG_UB " + std::to_string(sc_.knobs.mpi_tag_ub));
  }

  void usage(Call& c, const SourceLoc& loc, const std::string& msg) {
    if (c.usage_error.empty()) c.usage_error = msg;
    w_.usage_problems.push_back(Diagnostic{loc, msg});
  }
  // An MPI usage rule broken (mpi_rules.def): its message, and the rule named when it is the call's first error.
  void usage(Call& c, const SourceLoc& loc, MpiRule rule, const std::string& text) {
    if (c.usage_error.empty()) c.mpi_rule = rule;
    usage(c, loc, mpi_rule_message(rule, text));
  }

  int intern(std::vector<std::string>& table, const std::string& name) {
    for (size_t i = 0; i < table.size(); ++i)
      if (table[i] == name) return static_cast<int>(i);
    table.push_back(name);
    return static_cast<int>(table.size() - 1);
  }

  int call(const Stmt& s, int thread, bool in_group) {
    Call c;
    c.id = static_cast<int>(w_.calls.size());
    c.rank = rank_;
    c.thread = thread;
    c.kind = s.op;
    c.loc = s.loc;
    c.text = s.text;
    c.flag = s.flag;
    spend_call(s.loc);
    check_names(s);
    if (in_group) check_group_member(s);
    if (!s.buffer.empty()) c.buffer = intern(w_.buffers, s.buffer);
    if (!s.buffer2.empty()) c.buffer2 = intern(w_.buffers, s.buffer2);
    if (s.size) c.size = *s.size;
    if (!s.args.stream.empty()) c.stream = intern(w_.streams, s.args.stream);
    if (!s.args.dtype.empty()) c.dtype = intern(w_.dtypes, canonical_dtype(s.args.dtype));
    if (!s.args.redop.empty()) c.redop = intern(w_.redops, s.args.redop);
    c.mpi_call = s.args.mpi_call;
    c.coll_config = s.args.coll_config;
    if (s.args.count) c.count = *s.args.count;
    if (s.args.root) c.root = *s.args.root;
    if (s.peer) c.peer = *s.peer;
    c.any_source = s.any_source;
    if (s.args.tag) c.tag = *s.args.tag;
    c.buffered = s.args.buffered;
    c.win_mode = s.args.win_mode;
    if (!s.comm.empty() && s.comm != kNullComm) c.comm = comm_for_rank(s.comm, s.comm_loc, c, true);
    if (op_form(s.op) == OpForm::Split && !s.child.empty()) {
      c.child = comm_for_rank(s.child, s.child_loc, c, true);
      const CommInstance& child = w_.comms[static_cast<size_t>(c.child)];
      if (!child.uninit)
        usage(c, s.child_loc,
              std::string(op_name(s.op)) + " creates '" + child.name + "', which already exists (declare it 'uninit')");
      if (c.comm >= 0 && (s.op == OpKind::Shrink || s.op == OpKind::Grow)) check_child_members(c, s);
    }
    if (c.comm >= 0) {
      const CommInstance& comm = w_.comms[static_cast<size_t>(c.comm)];
      if (c.peer >= 0 && !comm.has_member(c.peer))
        usage(c, s.peer_loc, "peer " + std::to_string(c.peer) + " is not a member of '" + comm.name + "'");
      if (c.root >= 0 && !comm.has_member(c.root)) {
        const std::string text = "root " + std::to_string(c.root) + " is not a member of '" + comm.name + "'";
        if (comm.profile == Profile::Mpi)
          usage(c, s.args.root_loc, MpiRule::RootOutsideComm, text);
        else
          usage(c, s.args.root_loc, text);
      }
    }
    if (stmt_profile(s) == Profile::Mpi) check_mpi_arguments(c, s);
    // A group holds the nonblocking operations posted and not yet waited for (its end is their wait): MPI_Finalize
    // inside one leaves them never completed.
    if (s.op == OpKind::MpiFinalize && in_group)
      usage(c, s.loc, MpiRule::RequestNotCompleted,
            "mpi_finalize inside 'group', whose nonblocking operations were never completed");
    if (s.op == OpKind::Init && s.members) c.members_view = s.members->expand(w_.ranks);
    if (!s.key.empty()) c.key = intern(w_.keys, s.key);
    if (s.op == OpKind::MpiError) {  // found by the trace reader: reported when reached
      usage(c, s.key_loc, s.key);
      c.mpi_rule = s.mpi_rule;
    }
    if (const uint32_t since = first_nccl_version(s.op); since > sc_.knobs.nccl_version)
      usage(c, s.loc,
            std::string(op_info(s.op).nccl_name) + " needs NCCL " + nccl_version_text(since) +
                " or later; the scenario models " + nccl_version_text(sc_.knobs.nccl_version) + " (set nccl_version)");
    // Issue 36: the per-collective config (nccl*Config, ncclCollConfig_t) and GIN-only windows
    // (NCCL_WIN_GIN_ONLY) are NCCL calls of 2.31 and 2.32.
    if (!s.args.coll_config.empty()) {
      if (stmt_profile(s) == Profile::Mpi)
        usage(c, s.args.config_loc,
              "config= is an NCCL per-collective configuration; '" + s.comm + "' is an mpi communicator");
      else if (sc_.knobs.nccl_version < kCollConfig)
        usage(c, s.args.config_loc,
              "config= (nccl*Config, ncclCollConfig_t) needs NCCL 2.31 or later; the scenario models " +
                  nccl_version_text(sc_.knobs.nccl_version) + " (set nccl_version)");
    }
    if (s.op == OpKind::Register && s.flag == RegFlag::GinOnly) {
      if (stmt_profile(s) == Profile::Mpi)
        usage(c, s.loc, "a GIN-only window (NCCL_WIN_GIN_ONLY) is NCCL's; '" + s.comm + "' is an mpi communicator");
      else if (sc_.knobs.nccl_version < kGinOnlyWindows)
        usage(c, s.loc,
              "a GIN-only window (NCCL_WIN_GIN_ONLY) needs NCCL 2.32 or later; the scenario models " +
                  nccl_version_text(sc_.knobs.nccl_version) + " (set nccl_version)");
    }
    if (nccl_only(s.op) && stmt_profile(s) == Profile::Mpi)
      usage(c, s.loc, "'" + std::string(op_name(s.op)) + "' is an NCCL call; '" + s.comm + "' is an mpi communicator");
    if (c.peer == rank_ && is_one_sided(s.op)) usage(c, s.peer_loc, "'" + std::string(op_name(s.op)) + "' to itself");
    if (op_form(s.op) == OpForm::KeyRanks) {
      c.members_view = s.members ? s.members->expand(w_.ranks) : RankSet{true, {}, {}}.expand(w_.ranks);
      if (!std::binary_search(c.members_view.begin(), c.members_view.end(), rank_))
        usage(c, s.key_loc, "rank " + std::to_string(rank_) + " is not among the ranks of its own host_barrier");
    }
    if (s.op == OpKind::Init && c.comm >= 0 && w_.comms[static_cast<size_t>(c.comm)].per_rank && !s.members)
      throw InputError(s.comm_loc, "'" + s.comm +
                                       "' is per_rank: its init needs the member list this rank passes ('init " +
                                       s.comm + " [RANKS]')");
    if (op_form(s.op) == OpForm::Split && c.child >= 0 && w_.comms[static_cast<size_t>(c.child)].per_rank)
      throw InputError(s.child_loc, std::string(op_name(s.op)) + " cannot create per_rank communicator '" + s.child +
                                        "' (only init can)");
    if (s.op == OpKind::Init && c.comm >= 0 && !w_.comms[static_cast<size_t>(c.comm)].uninit)
      usage(c, s.comm_loc, "init of '" + w_.comm_name(c.comm) + "', which already exists (declare it 'uninit')");
    w_.calls.push_back(std::move(c));
    return static_cast<int>(w_.calls.size() - 1);
  }

  const Scenario& sc_;
  World w_;
  std::map<std::string, std::vector<int>> decl_index_;
  std::map<std::string, std::vector<int>> instance_of_rank_;  // family -> [rank] -> instance id or -1
  uint64_t calls_made_ = 0;
  uint64_t iterations_ = 0;
  int rank_ = 0;
  RankProgram* prog_ = nullptr;
};

}  // namespace

bool World::mixed_profiles() const {
  for (const auto& c : comms)
    if (c.profile != knobs.profile) return true;
  return false;
}

uint64_t World::dtype_size(int dtype) const {
  const std::string& d = dtypes[static_cast<size_t>(dtype)];
  for (const auto& i : kDtypes)
    if (d == i.name) return i.size;
  return 4;
}

void number_grown_comms(World& w) {
  for (auto& comm : w.comms) comm.grown_from = comm.grow_index = -1;
  std::vector<int> grows(w.comms.size(), 0);
  for (const auto& c : w.calls) {
    if (c.kind != OpKind::Grow || c.comm < 0 || c.child < 0) continue;
    auto& child = w.comms[static_cast<size_t>(c.child)];
    if (c.rank != w.comms[static_cast<size_t>(c.comm)].members.front() || child.grown_from >= 0) continue;
    child.grown_from = c.comm;
    child.grow_index = grows[static_cast<size_t>(c.comm)]++;
  }
}

World resolve(const Scenario& scenario) { return Resolver(scenario).run(); }

World load_world(const std::string& path) { return resolve(parse_file(path)); }

}  // namespace collmc::model
