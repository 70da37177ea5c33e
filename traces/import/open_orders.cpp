// Open orders (open_orders.h): which stretches of a thread's recorded calls the program does not force,
// and which calls in them are free of each other. A stretch is cut at every call that orders the host
// (a sync, a barrier, a lifecycle call, an allocation, a group, a call on no communicator); inside it,
// two calls are free when an enabled kind says so and no kept order forbids it. The calls that are not
// free of each other are joined (union-find), the joined sets widened to contiguous intervals, and the
// intervals become the children of an `any_order`: every order of them is one the program could take,
// and the recorded order is one of them.
#include "collmc/traces/open_orders.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>

namespace collmc::traces {
namespace {

// At most this many children per any_order: the language's limit (resolve.cpp), the checker enumerates subsets.
constexpr size_t kMaxChildren = 16;

enum class Role { Boundary, Register, Deregister, Data };

Role role_of(const Call& c) {
  if (c.comm.empty()) return Role::Boundary;
  switch (c.kind) {
    case CallKind::WindowRegister:
    case CallKind::LocalRegister:
      return Role::Register;
    case CallKind::WindowDeregister:
    case CallKind::LocalDeregister:
      return Role::Deregister;
    case CallKind::AllReduce:
    case CallKind::AllGather:
    case CallKind::ReduceScatter:
    case CallKind::Broadcast:
    case CallKind::Reduce:
    case CallKind::AllToAll:
    case CallKind::Send:
    case CallKind::Recv:
      return Role::Data;
    default:
      // Syncs, barriers, lifecycle calls, allocations, groups, and anything new: the host waits or the
      // calls after it depend on it.
      return Role::Boundary;
  }
}

bool is_registration(Role r) { return r == Role::Register || r == Role::Deregister; }

// Two data calls that share a buffer (or do not say which) keep their order: one may write what the other reads.
bool share_data(const Call& a, const Call& b) {
  if (a.buffer.empty() || b.buffer.empty()) return true;
  for (const std::string* x : {&a.buffer, &a.recv_buffer})
    for (const std::string* y : {&b.buffer, &b.recv_buffer})
      if (!x->empty() && *x == *y) return true;
  return false;
}

struct UnionFind {
  std::vector<size_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  size_t find(size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(size_t a, size_t b) { parent[find(a)] = find(b); }
};

// "f.jsonl:22" and "f.jsonl:26" -> "f.jsonl:22..26"; other pairs "A .. B".
std::string origin_range(const std::string& first, const std::string& last) {
  if (first == last || last.empty()) return first;
  size_t a = first.rfind(':'), b = last.rfind(':');
  if (a != std::string::npos && a == b && first.compare(0, a, last, 0, b) == 0)
    return first + ".." + last.substr(b + 1);
  return first + " .. " + last;
}

class Opener {
 public:
  Opener(const Trace& trace, const OpenOrdersOptions& options) : trace_(trace), options_(options) {
    names_ = scenario_comm_names(trace);
    resolve_keeps();
  }

  OpenOrdersResult run() {
    OpenOrdersResult result;
    result.trace = trace_;
    for (auto& [r, rt] : result.trace.ranks) {
      for (auto& t : rt.threads) t.open_spans.clear();
      if (!rt.present) continue;
      if (kept_ranks_.count(r)) {
        result.notes.push_back("rank " + std::to_string(r) +
                               ": kept in its recorded order (--keep-order rank=" + std::to_string(r) + ")");
        continue;
      }
      size_t busy_threads = 0;
      for (const auto& t : rt.threads) busy_threads += !t.calls.empty();
      if (busy_threads > 1 && options_.kinds.count(OpenKind::Threads))
        result.already_open.push_back("rank " + std::to_string(r) + ": its " + std::to_string(busy_threads) +
                                      " host threads are already concurrent in the scenario (one thread block each)");
      for (auto& t : rt.threads) open_thread(r, t, result);
    }
    // Say when the comms kind did nothing because the source names no buffers, rather than open nothing
    // silently (issue 24).
    if (unnamed_pairs_ > 0)
      result.notes.push_back(std::to_string(unnamed_pairs_) + " pair" + (unnamed_pairs_ == 1 ? "" : "s") +
                             " of data calls on different comms kept their order: " +
                             (trace_.mpi ? "the MPI recorder names no buffers" : "the trace names no buffer for them") +
                             ", so either may write what the other reads");
    return result;
  }

