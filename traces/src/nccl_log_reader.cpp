// NCCL debug logs (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS including INIT and COLL; one file per rank or
// interleaved) into the trace model. Lines are "host:pid:tid [dev] NCCL INFO <message>"; the messages
// read are those NCCL 2.28 prints from src/init.cc (Init START/COMPLETE of ncclCommInitRank* and
// ncclCommSplit, Destroy/Abort COMPLETE) and from src/enqueue.cc (one line per collective and
// send/recv, "AllReduce: opCount ... comm 0x... [nranks=N] stream 0x..."). Communicators are matched
// across processes by commId (splits: parent, splitCount and color), within a process by pointer.
#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "collmc/traces/trace.h"
#include "file_io.h"
#include "rank_list.h"

namespace collmc::traces {
namespace {

constexpr size_t kMaxLine = 8192;  // longer lines are none of the messages read here
constexpr int kMaxRanks = 1 << 16;

struct Token {
  std::string text;
  int column = 0;  // 1-based
};

struct Where {
  const std::string* file = nullptr;
  int line = 0;
};

// One collective or init line, before ranks are known.
struct PendingCall {
  Call call;
  std::string comm_ptr;        // the comm pointer in this process (resolved to an id later)
  std::optional<int> root_cr;  // root / peer as a comm rank
  std::optional<uint64_t> op_count;
  Where where;
  int column = 0;
};

struct CommSeen {
  std::string id;
  int rank = -1, nranks = 0;
  bool split = false;
};

struct Process {
  std::string key;  // host:pid, or the file name when lines carry no prefix
  std::string file;
  // Calls in line order. NCCL logs init from its own threads, so a line's tid is not the program's
  // thread: the process's lines, in the order it wrote them, are its one program.
  std::vector<PendingCall> calls;
  std::map<std::string, CommSeen> comm_by_ptr;          // the comm a pointer stands for now
  std::map<std::string, size_t> open_init;              // comm ptr -> index of its Init START call
  std::vector<std::pair<std::string, CommSeen>> comms;  // every comm this process joined, in order
  int global_rank = -1;
};

std::vector<Token> tokenize(const std::string& s, size_t from) {
  std::vector<Token> out;
  size_t i = from;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
    if (i > start) out.push_back({s.substr(start, i - start), static_cast<int>(start) + 1});
  }
  return out;
}

class LogReader {
 public:
  void read(const std::string& file, const std::string& text) {
    files_.push_back(file);
    const std::string& name = files_.back();
    size_t pos = 0;
    int line_no = 0;
    while (pos < text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos) end = text.size();
      ++line_no;
      if (end - pos <= kMaxLine) read_line(name, line_no, text.substr(pos, end - pos));
      pos = end + 1;
    }
  }

  // Takes in what `part` read of one file (read on its own, in parallel with other files): the same state
  // as if this reader had read that file next, unless a process of `part` already has lines here (a process
  // whose log spans files, whose later lines need its earlier comms): then false, and nothing is taken.
  bool absorb(LogReader&& part) {
    for (const auto& p : part.processes_)
      if (index_.count(p.key)) return false;
    // `Where`s point at the part's file names: keep them where they are (a deque's move keeps its elements).
    kept_files_.push_back(std::make_unique<std::deque<std::string>>(std::move(part.files_)));
    for (const auto& f : *kept_files_.back()) files_.push_back(f);
    for (auto& p : part.processes_) {
      index_[p.key] = processes_.size();
      processes_.push_back(std::move(p));
    }
    for (const auto& note : part.trace_.notes) note_once(note);
    for (auto& [id, parent] : part.split_parent_) split_parent_[id] = std::move(parent);
    for (const auto& [id, color] : part.split_color_) split_color_[id] = color;
    return true;
  }

  Trace finish() {
    if (processes_.empty())
      throw TraceInputError(files_.empty() ? std::string() : files_.front(), 0, 0, 0,
                            "no NCCL INFO init or collective lines found (expected a log written with "
                            "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL)");
    assign_global_ranks();
    build_comms();
    build_ranks();
    return std::move(trace_);
  }

