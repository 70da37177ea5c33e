// The scenario for a trace (LANGUAGE.md): explicit comms, one body per rank in call order, threads kept
// apart, group start/end as `group { }`, and comments saying where each rank stopped and what is
// partial. Whatever the trace holds, the text parses: names are sanitised, calls the language cannot
// hold (an unknown comm, a sync inside a group, ...) become comments that say why.
#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "collmc/model/operations.h"
#include "collmc/model/world.h"
#include "collmc/traces/trace.h"

namespace collmc::traces {
namespace {

using model::OpClass;
using model::OpKind;

// Comment text: printable ASCII only, one line.
std::string comment_text(const std::string& s, size_t max = 200) {
  std::string out;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    out += (c >= 0x20 && c < 0x7f) ? ch : '?';
    if (out.size() >= max) {
      out += "...";
      break;
    }
  }
  return out;
}

// A name of the language: [A-Za-z_][A-Za-z0-9_.]*, short, never a word the grammar gives a meaning.
std::string sanitize(const std::string& s, const std::string& prefix, size_t max = 40) {
  std::string out;
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    bool ok = std::isalnum(c) || c == '_';
    if (ok) {
      out += ch;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
    if (out.size() >= max) break;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  static const std::set<std::string> reserved = {"all", "none", "device", "main", "on", "or", "symmetric", "default"};
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])) || reserved.count(out)) out = prefix + out;
  return out;
}

// As the resolver's check_group_member: in the mpi profile a group may hold send and recv (MPI_Sendrecv,
// nonblocking exchanges completed together).
bool allowed_in_group(CallKind k, model::Profile profile) {
  auto op = op_kind_of(k);
  if (!op) return true;
  OpClass cls = model::op_class(*op, profile);
  return !(cls == OpClass::DeviceSync || cls == OpClass::LocalAfterSync || cls == OpClass::StreamThenSync ||
           (cls == OpClass::HostPair && profile != model::Profile::Mpi));
}

bool is_known_dtype(const std::string& d) {
  static const std::set<std::string> names = {"float32",    "float16",    "bfloat16", "float64", "int8",
                                              "uint8",      "int32",      "uint32",   "int64",   "uint64",
                                              "float8e4m3", "float8e5m2", "any",      "null"};
  // MPI types the list does not name (issue 32): `mpi_short`, a flattened signature's `mpi_sig_HASH`.
  return names.count(d) > 0 || (d.rfind("mpi_", 0) == 0 && d.size() > 4);
}

bool is_known_redop(const std::string& r) {
  return r == "sum" || r == "prod" || r == "max" || r == "min" || r == "avg" || r == "null";
}

// The source's name in the `observed` line ("the hang is outside what NCCL INFO logs record").
std::string source_title(const std::string& format) {
  if (format == "flight-recorder") return "Flight Recorder dumps";
  if (format == "nccl-log") return "NCCL INFO logs";
  if (format == "recorder") return "collmc recorder traces";
  if (format == "mpi-recorder") return "MPI recorder traces";
  if (format == "torch") return "torch shim traces";
  return "the imported traces";
}

class Emitter {
 public:
  Emitter(const Trace& t, const EmitOptions& o) : trace_(t), options_(o) {}

  std::string run() {
    world_ = std::max(trace_.world_size, 1);
    if (!trace_.ranks.empty()) world_ = std::max(world_, trace_.ranks.rbegin()->first + 1);
    world_ = std::min(world_, 1 << 16);
    header();
    comms();
    for (int r = 0; r < world_; ++r) rank(r);
    return out_.str();
  }

