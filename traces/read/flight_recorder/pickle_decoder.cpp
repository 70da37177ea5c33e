// The data-only pickle decoder (pickle.h). Values live in an arena and refer to each other by index,
// so the memo can share a container the way pickle does (a list is memoised empty, then filled) and a
// hostile self-reference cannot leak or loop: the conversion to JSON is bounded by depth and node count.
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collmc/traces/pickle.h"
#include "collmc/traces/trace.h"

namespace collmc::traces {
namespace {

enum class Kind : uint8_t { None, Bool, Int, Uint, Float, Str, List, Tuple, Dict, Identity };

struct Value {
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  uint64_t u = 0;
  double f = 0;
  std::string s;                                  // Str (UTF-8); Identity: the wrapper's name
  std::vector<uint32_t> items;                    // List, Tuple
  std::vector<std::pair<uint32_t, uint32_t>> kv;  // Dict
};

// One opcode's name, for errors.
const char* opcode_name(uint8_t op) {
  switch (op) {
    case 'c':
      return "GLOBAL";
    case 0x93:
      return "STACK_GLOBAL";
    case 'R':
      return "REDUCE";
    case 'b':
      return "BUILD";
    case 'i':
      return "INST";
    case 'o':
      return "OBJ";
    case 0x81:
      return "NEWOBJ";
    case 0x92:
      return "NEWOBJ_EX";
    case 'P':
      return "PERSID";
    case 'Q':
      return "BINPERSID";
    case 0x82:
      return "EXT1";
    case 0x83:
      return "EXT2";
    case 0x84:
      return "EXT4";
    case 0x97:
      return "NEXT_BUFFER";
    case 0x98:
      return "READONLY_BUFFER";
    case 'I':
      return "INT (text)";
    case 'L':
      return "LONG (text)";
    case 'F':
      return "FLOAT (text)";
    case 'S':
      return "STRING (text)";
    case 'V':
      return "UNICODE (text)";
    case 'p':
      return "PUT (text)";
    case 'g':
      return "GET (text)";
    default:
      return nullptr;
  }
}

// The torch.jit._pickle wrappers that return their (first) argument unchanged.
bool is_identity_wrapper(const std::string& module, const std::string& name) {
  if (module != "torch.jit._pickle") return false;
  return name == "restore_type_tag" || name == "build_intlist" || name == "build_doublelist" ||
         name == "build_boollist";
}

}  // namespace

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    if (c < 0x80) {
      n = 0;
    } else if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
    } else {
      return false;
    }
    if (n > s.size() - i - 1) return false;
    for (size_t k = 1; k <= n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    auto c1 = n > 0 ? static_cast<unsigned char>(s[i + 1]) : 0;
    if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
      return false;
    i += n + 1;
  }
  return true;
}

namespace {

std::string latin1_to_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      out += static_cast<char>(0xc0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3f));
    }
  }
  return out;
}

class Decoder {
 public:
  Decoder(const std::string& name, std::string_view bytes, const PickleLimits& limits)
      : name_(name), in_(bytes), limits_(limits) {}

  nlohmann::json run() {
    uint32_t result = decode();
    uint64_t nodes = 0;
    return to_json(result, 0, nodes);
  }

 private:
  [[noreturn]] void fail(uint64_t offset, const std::string& message) const {
    throw TraceInputError(name_, 0, 0, offset, "pickle: " + message);
  }

  void need(size_t n) const {
    if (pos_ + n > in_.size() || pos_ + n < pos_)
      fail(pos_, "truncated: expected " + std::to_string(n) + " more byte(s), the file ends");
  }

  uint64_t read_le(size_t n) {
    need(n);
    uint64_t v = 0;
    for (size_t k = 0; k < n; ++k) v |= static_cast<uint64_t>(static_cast<unsigned char>(in_[pos_ + k])) << (8 * k);
    pos_ += n;
    return v;
  }

  std::string_view read_bytes(uint64_t n) {
    if (n > limits_.max_string) fail(pos_, "a string of " + std::to_string(n) + " bytes is over the limit");
    need(static_cast<size_t>(n));
    std::string_view v = in_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return v;
  }