 private:
  [[noreturn]] void fail(const Where& w, int column, const std::string& message) const {
    throw TraceInputError(*w.file, w.line, column, 0, message);
  }

  void read_line(const std::string& file, int line_no, const std::string& line) {
    static const std::string marker = "NCCL INFO ";
    size_t at = line.find(marker);
    if (at == std::string::npos) return;
    Where w{&file, line_no};
    std::string key = file, tid = "main";
    // Prefix "host:pid:tid [dev] ".
    std::string prefix = line.substr(0, at);
    if (size_t br = prefix.rfind(" ["); br != std::string::npos) {
      std::string hpt = prefix.substr(0, br);
      size_t c2 = hpt.rfind(':');
      size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : hpt.rfind(':', c2 - 1);
      if (c1 != std::string::npos) {
        key = hpt.substr(0, c2);
        tid = hpt.substr(c2 + 1);
      }
    }
    auto tokens = tokenize(line, at + marker.size());
    if (tokens.empty()) return;
    Process& p = process(key, file);
    const std::string& head = tokens[0].text;
    if (head.starts_with("ncclComm") && has(tokens, "Init")) {
      read_init(p, tid, tokens, w);
    } else if (head == "comm" && (has(tokens, "Destroy") || has(tokens, "Abort")) && has(tokens, "COMPLETE")) {
      read_destroy(p, tid, tokens, w);
    } else if (head.size() > 1 && head.back() == ':' && tokens.size() > 1 && tokens[1].text == "opCount") {
      read_collective(p, tid, tokens, w);
    }
  }

  Process& process(const std::string& key, const std::string& file) {
    auto it = index_.find(key);
    if (it != index_.end()) return processes_[it->second];
    index_[key] = processes_.size();
    Process p;
    p.key = key;
    p.file = file;
    processes_.push_back(std::move(p));
    return processes_.back();
  }

  static bool has(const std::vector<Token>& t, const char* word) {
    return std::any_of(t.begin(), t.end(), [&](const Token& k) { return k.text == word; });
  }

  // The token after `key`; nullptr when absent.
  static const Token* after(const std::vector<Token>& t, const char* key) {
    for (size_t i = 0; i + 1 < t.size(); ++i)
      if (t[i].text == key) return &t[i + 1];
    return nullptr;
  }

  int64_t number(const std::vector<Token>& t, const char* key, const Where& w, int base = 10) const {
    const Token* v = after(t, key);
    if (!v) fail(w, t.empty() ? 0 : t.back().column, std::string("expected '") + key + " <number>'");
    return parse_number(*v, key, w, base);
  }