 private:
  void header() {
    std::string fmt = trace_.format.empty() ? "trace" : trace_.format;
    out_ << "# Scenario imported by `collmc trace import` from " << comment_text(fmt) << " traces.\n";
    out_ << "# Each rank's body is its calls in the order it made them; comments say where it stopped.\n";
    for (const auto& n : trace_.notes) out_ << "# partial: " << comment_text(n, 400) << "\n";
    for (const auto& n : trace_.dropped) out_ << "# dropped: " << comment_text(n, 400) << "\n";
    for (const auto& n : trace_.cannot_see) out_ << "# cannot see: " << comment_text(n, 400) << "\n";
    if (const std::string line = outcome_line(trace_); !line.empty()) out_ << "# " << comment_text(line, 400) << "\n";
    for (const auto& c : options_.header_comments) out_ << "# " << comment_text(c, 400) << "\n";
    out_ << "ranks " << world_ << "\n";
    std::string name = options_.name.empty() ? "imported from " + fmt : options_.name;
    std::string clean;
    for (char c : comment_text(name)) clean += (c == '"' || c == '\\') ? '\'' : c;
    out_ << "name \"" << clean << "\"\n";
    // What the recorded run did, for `collmc check`: it does not answer a plain `safe` for a run that hung.
    if (trace_.outcome != RunOutcome::Unknown)
      out_ << "observed " << run_outcome_name(trace_.outcome) << " \"" << source_title(trace_.format) << "\"\n";
    // Calls that exist only from some NCCL release on: the scenario models that release.
    uint32_t since = 0;
    for (const auto& [r, rank] : trace_.ranks)
      for (const auto& t : rank.threads)
        for (const auto& c : t.calls)
          if (auto op = op_kind_of(c.kind)) since = std::max(since, model::first_nccl_version(*op));
    if (since > model::kCalibratedNcclVersion) out_ << "set nccl_version = " << model::nccl_version_text(since) << "\n";
    if (trace_.mpi) out_ << "set profile = mpi\n";
    if (trace_.mpi && !trace_.mpi_tag_ub)
      out_ << "# MPI_TAG_UB was not recorded: no tag is judged against it (tags are C ints)\n"
           << "set mpi_tag_ub = " << std::numeric_limits<int32_t>::max() << "\n";
    if (trace_.mpi && trace_.mpi_tag_ub && *trace_.mpi_tag_ub > model::kMpiTagUbGuaranteed)
      out_ << "set mpi_tag_ub = " << *trace_.mpi_tag_ub << "  # MPI_TAG_UB as the run's library reported it\n";
    out_ << "\n";
  }

  void comms() {
    std::set<std::string> used;
    for (const auto& c : trace_.comms) {
      std::vector<int> members;
      for (const auto& [g, r] : c.members)
        if (g >= 0 && g < world_) members.push_back(g);
      std::string base = sanitize(c.label.empty() ? c.id : c.label, "c_");
      std::string name = base;
      for (int k = 2; used.count(name); ++k) name = base + "_" + std::to_string(k);
      if (members.empty()) {
        out_ << "# communicator " << comment_text(c.id) << " has no known member: not declared\n";
        continue;
      }
      used.insert(name);
      names_[c.id] = name;
      members_[c.id] = std::set<int>(members.begin(), members.end());
      std::string how = c.origin == CommOrigin::Preexisting ? "exists from the start"
                        : c.origin == CommOrigin::Init      ? "created by init"
                                                            : "created by split";
      out_ << "# " << comment_text(c.label.empty() ? c.id : c.label) << ": id " << comment_text(c.id) << ", "
           << (c.size > 0 ? std::to_string(c.size) : std::string("?")) << " ranks, " << how;
      if (c.size > static_cast<int>(members.size()))
        out_ << "; " << (c.size - static_cast<int>(members.size())) << " member(s) unknown, left out";
      out_ << "\n";
      out_ << "comm " << name << " = [";
      for (size_t i = 0; i < members.size(); ++i) out_ << (i ? ", " : "") << members[i];
      out_ << "]" << (c.origin == CommOrigin::Preexisting ? "" : " uninit")
           << (c.host_blocking && !trace_.mpi ? " mpi" : "") << "\n";
      // What the collectives the import left out leave behind (trim_history): the kept calls take the slots
      // they took in the run, and a comm they connected is warm. An mpi comm's collectives take host slots.
      if (c.dropped_collectives > 0) {
        const bool mpi = trace_.mpi || c.host_blocking;
        out_ << "history " << name << (mpi ? " host=" : " device=") << c.dropped_collectives
             << (c.history_connected && !mpi ? " connected" : "") << "  # " << c.dropped_collectives << " collective"
             << (c.dropped_collectives == 1 ? "" : "s") << " every member made before the first one written here\n";
      }
    }
    out_ << "\n";
  }