 private:
  size_t unnamed_pairs_ = 0;  // data-call pairs on different comms kept only for want of buffer names

  std::string comm_name(const std::string& id) const {
    auto it = names_.find(id);
    return it != names_.end() ? it->second : id;
  }

  void resolve_keeps() {
    for (const auto& keep : options_.keep) {
      if (keep.rank) {
        if (!trace_.ranks.count(*keep.rank))
          throw std::invalid_argument("--keep-order " + keep.text + ": the trace has no rank " +
                                      std::to_string(*keep.rank));
        kept_ranks_.insert(*keep.rank);
        continue;
      }
      std::vector<std::string> ids;
      for (const auto& name : keep.comms) ids.push_back(find_comm(keep.text, name));
      if (ids.size() == 1) {
        kept_comms_.insert(ids[0]);
      } else {
        for (size_t i = 0; i < ids.size(); ++i)
          for (size_t j = 0; j < ids.size(); ++j)
            if (ids[i] != ids[j]) kept_pairs_.insert({ids[i], ids[j]});
      }
    }
  }

  std::string find_comm(const std::string& spec, const std::string& name) const {
    for (const auto& c : trace_.comms)
      if (c.id == name || (!c.label.empty() && c.label == name) || comm_name(c.id) == name) return c.id;
    std::string known;
    for (const auto& c : trace_.comms) known += (known.empty() ? "" : ", ") + comm_name(c.id);
    throw std::invalid_argument("--keep-order " + spec + ": no communicator named '" + name +
                                "' (the trace's communicators: " + (known.empty() ? "none" : known) + ")");
  }

  // Which enabled kind frees calls i < j of `calls` (both in one stretch), if any.
  std::optional<OpenKind> frees(const std::vector<Call>& calls, const std::vector<Role>& roles,
                                const std::vector<size_t>& run, size_t i, size_t j) const {
    const Call& a = calls[i];
    const Call& b = calls[j];
    if (a.comm != b.comm && kept_pairs_.count({a.comm, b.comm})) return std::nullopt;
    if (options_.kinds.count(OpenKind::Registrations) && roles[i] == roles[j] && is_registration(roles[i]) &&
        run[i] == run[j]) {
      bool same_target = a.comm == b.comm && (a.buffer.empty() || b.buffer.empty() || a.buffer == b.buffer);
      if (!same_target) return OpenKind::Registrations;
    }
    if (options_.kinds.count(OpenKind::Comms) && a.comm != b.comm &&
        !(roles[i] == Role::Data && roles[j] == Role::Data && share_data(a, b)))
      return OpenKind::Comms;
    return std::nullopt;
  }

  void open_thread(int rank, ThreadTrace& t, OpenOrdersResult& result) {
    const auto& calls = t.calls;
    const size_t n = calls.size();
    std::vector<Role> roles(n, Role::Boundary);
    int depth = 0;
    for (size_t k = 0; k < n; ++k) {
      if (calls[k].kind == CallKind::GroupStart) ++depth;
      bool in_group = depth > 0;
      if (calls[k].kind == CallKind::GroupEnd && depth > 0) --depth;
      roles[k] = in_group || kept_comms_.count(calls[k].comm) ? Role::Boundary : role_of(calls[k]);
    }
    // Registration runs: back-to-back calls of one registration role; each run gets its own number.
    std::vector<size_t> run(n, 0);
    for (size_t k = 0, id = 0; k < n; ++k) {
      if (k == 0 || roles[k] != roles[k - 1]) ++id;
      run[k] = id;
    }
    const bool by_comms = options_.kinds.count(OpenKind::Comms) > 0;
    if (by_comms) {
      // Pairs of data calls on different comms between the same boundaries that only an unnamed buffer keeps.
      for (size_t i = 0; i < n; ++i) {
        if (roles[i] != Role::Data) continue;
        for (size_t j = i + 1; j < n && roles[j] != Role::Boundary; ++j)
          if (roles[j] == Role::Data && calls[i].comm != calls[j].comm &&
              (calls[i].buffer.empty() || calls[j].buffer.empty()))
            ++unnamed_pairs_;
      }
    }
    size_t k = 0;
    while (k < n) {
      if (roles[k] == Role::Boundary) {
        ++k;
        continue;
      }
      // A stretch: with `comms`, everything up to the next boundary; else one registration run.
      size_t end = k + 1;
      while (end < n && roles[end] != Role::Boundary && (by_comms || run[end] == run[k])) ++end;
      open_stretch(rank, t, k, end, roles, run, result);
      k = end;
    }
  }

