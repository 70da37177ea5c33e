// Flat views of recorder lines (recorder_lines.h): the fast way with simdjson On-Demand, the slow way from
// parse_line's nlohmann object, and typed access with the reader's errors.
#include "recorder_lines.h"

#include <simdjson.h>

#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace collmc::traces {
namespace {

namespace od = simdjson::ondemand;

constexpr uint64_t kFormatVersion = 1;  // as parse_line checks it

struct FastFallback {};  // thrown inside the fast way: parse_line reads this line

template <typename T>
T take(simdjson::simdjson_result<T> r) {
  T v;
  if (std::move(r).get(v) != simdjson::SUCCESS) throw FastFallback{};
  return v;
}

// `hint`: where the recorder writes the key (its members come in a fixed order), looked at first.
const FlatValue* find_in(const std::vector<FlatField>& fields, size_t first, std::string_view key,
                         size_t hint = SIZE_MAX) {
  if (hint != SIZE_MAX && first + hint < fields.size() && fields[first + hint].key == key)
    return &fields[first + hint].value;
  for (size_t i = first; i < fields.size(); ++i)
    if (fields[i].key == key) return &fields[i].value;
  return nullptr;
}

// parse_line's checks of the event's fields, on the fast view: true where parse_line would accept the
// line (and read the same values: the view holds what nlohmann would hold).
bool accepted_as_parse_line(const std::vector<FlatField>& fields, size_t first) {
  auto str = [&](std::string_view key, size_t hint) -> const FlatValue* {
    const FlatValue* v = find_in(fields, first, key, hint);
    return v != nullptr && v->type == FlatValue::Type::String ? v : nullptr;
  };
  auto integer = [&](std::string_view key, size_t hint, bool unsigned_only) {
    const FlatValue* v = find_in(fields, first, key, hint);
    return v != nullptr && v->type == FlatValue::Type::Integer && (!unsigned_only || v->is_unsigned);
  };
  const FlatValue* ev = str("ev", 0);
  if (ev == nullptr) return false;
  if (ev->text == "process") {
    const FlatValue* format = str("format", 1);
    if (format == nullptr || (format->text != "collmc-recorder" && format->text != "collmc-mpi-recorder")) return false;
    if (!integer("version", 2, true) || find_in(fields, first, "version", 2)->bits != kFormatVersion) return false;
    return integer("pid", 3, false) && str("host", 5) != nullptr;
  }
  if (ev->text == "enter" || ev->text == "return")
    return integer("seq", 1, true) && integer("tid", 2, false) && str("call", 5) != nullptr &&
           (ev->text == "enter" || integer("result", 6, false));
  return false;
}

// The characters of a string without escapes whose opening quote is just before `start`.
std::string_view quoted_at(const char* start, const char* end) {
  const void* quote = start < end ? std::memchr(start, '"', static_cast<size_t>(end - start)) : nullptr;
  if (quote == nullptr) throw FastFallback{};
  return std::string_view(start, static_cast<size_t>(static_cast<const char*>(quote) - start));
}

bool printable_ascii_without_backslash(std::string_view s) {
  size_t i = 0;
#if defined(__SSE2__)
  // 16 bytes at a time (byte by byte, this test was half of the fast way's time): a signed compare below
  // 0x20 also catches every byte from 0x80 up.
  const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f), backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= s.size(); i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const __m128i bad =
        _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_or_si128(_mm_cmpeq_epi8(v, del), _mm_cmpeq_epi8(v, backslash)));
    if (_mm_movemask_epi8(bad) != 0) return false;
  }
#endif
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c < 0x20 || c > 0x7e || c == '\\') return false;
  }
  return true;
}

}  // namespace

bool read_line_fast(std::string_view line, size_t capacity, std::vector<FlatField>& out) {
  // Printable ASCII and no backslash: no escapes, so a string's characters are its bytes in the line (the
  // views point there), and nothing where simdjson and nlohmann might differ (control characters, UTF-8).
  if (!printable_ascii_without_backslash(line)) return false;
  if (capacity < line.size() + simdjson::SIMDJSON_PADDING) return false;
  thread_local od::parser parser;
  const size_t first = out.size();
  uint64_t seen = 0;  // signatures of the keys read so far
  const char* const line_end = line.data() + line.size();
  try {
    od::document doc = take(parser.iterate(simdjson::padded_string_view(line.data(), line.size(), capacity)));
    for (auto f : take(doc.get_object())) {
      od::field fld = take(std::move(f));
      // No escapes: a key's characters are the bytes up to the next quote (unescaping them into
      // simdjson's buffer, as unescaped_key() does, was a tenth of the time).
      const std::string_view key = quoted_at(fld.key().raw(), line_end);
      // A key twice: nlohmann decides which is kept. The keys so far are compared only when a cheap
      // signature of this one (its length and last byte) was seen on the line.
      const uint64_t sig = uint64_t{1} << ((key.size() * 7 + (key.empty() ? 0 : static_cast<size_t>(key.back()))) & 63);
      if ((seen & sig) != 0 && find_in(out, first, key) != nullptr) throw FastFallback{};
      seen |= sig;
      od::value val = fld.value();
      FlatValue v;
      switch (take(val.type())) {
        case od::json_type::number: {
          const std::string_view token = val.raw_json_token();
          // "-0" is nlohmann's signed 0 and maybe simdjson's double: parse_line decides.
          if (token.starts_with("-0")) throw FastFallback{};
          od::number n = take(val.get_number());
          v.type = FlatValue::Type::Integer;
          if (n.get_number_type() == od::number_type::signed_integer) {
            v.bits = static_cast<uint64_t>(n.get_int64());
            v.is_unsigned = token.front() != '-';
          } else if (n.get_number_type() == od::number_type::unsigned_integer) {
            v.bits = n.get_uint64();
            v.is_unsigned = true;
          } else {
            throw FastFallback{};  // a float: nlohmann's number_float
          }
          break;
        }
        case od::json_type::string: {
          const std::string_view token = val.raw_json_token();  // the quoted string (and spaces after it)
          if (token.empty() || token.front() != '"') throw FastFallback{};
          v.type = FlatValue::Type::String;
          v.text = quoted_at(token.data() + 1, line_end);
          break;
        }
        default:
          throw FastFallback{};  // objects and arrays (parse_line refuses them), true, false, null
      }
      out.push_back(FlatField{key, v});
    }
    // Nothing after the object (On-Demand answers OUT_OF_BOUNDS only at the end of the input).
    if (const char* rest = nullptr; doc.current_location().get(rest) != simdjson::OUT_OF_BOUNDS) throw FastFallback{};
    if (!accepted_as_parse_line(out, first)) throw FastFallback{};
    return true;
  } catch (const FastFallback&) {
    out.resize(first);
    return false;
  }
}