  int64_t parse_number(const Token& v, const char* key, const Where& w, int base) const {
    std::string s = v.text;
    if (!s.empty() && s.back() == '-') s.pop_back();  // "key 0- Init START"
    if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s = s.substr(2);
    bool ok = !s.empty() && s.size() <= (base == 16 ? 16u : 18u);
    size_t i = (base == 10 && !s.empty() && s[0] == '-') ? 1 : 0;
    if (i == s.size()) ok = false;
    for (; ok && i < s.size(); ++i)
      ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(s[i])) != 0
                      : std::isdigit(static_cast<unsigned char>(s[i])) != 0;
    if (!ok) fail(w, v.column, std::string("expected a number after '") + key + "', got '" + v.text + "'");
    // Hex values are unsigned 64-bit (opCount is %lx); decimal ones fit in 18 digits.
    return base == 16 ? static_cast<int64_t>(std::stoull(s, nullptr, 16)) : std::stoll(s, nullptr, 10);
  }

  std::string pointer(const std::vector<Token>& t, const char* key, const Where& w) const {
    const Token* v = after(t, key);
    if (!v) fail(w, t.empty() ? 0 : t.back().column, std::string("expected '") + key + " 0x<pointer>'");
    if (v->text == "(nil)") return "0";
    std::string s = v->text;
    if (s.starts_with("0x")) s = s.substr(2);
    if (s.empty() || s.size() > 16 ||
        !std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      fail(w, v->column, std::string("expected a pointer after '") + key + "', got '" + v->text + "'");
    size_t nz = s.find_first_not_of('0');
    return nz == std::string::npos ? "0" : s.substr(nz);
  }

  void add_call(Process& p, const std::string& tid, PendingCall c) {
    c.call.origin += " tid " + tid;
    p.calls.push_back(std::move(c));
  }

  void read_init(Process& p, const std::string& tid, const std::vector<Token>& t, const Where& w) {
    std::string ptr = pointer(t, "comm", w);
    bool complete = has(t, "COMPLETE");
    if (!complete && !has(t, "START")) return;  // other init messages ("Init timings", ...)
    int64_t rank = number(t, "rank", w), nranks = number(t, "nranks", w);
    if (nranks < 1 || nranks > kMaxRanks || rank < 0 || rank >= nranks)
      fail(w, after(t, "rank")->column,
           "rank " + std::to_string(rank) + " of nranks " + std::to_string(nranks) +
               " is not a rank of the communicator");
    bool split = after(t, "parent") != nullptr;
    if (complete && p.open_init.count(ptr)) {  // the return of a call seen starting
      p.calls[p.open_init[ptr]].call.state = CallState::Completed;
      p.open_init.erase(ptr);
      return;
    }
    CommSeen seen;
    seen.rank = static_cast<int>(rank);
    seen.nranks = static_cast<int>(nranks);
    seen.split = split;
    PendingCall c;
    c.where = w;
    c.column = t[0].column;
    c.call.origin = w.file->substr(w.file->rfind('/') + 1) + ":" + std::to_string(w.line);
    c.call.state = complete ? CallState::Completed : CallState::Started;
    if (split) {
      std::string parent = pointer(t, "parent", w);
      int64_t count = number(t, "splitCount", w), color = number(t, "color", w);
      auto pit = p.comm_by_ptr.find(parent);
      std::string parent_id = pit == p.comm_by_ptr.end() ? "" : pit->second.id;
      if (parent_id.empty()) {
        note_once("a split's parent communicator has no init line in " + p.key +
                  ": that child cannot be matched across processes");
        parent_id = "unknown:" + p.key + ":" + parent;
      }
      seen.id = "split:" + parent_id + "/" + std::to_string(count) + "/" + std::to_string(color);
      c.call.kind = CallKind::CommSplit;
      c.call.comm = parent_id;
      c.comm_ptr = parent;
      c.call.child_comm = seen.id;
      c.call.detail = "color " + std::to_string(color);
      split_parent_[seen.id] = parent_id;
      split_color_[seen.id] = color;
    } else {
      seen.id = "commid:" + pointer(t, "commId", w);
      c.call.kind = CallKind::CommInit;
      c.call.comm = seen.id;
    }
    p.comm_by_ptr[ptr] = seen;
    p.comms.emplace_back(ptr, seen);
    if (!complete) p.open_init[ptr] = p.calls.size();
    add_call(p, tid, std::move(c));
  }

  void read_destroy(Process& p, const std::string& tid, const std::vector<Token>& t, const Where& w) {
    std::string ptr = pointer(t, "comm", w);
    auto it = p.comm_by_ptr.find(ptr);
    if (it == p.comm_by_ptr.end()) return;  // a comm we never saw created: nothing to destroy here
    PendingCall c;
    c.where = w;
    c.column = t[0].column;
    c.call.kind = has(t, "Abort") ? CallKind::CommAbort : CallKind::CommDestroy;
    c.call.comm = it->second.id;
    c.call.origin = w.file->substr(w.file->rfind('/') + 1) + ":" + std::to_string(w.line);
    add_call(p, tid, std::move(c));
    p.comm_by_ptr.erase(it);
  }

  void read_collective(Process& p, const std::string& tid, const std::vector<Token>& t, const Where& w) {
    std::string op = t[0].text.substr(0, t[0].text.size() - 1);
    static const std::map<std::string, CallKind> kinds = {
        {"AllReduce", CallKind::AllReduce},
        {"AllGather", CallKind::AllGather},
        {"ReduceScatter", CallKind::ReduceScatter},
        {"Broadcast", CallKind::Broadcast},
        {"Bcast", CallKind::Broadcast},
        {"Reduce", CallKind::Reduce},
        {"AlltoAll", CallKind::AllToAll},
        {"AllToAll", CallKind::AllToAll},
        {"Gather", CallKind::AllToAll},
        {"Scatter", CallKind::AllToAll},
        {"Send", CallKind::Send},
        {"Recv", CallKind::Recv},
    };
    auto kit = kinds.find(op);
    if (kit == kinds.end()) {
      note_once("NCCL operation '" + op + "' has no statement in the scenario language; kept as a comment");
    }
    static const char* kDtypes[] = {"int8",    "uint8",   "int32",   "uint32",   "int64",      "uint64",
                                    "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
    static const char* kOps[] = {"sum", "prod", "max", "min", "avg"};
    PendingCall c;
    c.where = w;
    c.column = t[0].column;
    c.call.kind = kit == kinds.end() ? CallKind::Other : kit->second;
    c.call.detail = op;
    c.comm_ptr = pointer(t, "comm", w);
    c.op_count = static_cast<uint64_t>(number(t, "opCount", w, 16));
    c.call.seq = static_cast<int64_t>(*c.op_count);
    int64_t count = number(t, "count", w);
    if (count < 0) fail(w, after(t, "count")->column, "expected a non-negative count");
    c.call.count = static_cast<uint64_t>(count);
    int64_t dtype = number(t, "datatype", w);
    if (dtype >= 0 && dtype < 12) c.call.dtype = kDtypes[dtype];
    bool reduction =
        c.call.kind == CallKind::AllReduce || c.call.kind == CallKind::Reduce || c.call.kind == CallKind::ReduceScatter;
    if (after(t, "op")) {
      int64_t redop = number(t, "op", w);
      if (reduction && redop >= 0 && redop < 5) c.call.redop = kOps[redop];
    }
    bool rooted = c.call.kind == CallKind::Broadcast || c.call.kind == CallKind::Reduce ||
                  c.call.kind == CallKind::Send || c.call.kind == CallKind::Recv;
    if (rooted) {
      int64_t root = number(t, "root", w);
      if (root < 0 || root >= kMaxRanks) fail(w, after(t, "root")->column, "root/peer is not a rank");
      c.root_cr = static_cast<int>(root);
    }
    std::string send = pointer(t, "sendbuff", w), recv = pointer(t, "recvbuff", w);
    c.call.buffer = "b_" + (c.call.kind == CallKind::Recv ? recv : send);
    if (send != recv && c.call.kind != CallKind::Send && c.call.kind != CallKind::Recv)
      c.call.recv_buffer = "b_" + recv;
    if (after(t, "stream")) {
      std::string s = pointer(t, "stream", w);
      c.call.stream = s == "0" ? "" : "s_" + s;
    }
    c.call.origin = w.file->substr(w.file->rfind('/') + 1) + ":" + std::to_string(w.line) + " opCount " +
                    std::to_string(*c.op_count);
    auto it = p.comm_by_ptr.find(c.comm_ptr);
    if (it == p.comm_by_ptr.end()) {
      note_once(
          "collectives on a communicator with no init line (was INIT in NCCL_DEBUG_SUBSYS?) are kept as comments");
      c.call.detail = op + " on comm 0x" + c.comm_ptr + " (no init line)";
      c.call.kind = CallKind::Other;
    } else {
      c.call.comm = it->second.id;
    }
    add_call(p, tid, std::move(c));
  }

  // A process's global rank is its rank in a world-sized communicator created by init (PyTorch's
  // default group); failing that, in any world-sized one.
  void assign_global_ranks() {
    int world = 0;
    for (const auto& p : processes_)
      for (const auto& [ptr, c] : p.comms) world = std::max(world, c.nranks);
    if (world == 0) world = static_cast<int>(processes_.size());
    std::map<int, const Process*> taken;
    std::vector<Process*> unplaced;
    for (auto& p : processes_) {
      for (bool want_init : {true, false}) {
        if (p.global_rank >= 0) break;
        for (const auto& [ptr, c] : p.comms)
          if (c.nranks == world && (!want_init || !c.split)) {
            p.global_rank = c.rank;
            break;
          }
      }
      if (p.global_rank < 0) {
        unplaced.push_back(&p);
        continue;
      }
      if (taken.count(p.global_rank))
        throw TraceInputError(p.file, 0, 0, 0,
                              "two processes (" + taken[p.global_rank]->key + " and " + p.key + ") are both rank " +
                                  std::to_string(p.global_rank) + " of the world communicator");
      taken[p.global_rank] = &p;
    }
    int next = 0;
    for (Process* p : unplaced) {
      while (taken.count(next)) ++next;
      p->global_rank = next;
      taken[next] = p;
      note_once("process " + p->key + " joined no world-sized communicator; it is taken as rank " +
                std::to_string(next));
    }
    world_ = std::max(world, static_cast<int>(taken.empty() ? 0 : taken.rbegin()->first + 1));
  }

  void build_comms() {
    std::map<std::string, size_t> index;
    for (const auto& p : processes_) {
      for (const auto& [ptr, seen] : p.comms) {
        auto it = index.find(seen.id);
        if (it == index.end()) {
          Communicator c;
          c.id = seen.id;
          c.size = seen.nranks;
          c.origin = seen.split ? CommOrigin::Split : CommOrigin::Init;
          if (seen.split) {
            c.parent = split_parent_[seen.id];
            c.split_color = split_color_[seen.id];
          }
          it = index.emplace(seen.id, trace_.comms.size()).first;
          trace_.comms.push_back(std::move(c));
        }
        Communicator& c = trace_.comms[it->second];
        if (c.size != seen.nranks)
          throw TraceInputError(p.file, 0, 0, 0,
                                "communicator " + seen.id + " has nranks " + std::to_string(c.size) +
                                    " in one process and " + std::to_string(seen.nranks) + " in " + p.key);
        c.members[p.global_rank] = seen.rank;
      }
    }
    // Members with no log lines: the ranks that left no log stand in for them, else added ranks with
    // an empty program, so the check still sees a member that never made the call.
    std::set<int> taken;
    for (const auto& p : processes_) taken.insert(p.global_rank);
    std::vector<int> absent;
    for (int r = 0; r < world_; ++r)
      if (!taken.count(r)) absent.push_back(r);
    int added = world_;
    for (auto& c : trace_.comms) {
      c.label = label(c);
      int need = c.size - static_cast<int>(c.members.size());
      if (need <= 0) continue;
      std::vector<int> standing_in;
      for (int a : absent)
        if (need > 0 && !c.members.count(a)) {
          c.members[a] = -1;  // its rank in the comm is unknown
          standing_in.push_back(a);
          --need;
        }
      for (; need > 0; --need) {
        if (added >= kMaxRanks) throw TraceInputError(files_.front(), 0, 0, 0, "more than 65536 ranks");
        c.members[added] = -1;
        standing_in.push_back(added++);
      }
      trace_.notes.push_back("communicator " + c.label + ": " + std::to_string(c.size - standing_in.size()) +
                             " of its " + std::to_string(c.size) + " members have log lines; " +
                             (standing_in.size() == 1 ? "rank " : "ranks ") + rank_list(standing_in) +
                             " stand(s) for the others, with no calls");
    }
    world_ = added;
    comm_index_ = std::move(index);
  }

  std::string label(const Communicator& c) const {
    if (c.id.starts_with("commid:")) return "commId 0x" + c.id.substr(7);
    return "split of " + (c.parent.starts_with("commid:") ? "commId 0x" + c.parent.substr(7) : c.parent) + " color " +
           std::to_string(c.split_color.value_or(0));
  }

  // Resolves comm ranks (root, peer) to global ranks, wraps same-opCount runs in groups.
  void build_ranks() {
    trace_.format = "nccl-log";
    trace_.world_size = std::max(world_, 1);
    for (auto& p : processes_) {
      RankTrace& rt = trace_.ranks[p.global_rank];
      rt.rank = p.global_rank;
      rt.source = p.file + " (" + p.key + ")";
      ThreadTrace t;
      t.name = "main";
      const auto& calls = p.calls;
      for (size_t i = 0; i < calls.size();) {
        size_t j = i + 1;
        // NCCL advances a comm's opCount at each launch: consecutive calls on one comm that share
        // it were issued inside one ncclGroupStart/End.
        while (j < calls.size() && calls[i].op_count && calls[j].op_count == calls[i].op_count &&
               calls[j].comm_ptr == calls[i].comm_ptr && calls[j].call.kind != CallKind::Other)
          ++j;
        if (j - i > 1) {
          Call g;
          g.kind = CallKind::GroupStart;
          g.origin = "same opCount: one group";
          t.calls.push_back(g);
        }
        for (size_t k = i; k < j; ++k) t.calls.push_back(resolve(calls[k]));
        if (j - i > 1) {
          Call g;
          g.kind = CallKind::GroupEnd;
          t.calls.push_back(g);
        }
        i = j;
      }
      rt.threads.push_back(std::move(t));
    }
    std::vector<int> missing;
    for (int r = 0; r < trace_.world_size; ++r) {
      if (trace_.ranks.count(r)) continue;
      trace_.ranks[r].rank = r;
      trace_.ranks[r].present = false;
      missing.push_back(r);
    }
    if (!missing.empty())
      trace_.notes.push_back((missing.size() == 1 ? "rank " : "ranks ") + rank_list(missing) +
                             (missing.size() == 1 ? " has" : " have") + " no log lines: an empty program here");
  }

  Call resolve(const PendingCall& pc) {
    Call c = pc.call;
    if (!pc.root_cr || c.comm.empty()) return c;
    const Communicator& comm = trace_.comms[comm_index_.at(c.comm)];
    int global = -1;
    for (const auto& [g, r] : comm.members)
      if (r == *pc.root_cr) global = g;
    if (global < 0) {
      if (*pc.root_cr >= comm.size)
        fail(pc.where, pc.column,
             "root/peer " + std::to_string(*pc.root_cr) + " is outside a communicator of " + std::to_string(comm.size) +
                 " ranks");
      note_once("a root or peer is a rank with no log lines; that call is kept as a comment");
      c.detail = std::string(call_kind_name(c.kind)) + " with a root/peer that has no log";
      c.kind = CallKind::Other;
      return c;
    }
    if (c.kind == CallKind::Send || c.kind == CallKind::Recv) {
      c.peer = global;
    } else {
      c.root = global;
    }
    return c;
  }

  void note_once(const std::string& note) {
    if (std::find(trace_.notes.begin(), trace_.notes.end(), note) == trace_.notes.end()) trace_.notes.push_back(note);
  }

  std::deque<std::string> files_;                                     // stable addresses: `Where` points into it
  std::vector<std::unique_ptr<std::deque<std::string>>> kept_files_;  // absorbed parts' file names
  std::vector<Process> processes_;
  std::map<std::string, size_t> index_;
  std::map<std::string, std::string> split_parent_;
  std::map<std::string, int64_t> split_color_;
  std::map<std::string, size_t> comm_index_;
  Trace trace_;
  int world_ = 0;
};

}  // namespace

Trace read_nccl_logs(const std::vector<std::string>& files) {
  if (files.empty()) throw TraceInputError("", 0, 0, 0, "no NCCL log given");
  // One reader per file, on one worker per core; then merged in file order (the first error in file order
  // is the one reported, as when they were read one after another).
  std::vector<LogReader> parts(files.size());
  for_each_file(files.size(), 0, [&](size_t i) { parts[i].read(files[i], read_trace_file(files[i])); });
  LogReader reader;
  for (auto& part : parts) {
    if (reader.absorb(std::move(part))) continue;
    // A process's lines span files: read them all again, in order, into one reader.
    LogReader whole;
    for (const auto& f : files) whole.read(f, read_trace_file(f));
    return whole.finish();
  }
  return reader.finish();
}

Trace read_nccl_log_buffer(const std::string& name, const std::string& text) {
  LogReader reader;
  reader.read(name, text);
  return reader.finish();
}

}  // namespace collmc::traces
