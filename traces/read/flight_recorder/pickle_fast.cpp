// The fast way through a Flight Recorder pickle as torch's C++ Pickler writes it (dump.h).
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "collmc/traces/pickle.h"
#include "dump.h"
#include "file_io.h"

namespace collmc::traces::flight_recorder {

namespace {

// The fast way through a pickle as torch's C++ Pickler writes it (protocol 2; only strings memoised; each
// container EMPTY_DICT/EMPTY_LIST, MARK, its items, SETITEMS/APPENDS, filled once). The opcodes run on a
// stack of small values that point into the file's bytes, and each entry dict is read into a Slim the
// moment it closes, its values dropped at once: no tree is built (decode_pickle's arena, its JSON tree and
// read_slim's lookups were the whole of the import's time). Anything else (Python's pickles, which memoise
// containers; a GLOBAL; a field of an unusual type; a limit of PickleLimits) falls back to decode_pickle
// and the tree reader, so both read the same pickles alike (fuzz_flight_recorder checks that).
class FastPickle {
 public:
  FastPickle(const std::string& file, std::string_view in, ConfigCache& cache, ParsedDump& d)
      : file_(file), in_(in), cache_(cache), d_(d) {}

  void run() {
    while (true) {
      if (pos_ >= in_.size()) throw FastFallback{};
      op_pos_ = pos_;
      const auto op = static_cast<uint8_t>(in_[pos_++]);
      switch (op) {
        case 0x80:  // PROTO
          if (le(1) > 5) throw FastFallback{};
          break;
        case 0x95:  // FRAME: a length prefix only
          if (le(8) > in_.size() - pos_) throw FastFallback{};
          break;
        case '.':  // STOP
          if (!marks_.empty() || stack_.size() != 1 || !root_done_) throw FastFallback{};
          return;
        case '(':
          if (marks_.size() >= kMaxMarks) throw FastFallback{};
          marks_.push_back(stack_.size());
          break;
        case '}':
          open_dict();
          break;
        case ']':
          open_list();
          break;
        case ')':
          push(container(PK::Tuple, 0, 0, 1));
          break;
        case 0x85:
        case 0x86:
        case 0x87:
          tuple(op - 0x84u);
          break;
        case 'u':
          close(PK::Dict);
          break;
        case 'e':
          close(PK::List);
          break;
        case 'K':
          push(integer(static_cast<int64_t>(le(1))));
          break;
        case 'M':
          push(integer(static_cast<int64_t>(le(2))));
          break;
        case 'J':
          push(integer(static_cast<int32_t>(static_cast<uint32_t>(le(4)))));
          break;
        case 0x8a:
          long1();
          break;
        case 'N':
          push(PV{});
          break;
        case 0x88:
        case 0x89: {
          PV v;
          v.kind = PK::Bool;
          v.b = op == 0x88;
          push(v);
          break;
        }
        case 'G': {  // BINFLOAT, big-endian
          uint64_t raw = 0;
          for (int k = 0; k < 8; ++k) raw = (raw << 8) | le(1);
          PV v;
          v.kind = PK::Float;
          std::memcpy(&v.f, &raw, sizeof v.f);
          push(v);
          break;
        }
        case 'X':
        case 0x8c:
        case 0x8d: {  // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
          const uint64_t n = le(op == 'X' ? 4 : op == 0x8c ? 1 : 8);
          if (n > PickleLimits{}.max_string || n > in_.size() - pos_) throw FastFallback{};
          PV v;
          v.kind = PK::Str;
          v.s = in_.substr(pos_, static_cast<size_t>(n));
          pos_ += static_cast<size_t>(n);
          if (!valid_utf8(v.s)) throw FastFallback{};
          push(v);
          break;
        }
        case 'q':
          memo_put(le(1));
          break;
        case 'r':
          memo_put(le(4));
          break;
        case 0x94:
          memo_put(memo_.size());
          break;
        case 'h':
          memo_get(le(1));
          break;
        case 'j':
          memo_get(le(4));
          break;
        default:  // GLOBAL, REDUCE, the text opcodes, APPEND, SETITEM, ...: the decoder's (and its errors)
          throw FastFallback{};
      }
    }
  }