  void rank(int r) {
    auto it = trace_.ranks.find(r);
    // A rank without calls gets an empty body: it does nothing here because its trace says so (or has none),
    // which `collmc check` must not take for a hand-written file's forgotten rank (the review's N9).
    if (it == trace_.ranks.end() || !it->second.present) {
      out_ << "rank " << r << " { }  # no trace: it makes no call here\n\n";
      return;
    }
    const RankTrace& rt = it->second;
    std::vector<const ThreadTrace*> threads;
    for (const auto& t : rt.threads)
      if (!t.calls.empty()) threads.push_back(&t);
    if (threads.empty()) {
      out_ << "rank " << r << " { }  # its trace holds no call"
           << (trace_.dropped.empty() ? "" : " the import keeps (see `# dropped:`)") << "\n";
      for (const auto& n : rt.notes) out_ << "# partial: rank " << r << ": " << comment_text(n, 400) << "\n";
      out_ << "\n";
      return;
    }
    if (!rt.source.empty()) out_ << "# rank " << r << " from " << comment_text(rt.source) << "\n";
    out_ << "rank " << r << " {\n";
    for (const auto& n : rt.notes) out_ << "  # partial: " << comment_text(n, 400) << "\n";
    if (threads.size() == 1) {
      body(r, *threads[0], "  ", "", {});
      out_ << "}\n\n";
      return;
    }
    // The first thread is the rank body itself; the others are `thread` blocks inside it, each where that
    // thread starts (spawn_points).
    out_ << "  # thread " << comment_text(threads[0]->name) << " (the rank body)\n";
    std::set<std::string> thread_names = {"main"};
    std::vector<Helper> helpers;
    const std::vector<size_t> at = spawn_points(threads);
    for (size_t i = 1; i < threads.size(); ++i) {
      std::string base = "t_" + sanitize(threads[i]->name, "t_", 30);
      std::string tn = base;
      for (int k = 2; thread_names.count(tn); ++k) tn = base + "_" + std::to_string(k);
      thread_names.insert(tn);
      helpers.push_back(Helper{threads[i], tn, at[i - 1]});
    }
    body(r, *threads[0], "  ", comment_text(threads[0]->name), helpers);
    out_ << "}\n\n";
  }

  // A thread other than the rank's first, and the index of the first thread's call it starts before.
  struct Helper {
    const ThreadTrace* thread;
    std::string name;
    size_t starts_before;
  };

  // Where each thread after the first starts in the first thread's calls. The traces do not see a thread's
  // creation (pthread_create, std::thread), only its calls: a thread is taken to start after the first
  // thread's calls that returned before this thread's first call (known from their return times, or, where a
  // reader keeps none, every call before the last one the first thread entered before it: a thread's calls
  // follow one another), at a point where a statement may stand (not inside a group, before an any_order the
  // point falls in); at the start where the calls carry no times. Written after the first thread's calls, a
  // `thread` block would start only once they all finished (LANGUAGE.md: a thread starts where its block
  // stands), which made imports of threaded programs deadlock where they did not.
  static std::vector<size_t> spawn_points(const std::vector<const ThreadTrace*>& threads) {
    const ThreadTrace& main = *threads[0];
    std::vector<size_t> out;
    for (size_t i = 1; i < threads.size(); ++i) {
      if (threads[i]->starts_with_rank) {
        out.push_back(0);
        continue;
      }
      uint64_t first = 0;
      for (const Call& c : threads[i]->calls)
        if (c.time_ns != 0) {
          first = c.time_ns;
          break;
        }
      size_t at = 0;
      if (first != 0)
        for (size_t k = 0; k < main.calls.size(); ++k) {
          const Call& c = main.calls[k];
          if (c.time_ns != 0 && c.time_ns < first) at = std::max(at, k);  // the ones before it returned
          if (c.return_ns != 0 && c.return_ns <= first) at = std::max(at, k + 1);
        }
      // Back out of a group the point falls in, then out of an any_order.
      size_t group_start = SIZE_MAX;
      for (size_t k = 0; k < at; ++k) {
        if (main.calls[k].kind == CallKind::GroupStart && group_start == SIZE_MAX) group_start = k;
        if (main.calls[k].kind == CallKind::GroupEnd) group_start = SIZE_MAX;
      }
      if (group_start != SIZE_MAX) at = group_start;
      for (const OpenSpan& span : main.open_spans)
        if (span.begin < at && at < span.end) at = span.begin;
      out.push_back(at);
    }
    return out;
  }