void FlatLines::add(const std::string& file, int number, std::string_view text, size_t capacity, bool slow_only) {
  const size_t first = fields_.size();
  if (!slow_only && read_line_fast(text, capacity, fields_)) {
    lines_.push_back(Line{number, static_cast<uint32_t>(first), static_cast<uint32_t>(fields_.size() - first)});
    return;
  }
  add_parsed(parse_recorder_line(file, number, std::string(text)));
}

void FlatLines::clear() {
  constexpr size_t kKeptFields = size_t{1} << 20;  // 48 MiB
  if (fields_.capacity() > kKeptFields) {
    fields_ = {};
    lines_ = {};
  }
  fields_.clear();
  lines_.clear();
  parsed_.clear();
  other_texts_.clear();
}

void FlatLines::add_parsed(RecorderLine&& line) {
  const nlohmann::ordered_json& j = parsed_.emplace_back(std::move(line.event));
  const size_t first = fields_.size();
  for (auto it = j.begin(); it != j.end(); ++it) {
    FlatValue v;
    const auto& value = it.value();
    if (value.is_number_integer()) {
      v.type = FlatValue::Type::Integer;
      v.is_unsigned = value.is_number_unsigned();
      v.bits = v.is_unsigned ? value.get<uint64_t>() : static_cast<uint64_t>(value.get<int64_t>());
    } else if (value.is_string()) {
      v.type = FlatValue::Type::String;
      v.text = value.get_ref<const std::string&>();
    } else {
      v.text = other_texts_.emplace_back(value.dump());
    }
    fields_.push_back(FlatField{it.key(), v});
  }
  lines_.push_back(Line{line.line, static_cast<uint32_t>(first), static_cast<uint32_t>(fields_.size() - first)});
}

FastLineRead compare_fast_line(const std::string& file, int number, const std::string& line) {
  std::string padded;
  padded.reserve(line.size() + simdjson::SIMDJSON_PADDING);
  padded = line;
  std::vector<FlatField> fast;
  if (!read_line_fast(padded, padded.capacity(), fast)) return FastLineRead::Fallback;
  FlatLines slow;
  try {
    slow.add_parsed(parse_recorder_line(file, number, line));
  } catch (const TraceInputError&) {
    return FastLineRead::Different;  // the fast way took a line parse_line refuses
  }
  const FlatLine s = slow[0];
  if (s.count != fast.size()) return FastLineRead::Different;
  for (uint32_t i = 0; i < s.count; ++i) {
    const FlatField &a = fast[i], &b = s.fields[i];
    if (a.key != b.key || a.value.type != b.value.type || a.value.is_unsigned != b.value.is_unsigned ||
        a.value.bits != b.value.bits || a.value.text != b.value.text)
      return FastLineRead::Different;
  }
  return FastLineRead::Same;
}

std::optional<uint64_t> parse_hex_view(std::string_view text) {
  if (text.size() < 3 || text.size() > 18 || text[0] != '0' || text[1] != 'x') return std::nullopt;
  uint64_t v = 0;
  for (size_t i = 2; i < text.size(); ++i) {
    const char c = text[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = (v << 4) | static_cast<uint64_t>(d);
  }
  return v;
}

void FlatFields::fail(const std::string& message) const { throw TraceInputError(file_, line_.number, 1, 0, message); }

int64_t FlatFields::integer(const char* key) const {
  const FlatValue* v = find(key);
  if (v == nullptr || v->type != FlatValue::Type::Integer) {
    const FlatValue* call = find("call");
    fail(std::string("expected \"") + key + "\" (an integer)" +
         (call != nullptr && call->type == FlatValue::Type::String ? " in this " + std::string(call->text) + " event"
                                                                   : ""));
  }
  return v->integer();
}

std::string_view FlatFields::string(const char* key) const {
  const FlatValue* v = find(key);
  if (v == nullptr || v->type != FlatValue::Type::String) fail(std::string("expected \"") + key + "\" (a string)");
  return v->text;
}

uint64_t FlatFields::hex(const char* key) const {
  auto v = parse_hex_view(string(key));
  if (!v) fail(std::string("expected \"") + key + "\" to be a lowercase hex string \"0x...\"");
  return *v;
}

}  // namespace collmc::traces