 private:
  enum class PK : uint8_t { None, Bool, Int, Uint, Float, Str, List, Tuple, Dict, Done };
  enum class Role : uint8_t { None, Root, Entries, Entry };
  struct PV {
    PK kind = PK::None;
    Role role = Role::None;
    bool filled = false;
    bool b = false;
    uint16_t depth = 0;            // containers: nesting, as decode_pickle limits it
    uint32_t first = 0, size = 0;  // containers: items in pool_ (a dict's keys and values alternate)
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    std::string_view s;
    size_t start = 0;    // the byte offset of the opcode that made it
    size_t pool_at = 0;  // an entry dict: pool_'s size when it was made (what it adds is dropped after)
  };
  static constexpr size_t kMaxMarks = 64;

  uint64_t le(size_t n) {
    if (n > in_.size() - pos_) throw FastFallback{};
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(static_cast<unsigned char>(in_[pos_ + k])) << (8 * k);
    pos_ += n;
    return v;
  }

  void push(const PV& v) {
    if (++nodes_ > PickleLimits{}.max_nodes) throw FastFallback{};
    stack_.push_back(v);
    stack_.back().start = op_pos_;
  }
  static PV integer(int64_t i) {
    PV v;
    v.kind = PK::Int;
    v.i = i;
    return v;
  }
  PV container(PK kind, uint32_t first, uint32_t size, uint16_t depth) const {
    PV v;
    v.kind = kind;
    v.first = first;
    v.size = size;
    v.depth = depth;
    v.filled = size > 0;
    if (depth > PickleLimits{}.max_depth) throw FastFallback{};
    return v;
  }
  // The items after the innermost mark (none may be an unfinished container's).
  size_t items_from() const { return marks_.empty() ? 0 : marks_.back(); }

  void long1() {  // LONG1: torch writes 8 bytes, two's complement
    const uint64_t n = le(1);
    if (n == 0 || n > 8) throw FastFallback{};
    uint64_t raw = le(n);
    if (n < 8 && (raw >> (8 * n - 1)) & 1) raw |= ~0ull << (8 * n);  // sign-extend
    push(integer(static_cast<int64_t>(raw)));
  }

  void open_dict() {
    PV v = container(PK::Dict, 0, 0, 1);
    if (stack_.empty()) {
      v.role = Role::Root;
    } else if (!marks_.empty() && marks_.back() > 0 && stack_[marks_.back() - 1].role == Role::Entries) {
      v.role = Role::Entry;
      v.pool_at = pool_.size();
    }
    push(v);
  }

  void open_list() {
    PV v = container(PK::List, 0, 0, 1);
    // The root's value of "entries": the root open with its mark, an odd number of items after it.
    if (marks_.size() == 1 && marks_[0] == 1 && stack_[0].role == Role::Root && (stack_.size() - 1) % 2 == 1 &&
        stack_.back().kind == PK::Str && stack_.back().s == "entries")
      v.role = Role::Entries;
    push(v);
  }

  void tuple(size_t n) {
    if (stack_.size() < items_from() + n) throw FastFallback{};
    move_items(stack_.size() - n, PK::Tuple);
  }