  // One thread's calls. Groups are buffered so that an empty one is not written.
  void body(int r, const ThreadTrace& t, const std::string& indent, const std::string& thread_label,
            const std::vector<Helper>& helpers) {
    std::vector<bool> started(helpers.size(), false);
    auto start_helpers = [&](size_t index) {
      for (size_t h = 0; h < helpers.size(); ++h) {
        if (started[h] || helpers[h].starts_before > index) continue;
        started[h] = true;
        out_ << indent << "thread " << helpers[h].name << " {  # thread " << comment_text(helpers[h].thread->name)
             << "\n";
        body(r, *helpers[h].thread, indent + "  ", comment_text(helpers[h].thread->name), {});
        out_ << indent << "}\n";
      }
    };
    bool stopped = false;
    int depth = 0;
    std::vector<std::string> group_lines;
    bool group_has_statement = false;
    std::string who = "rank " + std::to_string(r) + (thread_label.empty() ? "" : " (thread " + thread_label + ")");
    auto emit = [&](const std::string& line, bool statement) {
      if (depth > 0) {
        group_lines.push_back(indent + "  " + line);
        group_has_statement = group_has_statement || statement;
      } else {
        out_ << indent << line << "\n";
      }
    };
    auto close_group = [&](const std::string& why) {
      if (group_has_statement) out_ << indent << "group {" << (why.empty() ? "" : "  # " + why) << "\n";
      for (const auto& l : group_lines) out_ << (group_has_statement ? l : l.substr(2)) << "\n";
      if (group_has_statement) out_ << indent << "}\n";
      group_lines.clear();
      group_has_statement = false;
    };
    auto stop_comment = [&](const Call& c, const std::string& where) {
      stopped = true;
      emit(std::string("# ^^^ ") + who + " stopped " + where + ": the " + (where == "here" ? "next" : "first such") +
               " call " +
               (c.state == CallState::Started ? "started and never finished" : "was issued and never seen to finish") +
               "; the calls after it are kept so the check can find the hang",
           false);
    };
    size_t next_span = 0;
    for (size_t index = 0; index < t.calls.size(); ++index) {
      const Call& c = t.calls[index];
      if (depth == 0) start_helpers(index);
      while (next_span < t.open_spans.size() && t.open_spans[next_span].begin < index) ++next_span;
      if (depth == 0 && next_span < t.open_spans.size() && t.open_spans[next_span].begin == index &&
          t.open_spans[next_span].end > index && t.open_spans[next_span].end <= t.calls.size()) {
        const OpenSpan& span = t.open_spans[next_span++];
        for (size_t k = span.begin; k < span.end && !stopped; ++k)
          if (t.calls[k].state != CallState::Completed) stop_comment(t.calls[k], "in the calls below");
        open_span(r, t, span, indent);
        index = span.end - 1;
        continue;
      }
      if (!stopped && c.state != CallState::Completed) stop_comment(c, "here");
      if (c.kind == CallKind::GroupStart) {
        ++depth;
        continue;
      }
      if (c.kind == CallKind::GroupEnd) {
        if (depth == 0) {
          emit("# a group end without its start", false);
          continue;
        }
        if (--depth == 0) close_group("");
        continue;
      }
      std::string reason;
      std::string stmt = statement(r, c, reason);
      std::string tail = origin(c);
      if (stmt.empty()) {
        emit("# not expressible: " + comment_text(reason) + tail, false);
        continue;
      }
      if (depth > 0 && !allowed_in_group(c.kind, trace_.mpi ? model::Profile::Mpi : model::Profile::Nccl)) {
        emit(
            "# inside a group, where the language has no '" + std::string(call_kind_name(c.kind)) + "': " + stmt + tail,
            false);
        continue;
      }
      emit(stmt + tail, true);
    }
    if (depth > 0) {
      depth = 0;
      close_group("the group never ended: the rank stopped inside it");
    }
    start_helpers(SIZE_MAX);
  }