  // A text line (GLOBAL's module and name), without the newline.
  std::string read_line() {
    size_t end = in_.find('\n', pos_);
    if (end == std::string_view::npos) fail(pos_, "truncated: expected a newline-terminated name");
    std::string line(in_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return line;
  }

  uint32_t add(Value v) {
    if (arena_.size() >= limits_.max_nodes) fail(op_pos_, "too many values");
    arena_.push_back(std::move(v));
    return static_cast<uint32_t>(arena_.size() - 1);
  }
  uint32_t add_int(int64_t i) {
    Value v;
    v.kind = Kind::Int;
    v.i = i;
    return add(std::move(v));
  }
  uint32_t add_str(std::string s) {
    Value v;
    v.kind = Kind::Str;
    v.s = std::move(s);
    return add(std::move(v));
  }
  uint32_t add_container(Kind k) {
    Value v;
    v.kind = k;
    return add(std::move(v));
  }

  void push(uint32_t v) { stack_.push_back(v); }
  uint32_t pop() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      fail(op_pos_, std::string("opcode ") + op_label() + " needs a value on the stack, found none");
    uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  uint32_t top() {
    if (stack_.empty() || (!marks_.empty() && stack_.size() <= marks_.back()))
      fail(op_pos_, std::string("opcode ") + op_label() + " needs a value on the stack, found none");
    return stack_.back();
  }
  // The values pushed since the last MARK, removing them and the mark.
  std::vector<uint32_t> pop_mark() {
    if (marks_.empty()) fail(op_pos_, std::string("opcode ") + op_label() + " needs a MARK, found none");
    size_t m = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(m), stack_.end());
    stack_.resize(m);
    return items;
  }
  Value& container(uint32_t id, Kind want, const char* what) {
    Value& v = arena_[id];
    if (v.kind != want) fail(op_pos_, std::string("opcode ") + op_label() + " expects " + what + " below its items");
    return v;
  }

  std::string op_label() const {
    const char* n = opcode_name(op_);
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", op_);
    return n ? std::string(n) + " (" + buf + ")" : std::string(buf);
  }

  void memo_put(uint64_t index) {
    if (index > 0xffffffffull) fail(op_pos_, "memo index " + std::to_string(index) + " is out of range");
    memo_[static_cast<uint32_t>(index)] = top();
  }
  void memo_get(uint64_t index) {
    auto it = memo_.find(static_cast<uint32_t>(index));
    if (index > 0xffffffffull || it == memo_.end())
      fail(op_pos_, "memo index " + std::to_string(index) + " was never stored");
    push(it->second);
  }

  uint32_t make_tuple(std::vector<uint32_t> items) {
    Value v;
    v.kind = Kind::Tuple;
    v.items = std::move(items);
    return add(std::move(v));
  }

  uint32_t decode_long(uint64_t n) {
    std::string_view b = read_bytes(n);
    if (n == 0) return add_int(0);
    bool negative = (static_cast<unsigned char>(b[n - 1]) & 0x80) != 0;
    // Strip sign-extension bytes beyond 8.
    size_t used = static_cast<size_t>(n);
    while (used > 8) {
      auto last = static_cast<unsigned char>(b[used - 1]);
      if ((negative && last == 0xff) || (!negative && last == 0x00)) {
        --used;
      } else {
        break;
      }
    }
    if (used > 8 && !(used == 9 && !negative && static_cast<unsigned char>(b[8]) == 0))
      fail(op_pos_, "an integer of " + std::to_string(n) + " bytes does not fit in 64 bits");
    uint64_t raw = 0;
    for (size_t k = 0; k < std::min<size_t>(used, 8); ++k)
      raw |= static_cast<uint64_t>(static_cast<unsigned char>(b[k])) << (8 * k);
    if (negative && used < 8) raw |= ~0ull << (8 * used);
    if (!negative && used >= 8 && (raw >> 63) != 0) {
      Value v;
      v.kind = Kind::Uint;
      v.u = raw;
      return add(std::move(v));
    }
    return add_int(static_cast<int64_t>(raw));
  }