  // Moves stack_[from..] into pool_ as a new container of `kind` on the stack.
  void move_items(size_t from, PK kind) {
    uint16_t depth = 0;
    for (size_t k = from; k < stack_.size(); ++k) {
      if (is_container(stack_[k]) && stack_[k].role != Role::None) throw FastFallback{};
      depth = std::max(depth, stack_[k].depth);
    }
    const auto first = static_cast<uint32_t>(pool_.size());
    pool_.insert(pool_.end(), stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
    const auto size = static_cast<uint32_t>(stack_.size() - from);
    stack_.resize(from);
    PV v = container(kind, first, size, static_cast<uint16_t>(depth + 1));
    v.filled = true;
    push(v);
  }

  static bool is_container(const PV& v) {
    return v.kind == PK::List || v.kind == PK::Tuple || v.kind == PK::Dict || v.kind == PK::Done;
  }

  // SETITEMS / APPENDS: the items after the mark go into the container just below it.
  void close(PK kind) {
    if (marks_.empty()) throw FastFallback{};
    const size_t m = marks_.back();
    marks_.pop_back();
    if (m == 0) throw FastFallback{};
    PV& c = stack_[m - 1];
    if (c.kind != kind || c.filled) throw FastFallback{};  // filled twice: the decoder's
    const size_t n = stack_.size() - m;
    if (kind == PK::Dict && n % 2) throw FastFallback{};
    if (c.role != Role::Root && c.role != Role::Entries)  // the roles are only where run() gave them
      for (size_t k = m; k < stack_.size(); ++k)
        if (is_container(stack_[k]) && stack_[k].role != Role::None) throw FastFallback{};
    if (c.role == Role::Entry) {
      entry(m);
      pool_.resize(c.pool_at);
      c.kind = PK::Done;
      stack_.resize(m);
      return;
    }
    if (c.role == Role::Entries) {
      for (size_t k = m; k < stack_.size(); ++k)
        if (stack_[k].kind != PK::Done) throw FastFallback{};
      c.filled = true;
      c.size = static_cast<uint32_t>(n);
      stack_.resize(m);
      return;
    }
    if (c.role == Role::Root) {
      root(m);
      root_done_ = true;
      c.filled = true;
      stack_.resize(m);
      return;
    }
    uint16_t depth = 0;
    for (size_t k = m; k < stack_.size(); ++k) depth = std::max(depth, stack_[k].depth);
    if (depth + 1 > PickleLimits{}.max_depth) throw FastFallback{};
    c.first = static_cast<uint32_t>(pool_.size());
    c.size = static_cast<uint32_t>(n);
    c.depth = static_cast<uint16_t>(depth + 1);
    c.filled = true;
    pool_.insert(pool_.end(), stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
  }

  void memo_put(uint64_t index) {
    if (stack_.empty() || stack_.size() <= items_from() || index >= (1u << 24)) throw FastFallback{};
    if (index >= memo_.size()) memo_.resize(index + 1);
    memo_[index] = stack_.back();
    // Set; a container (torch memoises the whole dump's dict at its end) is never fetched here.
    memo_[index].start = is_container(stack_.back()) ? 2 : 1;
  }
  void memo_get(uint64_t index) {
    if (index >= memo_.size() || memo_[index].start != 1) throw FastFallback{};
    push(memo_[index]);
  }

  const PV& item(const PV& c, size_t k) const { return pool_[c.first + k]; }
  bool is_array(const PV& v) const { return v.kind == PK::List || v.kind == PK::Tuple; }

  // want_int: an int that fits int64_t, or a str of one.
  static int64_t want_int(const PV& v) {
    if (v.kind == PK::Int) return v.i;
    if (v.kind == PK::Str)
      if (auto n = integer_text(std::string(v.s))) return *n;
    throw FastFallback{};
  }

  void entry(size_t m) {
    FastFields f;
    uint32_t seen = 0;
    for (size_t k = m; k < stack_.size(); k += 2) {
      const PV& key = stack_[k];
      const PV& val = stack_[k + 1];
      if (key.kind != PK::Str) throw FastFallback{};
      const std::string_view name = key.s;
      int bit = -1;
      if (name == "record_id") {
        bit = 0;
        f.out.record_id = want_int(val);
        f.has_record = true;
      } else if (name == "profiling_name") {
        bit = 1;
        if (val.kind != PK::Str) throw FastFallback{};
        f.out.name = names_(d_.profiling, val.s);
        f.has_name = true;
      } else if (name == "process_group") {
        bit = 2;
        if (!is_array(val) || val.size != 2 || item(val, 0).kind != PK::Str || item(val, 1).kind != PK::Str)
          throw FastFallback{};
        f.out.pg = pgs_(d_.pg_names, item(val, 0).s);
        f.has_pg = true;
      } else if (name == "collective_seq_id") {
        bit = 3;
        if (val.kind != PK::None) f.collective_seq = want_int(val);
      } else if (name == "seq_id") {
        bit = 4;
        if (val.kind != PK::None) f.seq = want_int(val);
      } else if (name == "p2p_seq_id") {
        bit = 5;
        if (val.kind != PK::None) f.p2p_seq = want_int(val);
      } else if (name == "time_created_ns") {
        bit = 6;
        // read_slim keeps an unsigned JSON number only: decode_pickle makes one of an int past INT64_MAX.
        if (val.kind == PK::Uint) f.out.time_ns = val.u;
      } else if (name == "state") {
        bit = 7;
        if (val.kind == PK::Str) {
          if (val.s == "completed") {
            f.out.state = CallState::Completed;
          } else if (val.s == "started") {
            f.out.state = CallState::Started;
          } else if (val.s == "scheduled") {
            f.out.state = CallState::Scheduled;
          } else {
            throw FastFallback{};
          }
        } else if (val.kind != PK::None) {
          throw FastFallback{};
        }
      } else if (name == "input_sizes") {
        bit = 8;
        if (val.kind == PK::None) continue;
        if (!is_array(val)) throw FastFallback{};
        for (size_t t = 0; t < val.size; ++t) {
          const PV& tensor = item(val, t);
          if (!is_array(tensor)) throw FastFallback{};
          uint64_t n = 1;
          for (size_t k2 = 0; k2 < tensor.size; ++k2) {
            if (item(tensor, k2).kind != PK::Int) throw FastFallback{};
            mul_dim(n, item(tensor, k2).i);
          }
          add_tensor(f, n);
        }
        f.sizes_set = true;
      } else if (name == "input_dtypes") {
        bit = 9;
        if (is_array(val) && val.size > 0 && item(val, 0).kind == PK::Str)
          f.out.dtype = dtype_index(std::string(item(val, 0).s));
      }
      if (bit >= 0) {
        if (seen & (1u << bit)) throw FastFallback{};  // a key twice: the decoder keeps the last
        seen |= 1u << bit;
      }
    }
    d_.add(finish_fast(file_, f, d_, ops_));
  }

  // decode_pickle's JSON of a value (the small top-level fields, and a pg_config seen first).
  json to_json(const PV& v) const {
    switch (v.kind) {
      case PK::None:
        return nullptr;
      case PK::Bool:
        return v.b;
      case PK::Int:
        return v.i;
      case PK::Uint:
        return v.u;
      case PK::Float:
        return std::isfinite(v.f) ? json(v.f) : json(nullptr);
      case PK::Str:
        return std::string(v.s);
      case PK::List:
      case PK::Tuple: {
        json a = json::array();
        for (size_t k = 0; k < v.size; ++k) a.push_back(to_json(item(v, k)));
        return a;
      }
      case PK::Dict: {
        json o = json::object();
        for (size_t k = 0; k < v.size; k += 2) {
          if (item(v, k).kind != PK::Str) throw FastFallback{};
          o[std::string(item(v, k).s)] = to_json(item(v, k + 1));
        }
        return o;
      }
      case PK::Done:
        break;
    }
    throw FastFallback{};
  }

  void root(size_t m) {
    json top = json::object();
    std::optional<std::string_view> pg_config_key;
    const PV* pg_config = nullptr;
    for (size_t k = m; k < stack_.size(); k += 2) {
      const PV& key = stack_[k];
      const PV& val = stack_[k + 1];
      if (key.kind != PK::Str) throw FastFallback{};
      std::string name(key.s);
      if (top.contains(name)) throw FastFallback{};  // a key twice: the decoder keeps the last
      if (name == "entries") {
        if (val.role != Role::Entries || !val.filled) throw FastFallback{};
        d_.has_entries_list = true;
        top[name] = nullptr;
      } else if (name == "pg_config") {
        if (val.kind == PK::Dict && val.filled) {
          // Its value follows from the bytes up to its end (the memo it reads is made there too): the key
          // under which its process groups are interned, parsed once for all dumps that share it.
          const size_t end = k + 2 < stack_.size() ? stack_[k + 2].start : op_pos_;
          pg_config_key = in_.substr(0, end);
          pg_config = &val;
        } else if (val.kind != PK::None) {
          throw FastFallback{};
        }
        top[name] = nullptr;
      } else if (name == "version" || name == "rank" || name == "pg_status") {
        top[name] = to_json(val);
      } else {
        top[name] = nullptr;
      }
    }
    d_.configs = cache_.intern_text(file_, pg_config_key, [&] { return to_json(*pg_config); });
    std::tie(d_.major, d_.minor) = parse_version(file_, top);
    top.erase("entries");
    d_.by_fields = rank_from_fields(file_, top, *d_.configs, d_);
    d_.by_name = rank_from_file_name(file_);
    read_pg_status(file_, top, d_);
  }

  const std::string& file_;
  std::string_view in_;
  ConfigCache& cache_;
  ParsedDump& d_;
  size_t pos_ = 0, op_pos_ = 0;
  uint64_t nodes_ = 0;
  bool root_done_ = false;
  std::vector<PV> stack_, pool_, memo_;
  std::vector<size_t> marks_;
  FastIntern names_, pgs_;
  std::vector<OpInfo> ops_;
};

}  // namespace

bool parse_pickle_fast(const std::string& file, const std::string& bytes, ConfigCache& cache, ParsedDump& d) {
  try {
    FastPickle(file, bytes, cache, d).run();
    return true;
  } catch (...) {  // FastFallback, or an error the tree reader will report as it always has
    return false;
  }
}

}  // namespace collmc::traces::flight_recorder