  // An opened stretch: `any_order { ... }` with one child per block that holds a statement. A block
  // that holds none (every call a comment) is written before it; with fewer than two children left the
  // calls are written in their recorded order.
  void open_span(int r, const ThreadTrace& t, const OpenSpan& span, const std::string& indent) {
    std::vector<std::vector<std::string>> children;
    std::vector<std::string> loose;
    for (const auto& block : span.blocks) {
      std::vector<std::string> lines;
      bool has_statement = false;
      for (size_t k : block) {
        if (k < span.begin || k >= span.end) continue;
        const Call& c = t.calls[k];
        std::string reason;
        std::string stmt = statement(r, c, reason);
        if (stmt.empty()) {
          lines.push_back("# not expressible: " + comment_text(reason) + origin(c));
        } else {
          lines.push_back(stmt + origin(c));
          has_statement = true;
        }
      }
      if (has_statement) {
        children.push_back(std::move(lines));
      } else {
        loose.insert(loose.end(), lines.begin(), lines.end());
      }
    }
    for (const auto& l : loose) out_ << indent << l << "\n";
    if (children.size() < 2) {
      for (const auto& child : children)
        for (const auto& l : child) out_ << indent << l << "\n";
      return;
    }
    out_ << indent << "any_order {" << (span.why.empty() ? "" : "  # " + comment_text(span.why, 300)) << "\n";
    for (const auto& child : children) {
      size_t statements = 0;
      for (const auto& l : child) statements += l[0] != '#';
      if (statements == 1 && child.size() == 1) {
        out_ << indent << "  " << child[0] << "\n";
        continue;
      }
      out_ << indent << "  {\n";
      for (const auto& l : child) out_ << indent << "    " << l << "\n";
      out_ << indent << "  }\n";
    }
    out_ << indent << "}\n";
  }

  std::string origin(const Call& c) const {
    std::string state = c.state == CallState::Completed ? ""
                        : c.state == CallState::Started ? "started, never finished"
                                                        : "issued, never seen to finish";
    if (!options_.include_origins) return state.empty() ? "" : "  # " + state;
    std::string o = comment_text(c.origin, 120);
    if (!state.empty()) o = o.empty() ? state : o + "; " + state;
    return o.empty() ? "" : "  # " + o;
  }

  std::string comm_name(const std::string& id, int r, std::string& reason) const {
    if (trace_.mpi && id == kTraceNullComm) return "null";  // MPI_COMM_NULL: the semantics reports the call
    auto it = names_.find(id);
    if (it == names_.end()) {
      reason = id.empty() ? "no communicator" : "communicator " + id + " is not declared";
      return "";
    }
    (void)r;
    return it->second;
  }

 public:
  const std::map<std::string, std::string>& comm_names() const { return names_; }

 private:
  static std::string buffer(const std::string& b) { return scenario_buffer_name(b); }

  static std::string win_mode(model::WinMode m) {
    return m == model::WinMode::Plain ? "" : " mode=" + std::string(model::win_mode_name(m));
  }

  bool valid_rank(const std::optional<int>& v) const { return v && *v >= 0 && *v < world_; }

  std::string args(const Call& c, bool reduction, bool rooted) const {
    std::string a;
    if (c.count) a += " count=" + std::to_string(*c.count);
    if (is_known_dtype(c.dtype)) a += " dtype=" + c.dtype;
    if (reduction && is_known_redop(c.redop)) a += " op=" + c.redop;
    if (rooted && valid_rank(c.root)) a += " root=" + std::to_string(*c.root);
    if (!c.mpi_call.empty()) a += " call=" + c.mpi_call;
    if (!c.coll_config.empty()) a += " config=" + c.coll_config;
    if (!c.stream.empty() && c.stream != "main") a += " on " + sanitize(c.stream, "s_");
    return a;
  }