  uint32_t decode() {
    while (true) {
      op_pos_ = pos_;
      need(1);
      op_ = static_cast<uint8_t>(in_[pos_++]);
      switch (op_) {
        case 0x80: {  // PROTO
          uint64_t proto = read_le(1);
          if (proto > 5) fail(op_pos_, "protocol " + std::to_string(proto) + " is newer than 5");
          break;
        }
        case 0x95: {  // FRAME: a length prefix only
          uint64_t len = read_le(8);
          if (len > in_.size() - pos_) fail(op_pos_, "FRAME of " + std::to_string(len) + " bytes runs past the end");
          break;
        }
        case '.': {  // STOP
          if (!marks_.empty()) fail(op_pos_, "STOP with an unclosed MARK");
          if (stack_.size() != 1)
            fail(op_pos_, "STOP expects exactly one value on the stack, found " + std::to_string(stack_.size()));
          return stack_.back();
        }
        case '(':
          marks_.push_back(stack_.size());
          break;
        case '0':
          pop();
          break;
        case '1':
          pop_mark();
          break;
        case '2':
          push(top());
          break;
        case 'N':
          push(add(Value{}));
          break;
        case 0x88:
        case 0x89: {
          Value v;
          v.kind = Kind::Bool;
          v.b = op_ == 0x88;
          push(add(std::move(v)));
          break;
        }
        case 'J':
          push(add_int(static_cast<int32_t>(static_cast<uint32_t>(read_le(4)))));
          break;
        case 'K':
          push(add_int(static_cast<int64_t>(read_le(1))));
          break;
        case 'M':
          push(add_int(static_cast<int64_t>(read_le(2))));
          break;
        case 0x8a:
          push(decode_long(read_le(1)));
          break;
        case 0x8b: {
          uint64_t n = read_le(4);
          if (n & 0x80000000ull) fail(op_pos_, "LONG4 with a negative length");
          push(decode_long(n));
          break;
        }
        case 'G': {  // BINFLOAT, big-endian
          need(8);
          uint64_t raw = 0;
          for (size_t k = 0; k < 8; ++k) raw = (raw << 8) | static_cast<unsigned char>(in_[pos_ + k]);
          pos_ += 8;
          Value v;
          v.kind = Kind::Float;
          std::memcpy(&v.f, &raw, sizeof v.f);
          push(add(std::move(v)));
          break;
        }
        case 'X':
        case 0x8c:
        case 0x8d: {  // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
          uint64_t n = read_le(op_ == 'X' ? 4 : op_ == 0x8c ? 1 : 8);
          std::string_view s = read_bytes(n);
          if (!valid_utf8(s)) fail(op_pos_, "a str that is not valid UTF-8");
          push(add_str(std::string(s)));
          break;
        }
        case 'T':
        case 'U':
        case 'B':
        case 'C':
        case 0x8e:
        case 0x96: {  // BINSTRING, SHORT_BINSTRING, BINBYTES, SHORT_BINBYTES, BINBYTES8, BYTEARRAY8
          size_t width = (op_ == 'U' || op_ == 'C') ? 1 : (op_ == 'T' || op_ == 'B') ? 4 : 8;
          uint64_t n = read_le(width);
          if (op_ == 'T' && (n & 0x80000000ull)) fail(op_pos_, "BINSTRING with a negative length");
          push(add_str(latin1_to_utf8(read_bytes(n))));
          break;
        }
        case ']':
          push(add_container(Kind::List));
          break;
        case ')':
          push(make_tuple({}));
          break;
        case '}':
          push(add_container(Kind::Dict));
          break;
        case 0x8f:  // EMPTY_SET: a list here
          push(add_container(Kind::List));
          break;
        case 'l': {
          auto items = pop_mark();
          uint32_t id = add_container(Kind::List);
          arena_[id].items = std::move(items);
          push(id);
          break;
        }
        case 't':
        case 0x91:  // TUPLE, FROZENSET
          push(make_tuple(pop_mark()));
          break;
        case 0x85: {
          uint32_t a = pop();
          push(make_tuple({a}));
          break;
        }
        case 0x86: {
          uint32_t b = pop(), a = pop();
          push(make_tuple({a, b}));
          break;
        }
        case 0x87: {
          uint32_t c = pop(), b = pop(), a = pop();
          push(make_tuple({a, b, c}));
          break;
        }
        case 'd': {
          auto items = pop_mark();
          if (items.size() % 2) fail(op_pos_, "DICT with an odd number of items");
          uint32_t id = add_container(Kind::Dict);
          for (size_t k = 0; k < items.size(); k += 2) arena_[id].kv.emplace_back(items[k], items[k + 1]);
          push(id);
          break;
        }
        case 'a': {
          uint32_t v = pop();
          container(top(), Kind::List, "a list").items.push_back(v);
          break;
        }
        case 'e':
        case 0x90: {  // APPENDS, ADDITEMS
          auto items = pop_mark();
          Value& list = container(top(), Kind::List, "a list or set");
          list.items.insert(list.items.end(), items.begin(), items.end());
          break;
        }
        case 's': {
          uint32_t v = pop(), k = pop();
          container(top(), Kind::Dict, "a dict").kv.emplace_back(k, v);
          break;
        }
        case 'u': {
          auto items = pop_mark();
          if (items.size() % 2) fail(op_pos_, "SETITEMS with an odd number of items");
          Value& dict = container(top(), Kind::Dict, "a dict");
          for (size_t k = 0; k < items.size(); k += 2) dict.kv.emplace_back(items[k], items[k + 1]);
          break;
        }
        case 'q':
          memo_put(read_le(1));
          break;
        case 'r':
          memo_put(read_le(4));
          break;
        case 0x94:
          memo_put(memo_.size());
          break;
        case 'h':
          memo_get(read_le(1));
          break;
        case 'j':
          memo_get(read_le(4));
          break;
        case 'c': {  // GLOBAL: only the identity wrappers
          std::string module = read_line();
          std::string name = read_line();
          global(module, name);
          break;
        }
        case 0x93: {  // STACK_GLOBAL: only the identity wrappers
          uint32_t n = pop(), m = pop();
          if (arena_[n].kind != Kind::Str || arena_[m].kind != Kind::Str)
            fail(op_pos_, "opcode STACK_GLOBAL (0x93) expects two strings");
          global(arena_[m].s, arena_[n].s);
          break;
        }
        case 'R': {  // REDUCE: only of an identity wrapper
          uint32_t args = pop(), callable = pop();
          if (arena_[callable].kind != Kind::Identity)
            fail(op_pos_, "opcode REDUCE (0x52) calls something; a trace file may not run code");
          const Value& a = arena_[args];
          if (a.kind != Kind::Tuple || a.items.empty())
            fail(op_pos_, "REDUCE of " + arena_[callable].s + " expects a non-empty argument tuple");
          push(a.items[0]);
          break;
        }
        default: {
          const char* n = opcode_name(op_);
          char buf[8];
          std::snprintf(buf, sizeof buf, "0x%02x", op_);
          if (n)
            fail(op_pos_, std::string("opcode ") + n + " (" + buf + ") is not allowed: the decoder reads data only");
          fail(op_pos_, std::string("unknown opcode ") + buf);
        }
      }
    }
  }