  // The blocks of [begin, end): calls not free of each other joined, each joined set widened to the
  // interval from its first to its last call, overlapping intervals merged. Offsets from `begin`.
  std::vector<std::pair<size_t, size_t>> blocks_of(const ThreadTrace& t, size_t begin, size_t end,
                                                   const std::vector<Role>& roles,
                                                   const std::vector<size_t>& run) const {
    const size_t len = end - begin;
    UnionFind uf(len);
    for (size_t i = begin; i < end; ++i)
      for (size_t j = i + 1; j < end; ++j)
        if (!frees(t.calls, roles, run, i, j)) uf.join(i - begin, j - begin);
    std::map<size_t, std::pair<size_t, size_t>> range;  // root -> [first, last] of its members
    for (size_t i = 0; i < len; ++i) {
      auto [it, fresh] = range.try_emplace(uf.find(i), i, i);
      if (!fresh) it->second.second = i;
    }
    std::vector<std::pair<size_t, size_t>> intervals;
    for (const auto& [root, r] : range) intervals.push_back(r);
    std::sort(intervals.begin(), intervals.end());
    std::vector<std::pair<size_t, size_t>> blocks;
    for (const auto& iv : intervals) {
      if (!blocks.empty() && iv.first <= blocks.back().second) {
        blocks.back().second = std::max(blocks.back().second, iv.second);
      } else {
        blocks.push_back(iv);
      }
    }
    return blocks;
  }

  // A stretch is opened as a row of spans, left to right, each the longest that splits into 2 to 16
  // blocks: the whole stretch when it can be (one any_order), else shorter pieces (a registration run
  // before the collectives on the same comms, say). Long stretches are cut into windows first, which
  // only keeps more order fixed.
  void open_stretch(int rank, ThreadTrace& t, size_t begin, size_t end, const std::vector<Role>& roles,
                    const std::vector<size_t>& run, OpenOrdersResult& result) {
    constexpr size_t kWindow = 64;
    for (size_t window = begin; window < end; window += kWindow) {
      const size_t window_end = std::min(end, window + kWindow);
      size_t k = window;
      while (k + 1 < window_end) {
        bool opened = false;
        for (size_t e = window_end; e >= k + 2 && !opened; --e) {
          auto blocks = blocks_of(t, k, e, roles, run);
          if (blocks.size() >= 2 && blocks.size() <= kMaxChildren) {
            open_span(rank, t, k, e, blocks, roles, run, result);
            k = e;
            opened = true;
          }
        }
        if (!opened) ++k;
      }
    }
  }

  void open_span(int rank, ThreadTrace& t, size_t begin, size_t end,
                 const std::vector<std::pair<size_t, size_t>>& blocks, const std::vector<Role>& roles,
                 const std::vector<size_t>& run, OpenOrdersResult& result) {
    // The kinds that freed the pairs across blocks.
    std::set<OpenKind> used;
    for (size_t x = 0; x < blocks.size(); ++x)
      for (size_t y = x + 1; y < blocks.size(); ++y)
        for (size_t i = blocks[x].first; i <= blocks[x].second; ++i)
          for (size_t j = blocks[y].first; j <= blocks[y].second; ++j)
            if (auto kind = frees(t.calls, roles, run, begin + i, begin + j)) used.insert(*kind);
    std::string calls_text = describe(t, begin, blocks);
    OpenSpan span;
    span.begin = begin;
    span.end = end;
    for (const auto& [lo, hi] : blocks) {
      std::vector<size_t> block;
      for (size_t i = lo; i <= hi; ++i) block.push_back(begin + i);
      span.blocks.push_back(std::move(block));
    }
    span.why = why(used);
    OpenedOrder opened;
    opened.rank = rank;
    opened.thread = t.name;
    opened.begin = begin;
    opened.end = end;
    opened.kinds = used;
    opened.calls = calls_text;
    opened.why = span.why;
    const std::string& first = t.calls[begin].origin;
    const std::string& last = t.calls[end - 1].origin;
    opened.origin = origin_range(first, last);
    t.open_spans.push_back(std::move(span));
    result.opened.push_back(std::move(opened));
  }