  std::string statement(int r, const Call& c, std::string& reason) const {
    const char* kw = call_kind_name(c.kind);
    auto comm = [&]() { return comm_name(c.comm, r, reason); };
    // "KEYWORD COMM PEER" of a call with a peer, or "" (with the reason) when either is unknown.
    auto comm_and_peer = [&]() -> std::string {
      std::string n = comm();
      if (n.empty()) return "";
      if (!valid_rank(c.peer)) {
        reason = std::string(kw) + " without a known peer";
        return "";
      }
      return std::string(kw) + " " + n + " " + std::to_string(*c.peer);
    };
    switch (c.kind) {
      case CallKind::CommInit:
      case CallKind::CommFinalize:
      case CallKind::CommDestroy:
      case CallKind::CommAbort:
      case CallKind::CommRevoke:
      case CallKind::CommGetUniqueId: {
        std::string n = comm();
        return n.empty() ? "" : std::string(kw) + " " + n;
      }
      case CallKind::CommSplit: {
        std::string parent = comm();
        if (parent.empty()) return "";
        std::string child = "none";
        if (!c.child_comm.empty()) {
          child = comm_name(c.child_comm, r, reason);
          if (child.empty()) return "";
        }
        return "split " + parent + " -> " + child;
      }
      case CallKind::WindowRegister: {
        std::string n = comm();
        if (n.empty()) return "";
        // The flag is NCCL's (NCCL_WIN_COLL_SYMMETRIC); an MPI window has none.
        if (trace_.mpi) return "register " + n + " " + buffer(c.buffer);
        return "register " + n + " " + buffer(c.buffer) + (c.symmetric ? " symmetric" : " default");
      }
      case CallKind::WindowDeregister:
      case CallKind::LocalRegister:
      case CallKind::LocalDeregister: {
        std::string n = comm();
        return n.empty() ? "" : std::string(kw) + " " + n + " " + buffer(c.buffer);
      }
      case CallKind::MemAlloc:
      case CallKind::CudaMalloc:
        return std::string(kw) + " " + buffer(c.buffer) + (c.bytes > 0 ? " " + std::to_string(c.bytes) : "");
      case CallKind::MemFree:
      case CallKind::CudaFree:
        return std::string(kw) + " " + buffer(c.buffer);
      case CallKind::AllReduce:
      case CallKind::AllGather:
      case CallKind::ReduceScatter:
      case CallKind::Broadcast:
      case CallKind::Reduce:
      case CallKind::AllToAll: {
        std::string n = comm();
        if (n.empty()) return "";
        const model::OpKind op = *op_kind_of(c.kind);
        const bool reduction = model::takes_redop(op);
        const bool rooted = model::takes_root(op);
        std::string s = std::string(kw) + " " + n + " " + buffer(c.buffer);
        if (!c.recv_buffer.empty() && c.recv_buffer != c.buffer) s += " -> " + buffer(c.recv_buffer);
        return s + args(c, reduction, rooted);
      }
      case CallKind::Barrier: {
        std::string n = comm();
        return n.empty() ? "" : "barrier " + n + (c.mpi_call.empty() ? "" : " call=" + c.mpi_call);
      }
      case CallKind::Send:
      case CallKind::Recv:
      case CallKind::Probe: {
        // MPI tags (`tag=`): a receive's MPI_ANY_TAG is `tag=any`; any other tag as the program passed it, a
        // negative one too (the semantics reports it, model/mpi_rules.def).
        std::string tag;
        if (trace_.mpi && c.tag && *c.tag != 0) tag = " tag=" + std::to_string(*c.tag);
        if (trace_.mpi && c.tag && *c.tag == kTraceAnyTag && c.kind != CallKind::Send) tag = " tag=any";
        if (c.kind == CallKind::Probe) {  // MPI_Probe: receives nothing, no buffer
          if (!trace_.mpi) return "";
          if (c.any_source) {
            std::string n = comm();
            return n.empty() ? "" : "probe " + n + " any" + tag;
          }
          const std::string head = comm_and_peer();
          return head.empty() ? "" : head + tag;
        }
        if (c.kind == CallKind::Recv && c.any_source && trace_.mpi) {
          std::string n = comm();
          return n.empty() ? "" : "recv " + n + " any " + buffer(c.buffer) + args(c, false, false) + tag;
        }
        const std::string head = comm_and_peer();
        const std::string mode = trace_.mpi && c.buffered && c.kind == CallKind::Send ? " mode=buffered" : "";
        return head.empty() ? "" : head + " " + buffer(c.buffer) + args(c, false, false) + tag + mode;
      }
      case CallKind::RmaPut:
      case CallKind::RmaGet:
      case CallKind::RmaAccumulate:
      case CallKind::WinLock:
      case CallKind::WinUnlock:
      case CallKind::WinFlush: {  // `put COMM TARGET WIN [op=] [call=] [mode=]`: the semantics judges the epochs
        if (!trace_.mpi) return "";
        const std::string head = comm_and_peer();
        return head.empty() ? ""
                            : head + " " + buffer(c.buffer) + args(c, c.kind == CallKind::RmaAccumulate, false) +
                                  win_mode(c.win_mode);
      }
      case CallKind::WinLockAll:
      case CallKind::WinUnlockAll:
      case CallKind::WinFlushAll:
      case CallKind::WinStart:
      case CallKind::WinComplete:
      case CallKind::WinPost:
      case CallKind::WinWait:
      case CallKind::WinFence: {
        if (!trace_.mpi) return "";
        std::string n = comm();
        return n.empty() ? "" : std::string(kw) + " " + n + " " + buffer(c.buffer) + win_mode(c.win_mode);
      }
      case CallKind::MpiFinalize:
        return trace_.mpi ? "mpi_finalize" : "";
      case CallKind::StreamSync:
        return "sync " + (c.stream.empty() || c.stream == "main" ? std::string("main") : sanitize(c.stream, "s_"));
      case CallKind::DeviceSync:
        return "sync device";
      case CallKind::PutSignal:
      case CallKind::Signal:
      case CallKind::WaitSignal: {
        std::string s = comm_and_peer();
        if (s.empty()) return "";
        if (c.kind == CallKind::PutSignal) {
          if (c.recv_buffer.empty()) {
            reason = "put_signal to a window the trace never saw registered";
            return "";
          }
          return s + " " + buffer(c.buffer) + " -> " + buffer(c.recv_buffer) + args(c, false, false);
        }
        if (c.kind == CallKind::WaitSignal && c.count) s += " count=" + std::to_string(*c.count);
        if (!c.stream.empty() && c.stream != "main") s += " on " + sanitize(c.stream, "s_");
        return s;
      }
      case CallKind::StoreSet:
      case CallKind::StoreWait:
      case CallKind::HostBarrier: {
        if (c.key.empty() || c.key.find_first_of("\"\n") != std::string::npos) {
          reason = std::string(kw) + " without a key the language can write";
          return "";
        }
        std::string s = std::string(kw) + " \"" + c.key + "\"";
        if (c.kind == CallKind::HostBarrier && !c.members.empty()) s += " " + model::rank_list_text(c.members);
        return s;
      }
      case CallKind::MpiError:
        if (c.key.empty() || c.key.find_first_of("\"\n") != std::string::npos) {
          reason = "an MPI usage error without a text the language can write";
          return "";
        }
        // `mpi_error RULE "TEXT"`: the rule of model/mpi_rules.def the call breaks, then what the reader found.
        return "mpi_error " + (c.mpi_rule ? std::string(model::mpi_rule_info(*c.mpi_rule).name) + " " : std::string()) +
               "\"" + c.key + "\"";
      case CallKind::GroupStart:
      case CallKind::GroupEnd:
        return "";
      case CallKind::CommShrink:
      case CallKind::CommGrow:
        reason = std::string(kw) + ": the trace does not name the child communicator's members";
        return "";
      case CallKind::Other:
        reason = c.detail.empty() ? "a call the language has no statement for" : c.detail;
        return "";
    }
    return "";
  }

  const Trace& trace_;
  const EmitOptions& options_;
  int world_ = 1;
  std::ostringstream out_;
  std::map<std::string, std::string> names_;
  std::map<std::string, std::set<int>> members_;
};

}  // namespace

std::string scenario_buffer_name(const std::string& buffer) { return buffer.empty() ? "buf" : sanitize(buffer, "b_"); }

std::string emit_scenario(const Trace& trace, const EmitOptions& options) { return Emitter(trace, options).run(); }

std::map<std::string, std::string> scenario_comm_names(const Trace& trace) {
  const EmitOptions defaults;  // the emitter keeps a reference: it must outlive it
  Emitter emitter(trace, defaults);
  emitter.run();
  return emitter.comm_names();
}

}  // namespace collmc::traces
