// NCCL debug logs (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS including INIT and COLL; one file per rank or
// interleaved) into the trace model. Lines are "host:pid:tid [dev] NCCL INFO <message>"; the messages
// read are those NCCL 2.28 prints from src/init.cc (Init START/COMPLETE of ncclCommInitRank* and
// ncclCommSplit, Destroy/Abort COMPLETE) and from src/enqueue.cc (one line per collective and
// send/recv, "AllReduce: opCount ... comm 0x... [nranks=N] stream 0x..."). Communicators are matched
// across processes by commId (splits: parent, splitCount and color), within a process by pointer.
#include <algorithm>
#include <charconv>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string_view>

#include "collmc/traces/trace.h"
#include "file_io.h"
#include "held_calls.h"
#include "rank_list.h"

namespace collmc::traces {
namespace {

constexpr size_t kMaxLine = 8192;  // longer lines are none of the messages read here
constexpr int kMaxRanks = 1 << 16;

struct Token {
  std::string_view text;
  int column = 0;  // 1-based
};

struct Where {
  const std::string* file = nullptr;
  int line = 0;
};

// Per call shape (held_calls.h), what the reader needs besides the Call: where its first line was (errors
// name a line of the file it came from), its thread, the comm pointer in this process.
struct ShapeSource {
  const std::string* file = nullptr;
  std::string tid;
  std::string comm_ptr;
  int column = 0;
  bool has_op_count = false;    // a collective: the held call's seq is its opCount, and its origin says so
  bool literal_origin = false;  // a group delimiter the reader made: its origin as it is
  bool resolved = false;        // its root or peer is a world rank now (build)
};

struct CommSeen {
  std::string id;
  int rank = -1, nranks = 0;
  bool split = false;
};

struct Process {
  std::string key;  // host:pid, or the file name when lines carry no prefix
  std::string file;
  // Calls in line order, held (held_calls.h): a process makes the same few collectives thousands of times.
  // NCCL logs init from its own threads, so a line's tid is not the program's thread: the process's lines,
  // in the order it wrote them, are its one program.
  CallShapes shapes;
  std::vector<ShapeSource> sources;  // by shape
  std::vector<HeldCall> calls;
  std::map<std::string, CommSeen> comm_by_ptr;          // the comm a pointer stands for now
  std::map<std::string, size_t> open_init;              // comm ptr -> index of its Init START call
  std::map<std::string, size_t> open_teardown;          // comm ptr -> its Destroy/Finalize START call (2.31+)
  std::vector<std::pair<std::string, CommSeen>> comms;  // every comm this process joined, in order
  const std::string* keys_file = nullptr;               // the file the shapes' keys were found in
  int global_rank = -1;
};

void tokenize(std::string_view s, size_t from, std::vector<Token>& out) {
  out.clear();
  size_t i = from;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
    if (i > start) out.push_back({s.substr(start, i - start), static_cast<int>(start) + 1});
  }
}

// The token at `from` and where the next one may start.
std::string_view next_token(std::string_view s, size_t& from) {
  while (from < s.size() && (s[from] == ' ' || s[from] == '\t' || s[from] == '\r')) ++from;
  const size_t start = from;
  while (from < s.size() && s[from] != ' ' && s[from] != '\t' && s[from] != '\r') ++from;
  return s.substr(start, from - start);
}

class LogReader {
 public:
  explicit LogReader(bool full_history = true) : full_history_(full_history) {}