  std::string describe(const ThreadTrace& t, size_t begin, const std::vector<std::pair<size_t, size_t>>& blocks) const {
    std::string text;
    for (const auto& [lo, hi] : blocks) {
      if (!text.empty()) text += " | ";
      for (size_t i = lo; i <= hi; ++i) {
        const Call& c = t.calls[begin + i];
        if (i > lo) text += "; ";
        text += std::string(call_kind_name(c.kind)) + " " + comm_name(c.comm);
      }
    }
    return text;
  }

  static std::string why(const std::set<OpenKind>& kinds) {
    std::string text;
    if (kinds.count(OpenKind::Registrations))
      text =
          "registrations back to back, no call between them (an allocator hook or a loop over a map may issue "
          "them in another order)";
    if (kinds.count(OpenKind::Comms))
      text += std::string(text.empty() ? "" : "; ") +
              "calls on different communicators between the same host syncs, sharing no data";
    return text;
  }

  const Trace& trace_;
  const OpenOrdersOptions& options_;
  std::map<std::string, std::string> names_;
  std::set<int> kept_ranks_;
  std::set<std::string> kept_comms_;
  std::set<std::pair<std::string, std::string>> kept_pairs_;
};

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t");
  size_t b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

std::optional<OpenKind> parse_open_kind(const std::string& name) {
  for (OpenKind k : all_open_kinds())
    if (name == open_kind_name(k)) return k;
  return std::nullopt;
}

const char* open_kind_name(OpenKind kind) {
  switch (kind) {
    case OpenKind::Registrations:
      return "registrations";
    case OpenKind::Comms:
      return "comms";
    case OpenKind::Threads:
      return "threads";
  }
  return "?";
}

std::vector<OpenKind> all_open_kinds() { return {OpenKind::Registrations, OpenKind::Comms, OpenKind::Threads}; }

KeepOrder parse_keep_order(const std::string& text) {
  KeepOrder keep;
  keep.text = text;
  std::string spec = trim(text);
  if (spec.empty()) throw std::invalid_argument("--keep-order needs COMM, COMM1,COMM2,... or rank=R");
  if (spec.rfind("rank=", 0) == 0) {
    std::string digits = spec.substr(5);
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("--keep-order " + text + ": expected rank=R with R a rank number");
    keep.rank = std::stoi(digits);
    return keep;
  }
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t comma = spec.find(',', pos);
    std::string name = trim(spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos));
    if (name.empty())
      throw std::invalid_argument("--keep-order " + text + ": an empty communicator name (expected COMM1,COMM2)");
    keep.comms.push_back(name);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return keep;
}

OpenOrdersResult open_orders(const Trace& trace, const OpenOrdersOptions& options) {
  return Opener(trace, options).run();
}

std::vector<std::string> open_orders_summary(const OpenOrdersResult& result) {
  std::vector<std::string> lines;
  for (const auto& o : result.opened) {
    bool several_threads = false;
    auto it = result.trace.ranks.find(o.rank);
    if (it != result.trace.ranks.end()) several_threads = it->second.threads.size() > 1;
    lines.push_back("opened: rank " + std::to_string(o.rank) + (several_threads ? " thread " + o.thread : "") +
                    ", any order of " + o.calls + (o.origin.empty() ? "" : " (" + o.origin + ")") + ": " + o.why);
  }
  if (result.opened.empty()) lines.push_back("opened: no recorded order (none of the enabled kinds applies)");
  for (const auto& n : result.already_open) lines.push_back("already open: " + n);
  for (const auto& n : result.notes) lines.push_back("not opened: " + n);
  return lines;
}

}  // namespace collmc::traces