  void global(const std::string& module, const std::string& name) {
    if (!is_identity_wrapper(module, name))
      fail(op_pos_, "opcode " + op_label() + " names " + module + "." + name +
                        ": a trace file may not import anything (only data is decoded)");
    Value v;
    v.kind = Kind::Identity;
    v.s = module + "." + name;
    push(add(std::move(v)));
  }

  std::string key_text(uint32_t id) const {
    const Value& v = arena_[id];
    switch (v.kind) {
      case Kind::Str:
        return v.s;
      case Kind::Int:
        return std::to_string(v.i);
      case Kind::Uint:
        return std::to_string(v.u);
      case Kind::Bool:
        return v.b ? "True" : "False";
      case Kind::None:
        return "None";
      case Kind::Float: {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", v.f);
        return buf;
      }
      default:
        fail(in_.size(), "a dict key that is not a string, number, boolean or None");
    }
  }

  nlohmann::json to_json(uint32_t id, int depth, uint64_t& nodes) const {
    if (depth > limits_.max_depth)
      fail(in_.size(),
           "nesting deeper than " + std::to_string(limits_.max_depth) + " (or a container that holds itself)");
    if (++nodes > limits_.max_nodes) fail(in_.size(), "the decoded value has too many parts");
    const Value& v = arena_[id];
    switch (v.kind) {
      case Kind::None:
        return nullptr;
      case Kind::Bool:
        return v.b;
      case Kind::Int:
        return v.i;
      case Kind::Uint:
        return v.u;
      case Kind::Float:
        return std::isfinite(v.f) ? nlohmann::json(v.f) : nlohmann::json(nullptr);
      case Kind::Str:
        return v.s;
      case Kind::List:
      case Kind::Tuple: {
        nlohmann::json a = nlohmann::json::array();
        for (uint32_t item : v.items) a.push_back(to_json(item, depth + 1, nodes));
        return a;
      }
      case Kind::Dict: {
        nlohmann::json o = nlohmann::json::object();
        for (const auto& [k, val] : v.kv) o[key_text(k)] = to_json(val, depth + 1, nodes);
        return o;
      }
      case Kind::Identity:
        fail(in_.size(), "the result holds " + v.s + " itself, not data");
    }
    return nullptr;
  }

  std::string name_;
  std::string_view in_;
  PickleLimits limits_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  uint8_t op_ = 0;
  std::vector<Value> arena_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, uint32_t> memo_;
};

}  // namespace

nlohmann::json decode_pickle(const std::string& name, std::string_view bytes, const PickleLimits& limits) {
  if (bytes.empty()) throw TraceInputError(name, 0, 0, 0, "pickle: the file is empty");
  return Decoder(name, bytes, limits).run();
}

}  // namespace collmc::traces