  void read(const std::string& file, std::string_view text) {
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
    // Shapes point at the part's file names: keep them where they are (a deque's move keeps its elements).
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

  void read_line(const std::string& file, int line_no, std::string_view line) {
    static constexpr std::string_view marker = "NCCL INFO ";
    const size_t at = line.find(marker);
    if (at == std::string_view::npos) return;
    Where w{&file, line_no};
    std::string_view key = file, tid = "main";
    // Prefix "host:pid:tid [dev] ".
    const std::string_view prefix = line.substr(0, at);
    if (size_t br = prefix.rfind(" ["); br != std::string_view::npos) {
      const std::string_view hpt = prefix.substr(0, br);
      size_t c2 = hpt.rfind(':');
      size_t c1 = c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : hpt.rfind(':', c2 - 1);
      if (c1 != std::string_view::npos) {
        key = hpt.substr(0, c2);
        tid = hpt.substr(c2 + 1);
      }
    }
    const size_t body = at + marker.size();
    size_t from = body;
    const std::string_view head = next_token(line, from);
    if (head.empty()) return;
    Process& p = process(key, file);
    if (p.keys_file != &file) {  // a shape's origin names its file: keys found in another file do not hold
      p.shapes.forget_keys();
      p.keys_file = &file;
    }
    // A collective ("AllReduce: opCount 3f sendbuff ..."): the same line as an earlier one but for its opCount
    // is the same call again (its comm pointer means the same comm: keys are forgotten when that changes).
    shape_key_.clear();
    if (head.size() > 1 && head.back() == ':' && !head.starts_with("ncclComm")) {
      size_t at_count = from;
      if (next_token(line, at_count) == "opCount") {
        size_t end_count = at_count;
        const std::string_view count = next_token(line, end_count);
        if (!count.empty()) {
          const size_t count_at = end_count - count.size();
          shape_key_.append(line.substr(0, count_at)).append(line.substr(end_count));
          if (auto shape = p.shapes.find(shape_key_)) {
            const Token t{count, static_cast<int>(count_at) + 1};
            p.calls.emplace_back(*shape, static_cast<uint64_t>(line_no), CallState::Completed,
                                 parse_number(t, "opCount", w, 16));
            return;
          }
        }
      }
    }
    tokenize(line, body, tokens_);
    const auto& tokens = tokens_;
    const std::string tid_text(tid);
    if (head.starts_with("ncclComm") && has(tokens, "Init")) {
      read_init(p, tid_text, tokens, w);
    } else if (head == "comm" && (has(tokens, "Destroy") || has(tokens, "Abort") || has(tokens, "Finalize")) &&
               (has(tokens, "COMPLETE") || has(tokens, "START"))) {
      read_destroy(p, tid_text, tokens, w);
    } else if (line.find("NCCL_RMA_EAGER_INIT set by environment to 1") != std::string_view::npos) {
      note_once(
          "NCCL_RMA_EAGER_INIT=1 was set: NCCL 2.31+ ran the RMA setup at init (check with set rma_eager_init = on)");
    } else if (head.size() > 1 && head.back() == ':' && tokens.size() > 1 && tokens[1].text == "opCount") {
      read_collective(p, tid_text, tokens, w);
    }
  }

  Process& process(std::string_view key, const std::string& file) {
    if (last_process_ < processes_.size() && processes_[last_process_].key == key) return processes_[last_process_];
    std::string k(key);
    auto it = index_.find(k);
    if (it != index_.end()) {
      last_process_ = it->second;
      return processes_[it->second];
    }
    last_process_ = processes_.size();
    index_[k] = processes_.size();
    Process p;
    p.key = std::move(k);
    p.file = file;
    processes_.push_back(std::move(p));
    return processes_.back();
  }

  static bool has(const std::vector<Token>& t, std::string_view word) {
    return std::any_of(t.begin(), t.end(), [&](const Token& k) { return k.text == word; });
  }

  // The token after `key`; nullptr when absent.
  static const Token* after(const std::vector<Token>& t, std::string_view key) {
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
    std::string_view s = v.text;
    if (!s.empty() && s.back() == '-') s.remove_suffix(1);  // "key 0- Init START"
    if (base == 16 && (s.starts_with("0x") || s.starts_with("0X"))) s.remove_prefix(2);
    bool ok = !s.empty() && s.size() <= (base == 16 ? 16u : 18u);
    size_t i = (base == 10 && !s.empty() && s[0] == '-') ? 1 : 0;
    if (i == s.size()) ok = false;
    for (; ok && i < s.size(); ++i)
      ok = base == 16 ? std::isxdigit(static_cast<unsigned char>(s[i])) != 0
                      : std::isdigit(static_cast<unsigned char>(s[i])) != 0;
    if (!ok) fail(w, v.column, std::string("expected a number after '") + key + "', got '" + std::string(v.text) + "'");
    // Hex values are unsigned 64-bit (opCount is %lx); decimal ones fit in 18 digits.
    if (base == 16) {
      uint64_t value = 0;
      std::from_chars(s.data(), s.data() + s.size(), value, 16);
      return static_cast<int64_t>(value);
    }
    int64_t value = 0;
    std::from_chars(s.data(), s.data() + s.size(), value, 10);
    return value;
  }

  std::string pointer(const std::vector<Token>& t, const char* key, const Where& w) const {
    const Token* v = after(t, key);
    if (!v) fail(w, t.empty() ? 0 : t.back().column, std::string("expected '") + key + " 0x<pointer>'");
    if (v->text == "(nil)") return "0";
    std::string_view s = v->text;
    if (s.starts_with("0x")) s.remove_prefix(2);
    if (s.empty() || s.size() > 16 ||
        !std::all_of(s.begin(), s.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
      fail(w, v->column, std::string("expected a pointer after '") + key + "', got '" + std::string(v->text) + "'");
    size_t nz = s.find_first_not_of('0');
    return nz == std::string_view::npos ? "0" : std::string(s.substr(nz));
  }

  // A call of a shape of its own (init, split, destroy) or a new collective shape, found again by `key`.
  size_t add_call(Process& p, CallShape shape, ShapeSource source, CallState state, int line, int64_t seq = 0,
                  std::string_view key = {}) {
    const uint32_t s = p.shapes.add(std::move(shape), key);
    p.sources.push_back(std::move(source));
    p.calls.emplace_back(s, static_cast<uint64_t>(line), state, seq);
    return p.calls.size() - 1;
  }

  static ShapeSource source_of(const std::string& tid, const std::vector<Token>& t, const Where& w) {
    ShapeSource src;
    src.file = w.file;
    src.tid = tid;
    src.column = t[0].column;
    return src;
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
      p.calls[p.open_init[ptr]].state = static_cast<uint32_t>(CallState::Completed) & 3u;
      p.open_init.erase(ptr);
      return;
    }
    CommSeen seen;
    seen.rank = static_cast<int>(rank);
    seen.nranks = static_cast<int>(nranks);
    seen.split = split;
    CallShape shape;
    ShapeSource src = source_of(tid, t, w);
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
      shape.call.kind = CallKind::CommSplit;
      shape.call.comm = parent_id;
      src.comm_ptr = parent;
      shape.call.child_comm = seen.id;
      shape.call.detail = "color " + std::to_string(color);
      split_parent_[seen.id] = parent_id;
      split_color_[seen.id] = color;
    } else {
      seen.id = "commid:" + pointer(t, "commId", w);
      shape.call.kind = CallKind::CommInit;
      shape.call.comm = seen.id;
    }
    p.comm_by_ptr[ptr] = seen;
    p.comms.emplace_back(ptr, seen);
    p.shapes.forget_keys();  // the pointer may name another comm than in earlier lines
    const size_t index =
        add_call(p, std::move(shape), std::move(src), complete ? CallState::Completed : CallState::Started, w.line);
    if (!complete) p.open_init[ptr] = index;
  }

  // "comm 0x.. rank R ... - Destroy COMPLETE" (and Abort); from NCCL 2.31 also "- Destroy START",
  // "- Finalize START" and "- Finalize COMPLETE" (src/init.cc ncclCommDestroy, ncclCommFinalize,
  // commDestroySync): a START without its COMPLETE is a teardown that never returned (2.31's intra-node
  // barrier waits for every member on the host), so the call stays Started.
  void read_destroy(Process& p, const std::string& tid, const std::vector<Token>& t, const Where& w) {
    std::string ptr = pointer(t, "comm", w);
    auto it = p.comm_by_ptr.find(ptr);
    if (it == p.comm_by_ptr.end()) return;  // a comm we never saw created: nothing to destroy here
    const bool complete = has(t, "COMPLETE");
    const CallKind kind = has(t, "Abort")      ? CallKind::CommAbort
                          : has(t, "Finalize") ? CallKind::CommFinalize
                                               : CallKind::CommDestroy;
    if (auto open = p.open_teardown.find(ptr); complete && open != p.open_teardown.end()) {
      // The return of a call seen starting (a destroy after a finalize logs no START of its own).
      HeldCall& started = p.calls[open->second];
      if (p.shapes[started.shape].call.kind == kind) {
        started.state = static_cast<uint32_t>(CallState::Completed) & 3u;
        p.open_teardown.erase(open);
        if (kind != CallKind::CommFinalize) {
          p.comm_by_ptr.erase(it);
          p.shapes.forget_keys();
        }
        return;
      }
    }
    CallShape shape;
    shape.call.kind = kind;
    shape.call.comm = it->second.id;
    const size_t index = add_call(p, std::move(shape), source_of(tid, t, w),
                                  complete ? CallState::Completed : CallState::Started, w.line);
    if (!complete) {
      p.open_teardown[ptr] = index;
      return;
    }
    if (kind != CallKind::CommFinalize) {
      p.comm_by_ptr.erase(it);
      p.shapes.forget_keys();
    }
  }

  void read_collective(Process& p, const std::string& tid, const std::vector<Token>& t, const Where& w) {
    std::string op(t[0].text.substr(0, t[0].text.size() - 1));
    static const std::map<std::string, CallKind, std::less<>> kinds = {
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
    CallShape shape;
    Call& c = shape.call;
    ShapeSource src = source_of(tid, t, w);
    src.has_op_count = true;
    c.kind = kit == kinds.end() ? CallKind::Other : kit->second;
    c.detail = op;
    src.comm_ptr = pointer(t, "comm", w);
    const int64_t op_count = number(t, "opCount", w, 16);
    int64_t count = number(t, "count", w);
    if (count < 0) fail(w, after(t, "count")->column, "expected a non-negative count");
    c.count = static_cast<uint64_t>(count);
    int64_t dtype = number(t, "datatype", w);
    if (dtype >= 0 && dtype < 12) c.dtype = kDtypes[dtype];
    bool reduction = c.kind == CallKind::AllReduce || c.kind == CallKind::Reduce || c.kind == CallKind::ReduceScatter;
    if (after(t, "op")) {
      int64_t redop = number(t, "op", w);
      if (reduction && redop >= 0 && redop < 5) c.redop = kOps[redop];
    }
    bool rooted = c.kind == CallKind::Broadcast || c.kind == CallKind::Reduce || c.kind == CallKind::Send ||
                  c.kind == CallKind::Recv;
    if (rooted) {
      int64_t root = number(t, "root", w);
      if (root < 0 || root >= kMaxRanks) fail(w, after(t, "root")->column, "root/peer is not a rank");
      shape.root_in_comm = root;
    }
    std::string send = pointer(t, "sendbuff", w), recv = pointer(t, "recvbuff", w);
    c.buffer = "b_" + (c.kind == CallKind::Recv ? recv : send);
    if (send != recv && c.kind != CallKind::Send && c.kind != CallKind::Recv) c.recv_buffer = "b_" + recv;
    if (after(t, "stream")) {
      std::string s = pointer(t, "stream", w);
      c.stream = s == "0" ? "" : "s_" + s;
    }
    auto it = p.comm_by_ptr.find(src.comm_ptr);
    if (it == p.comm_by_ptr.end()) {
      note_once(
          "collectives on a communicator with no init line (was INIT in NCCL_DEBUG_SUBSYS?) are kept as comments");
      c.detail = op + " on comm 0x" + src.comm_ptr + " (no init line)";
      c.kind = CallKind::Other;
    } else {
      c.comm = it->second.id;
    }
    add_call(p, std::move(shape), std::move(src), CallState::Completed, w.line, op_count, shape_key_);
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

  // "split #2 of commId 0x2c45... color 7": the split's number on its parent (NCCL's splitCount, the middle of
  // the id "split:<parent>/<splitCount>/<color>") tells apart two splits of one parent with one color.
  std::string label(const Communicator& c) const {
    if (c.id.starts_with("commid:")) return "commId 0x" + c.id.substr(7);
    std::string number;
    if (const size_t last = c.id.rfind('/'); last != std::string::npos && last > 0)
      if (const size_t before = c.id.rfind('/', last - 1); before != std::string::npos)
        number = "#" + c.id.substr(before + 1, last - before - 1) + " ";
    return "split " + number + "of " + (c.parent.starts_with("commid:") ? "commId 0x" + c.parent.substr(7) : c.parent) +
           " color " + std::to_string(c.split_color.value_or(0));
  }

  // Each process's program (same-opCount runs wrapped in groups, roots and peers made world ranks), then the
  // trim on the held calls, then a Call for each call kept.
  void build_ranks() {
    trace_.format = "nccl-log";
    trace_.world_size = std::max(world_, 1);
    std::vector<HeldRank> held;
    held.reserve(processes_.size());
    for (auto& p : processes_) {
      HeldRank hr;
      hr.rank = p.global_rank;
      hr.shapes = &p.shapes;
      hr.threads.push_back(HeldThread{"main", program(p)});
      held.push_back(std::move(hr));
    }
    std::vector<bool> logged(static_cast<size_t>(trace_.world_size), false);
    for (const auto& p : processes_) logged[static_cast<size_t>(p.global_rank)] = true;
    std::vector<int> missing;
    for (int r = 0; r < trace_.world_size; ++r)
      if (!logged[static_cast<size_t>(r)]) missing.push_back(r);
    const std::vector<std::vector<bool>> dropped =
        full_history_ ? std::vector<std::vector<bool>>(held.size()) : trim_held(trace_, held, false);
    for (size_t h = 0; h < held.size(); ++h) {
      Process& p = processes_[h];
      RankTrace& rt = trace_.ranks[p.global_rank];
      rt.rank = p.global_rank;
      rt.source = p.file + " (" + p.key + ")";
      ThreadTrace t;
      t.name = "main";
      const auto& calls = held[h].threads.front().calls;
      for (size_t i = 0; i < calls.size(); ++i)
        if (dropped[h].empty() || !dropped[h][i]) t.calls.push_back(make_call(p, calls[i]));
      rt.threads.push_back(std::move(t));
      held[h].threads.clear();
    }
    for (int r : missing) {
      trace_.ranks[r].rank = r;
      trace_.ranks[r].present = false;
    }
    if (!missing.empty())
      trace_.notes.push_back((missing.size() == 1 ? "rank " : "ranks ") + rank_list(missing) +
                             (missing.size() == 1 ? " has" : " have") + " no log lines: an empty program here");
  }

  // A process's calls in order, with a group around each run that NCCL launched at once; its line-order
  // calls are freed.
  std::vector<HeldCall> program(Process& p) {
    std::vector<HeldCall> out;
    const auto& calls = p.calls;
    out.reserve(calls.size());
    std::optional<uint32_t> group_start, group_end;
    auto op_count = [&](const HeldCall& c) {
      return p.sources[c.shape].has_op_count ? std::optional<int64_t>(c.seq) : std::nullopt;
    };
    for (size_t i = 0; i < calls.size();) {
      size_t j = i + 1;
      // NCCL advances a comm's opCount at each launch: consecutive calls on one comm that share
      // it were issued inside one ncclGroupStart/End.
      const std::optional<int64_t> first = op_count(calls[i]);
      while (j < calls.size() && first && op_count(calls[j]) == first &&
             p.sources[calls[j].shape].comm_ptr == p.sources[calls[i].shape].comm_ptr &&
             p.shapes[calls[j].shape].call.kind != CallKind::Other)
        ++j;
      if (j - i > 1) {
        if (!group_start) {
          CallShape g;
          g.call.kind = CallKind::GroupStart;
          g.call.origin = "same opCount: one group";
          group_start = delimiter(p, std::move(g));
          CallShape e;
          e.call.kind = CallKind::GroupEnd;
          group_end = delimiter(p, std::move(e));
        }
        out.emplace_back(*group_start, 0, CallState::Completed);
      }
      for (size_t k = i; k < j; ++k) {
        resolve(p, calls[k]);
        out.push_back(calls[k]);
      }
      if (j - i > 1) out.emplace_back(*group_end, 0, CallState::Completed);
      i = j;
    }
    std::vector<HeldCall>().swap(p.calls);
    return out;
  }

  static uint32_t delimiter(Process& p, CallShape shape) {
    const uint32_t s = p.shapes.add(std::move(shape));
    ShapeSource src;
    src.literal_origin = true;
    src.resolved = true;
    p.sources.push_back(std::move(src));
    return s;
  }

  // Makes the root or peer of `call`'s shape a world rank (once per shape): the first call of the shape in
  // line order is the one an error names.
  void resolve(Process& p, const HeldCall& call) {
    ShapeSource& src = p.sources[call.shape];
    if (src.resolved) return;
    src.resolved = true;
    CallShape& shape = p.shapes[call.shape];
    Call& c = shape.call;
    if (!shape.root_in_comm || c.comm.empty()) return;
    const auto root_cr = static_cast<int>(*shape.root_in_comm);
    shape.root_in_comm.reset();
    const Communicator& comm = trace_.comms[comm_index_.at(c.comm)];
    int global = -1;
    for (const auto& [g, r] : comm.members)
      if (r == root_cr) global = g;
    if (global < 0) {
      if (root_cr >= comm.size)
        fail(Where{src.file, static_cast<int>(call.line)}, src.column,
             "root/peer " + std::to_string(root_cr) + " is outside a communicator of " + std::to_string(comm.size) +
                 " ranks");
      note_once("a root or peer is a rank with no log lines; that call is kept as a comment");
      c.detail = std::string(call_kind_name(c.kind)) + " with a root/peer that has no log";
      c.kind = CallKind::Other;
      return;
    }
    if (c.kind == CallKind::Send || c.kind == CallKind::Recv) {
      c.peer = global;
    } else {
      c.root = global;
    }
  }

  static Call make_call(const Process& p, const HeldCall& held) {
    const ShapeSource& src = p.sources[held.shape];
    Call c = p.shapes[held.shape].call;
    c.state = held.call_state();
    if (src.literal_origin) return c;
    c.origin = src.file->substr(src.file->rfind('/') + 1) + ":" + std::to_string(held.line);
    if (src.has_op_count) {
      c.seq = held.seq;
      c.origin += " opCount " + std::to_string(static_cast<uint64_t>(held.seq));
    }
    c.origin += " tid " + src.tid;
    return c;
  }

  void note_once(const std::string& note) {
    if (std::find(trace_.notes.begin(), trace_.notes.end(), note) == trace_.notes.end()) trace_.notes.push_back(note);
  }

  bool full_history_ = true;
  std::deque<std::string> files_;                                     // stable addresses: shapes point into it
  std::vector<std::unique_ptr<std::deque<std::string>>> kept_files_;  // absorbed parts' file names
  std::vector<Process> processes_;
  std::map<std::string, size_t> index_;
  size_t last_process_ = SIZE_MAX;  // the process of the last line (lines come in runs of one process)
  std::map<std::string, std::string> split_parent_;
  std::map<std::string, int64_t> split_color_;
  std::map<std::string, size_t> comm_index_;
  std::vector<Token> tokens_;  // the current line's, reused
  std::string shape_key_;      // the current collective line less its opCount
  Trace trace_;
  int world_ = 0;
};

}  // namespace

Trace read_nccl_logs(const std::vector<std::string>& files, bool full_history, unsigned threads) {
  if (files.empty()) throw TraceInputError("", 0, 0, 0, "no NCCL log given");
  // One reader per file, on one worker per core; then merged in file order (the first error in file order
  // is the one reported, as when they were read one after another).
  std::vector<LogReader> parts(files.size());
  for_each_file(files.size(), threads, [&](size_t i) {
    read_ahead(files, i);  // file_io.h: parsing overlaps the disk
    parts[i].read(files[i], read_trace_file(files[i]));
  });
  LogReader reader(full_history);
  for (auto& part : parts) {
    if (reader.absorb(std::move(part))) continue;
    // A process's lines span files: read them all again, in order, into one reader.
    parts.clear();
    LogReader whole(full_history);
    for (const auto& f : files) whole.read(f, read_trace_file(f));
    return whole.finish();
  }
  parts.clear();
  return reader.finish();
}

Trace read_nccl_log_buffer(const std::string& name, const std::string& text, bool full_history) {
  LogReader reader(full_history);
  reader.read(name, text);
  return reader.finish();
}

}  // namespace collmc::traces
