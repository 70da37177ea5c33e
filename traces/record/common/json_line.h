// A JSON object built into a fixed buffer on the stack: no allocation, no locale, no exceptions, so the
// recorder can format an event on any thread of any program. The output is canonical (no spaces,
// integers in decimal, pointers as "0x..." strings, string escapes as nlohmann::json writes them), which
// is what makes the recorder-trace round trip exact.
#pragma once

#include <cstddef>
#include <cstdint>

namespace collmc::recorder {

class JsonLine {
 public:
  static constexpr size_t kCapacity = 1024;
  // Longer strings are cut (paths, host names): at most this many characters of escaped output, so an
  // event line with its few strings always fits in kCapacity and stays valid JSON.
  static constexpr size_t kMaxString = 240;

  JsonLine() { buf_[len_++] = '{'; }

  JsonLine& str(const char* key, const char* value) {
    begin_key(key);
    put_string(value ? value : "");
    return *this;
  }
  JsonLine& u64(const char* key, uint64_t value) {
    begin_key(key);
    put_u64(value);
    return *this;
  }
  JsonLine& i64(const char* key, int64_t value) {
    begin_key(key);
    if (value < 0) {
      put('-');
      put_u64(static_cast<uint64_t>(-(value + 1)) + 1);
    } else {
      put_u64(static_cast<uint64_t>(value));
    }
    return *this;
  }
  // A pointer as a string "0x7f3a00001000" ("0x0" for null): JSON numbers lose bits above 2^53 in many readers.
  JsonLine& ptr(const char* key, const void* value) { return hex(key, reinterpret_cast<uintptr_t>(value), 0); }
  // An unsigned value as "0x..." with at least `digits` hex digits.
  JsonLine& hex(const char* key, uint64_t value, int digits) {
    begin_key(key);
    put('"');
    put('0');
    put('x');
    put_hex(value, digits);
    put('"');
    return *this;
  }

  // Closes the object and adds the newline; returns the whole line. Idempotent.
  const char* finish(size_t* length) {
    if (!finished_) {
      // Room for "}\n" is always kept back by `put`.
      buf_[len_++] = '}';
      buf_[len_++] = '\n';
      finished_ = true;
    }
    *length = len_;
    return buf_;
  }

 private:
  static constexpr size_t kReserve = 2;  // "}\n"

  void begin_key(const char* key) {
    // The recorder's events have at most three strings and a dozen numbers: they never reach kCapacity.
    if (len_ > 1) put(',');
    put_string(key);
    put(':');
  }
  void put(char c) {
    if (len_ + kReserve < kCapacity) buf_[len_++] = c;
  }
  void put_u64(uint64_t v) {
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) put(digits[--n]);
  }
  void put_hex(uint64_t v, int min_digits) {
    static constexpr char kHex[] = "0123456789abcdef";
    char digits[16];
    int n = 0;
    do {
      digits[n++] = kHex[v & 0xf];
      v >>= 4;
    } while (v != 0);
    while (n < min_digits && n < 16) digits[n++] = '0';
    while (n > 0) put(digits[--n]);
  }
  void put_string(const char* s) {
    put('"');
    const size_t start = len_;
    for (; *s != '\0' && len_ - start < kMaxString; ++s) {
      const unsigned char c = static_cast<unsigned char>(*s);
      switch (c) {
        case '"':
          put('\\');
          put('"');
          break;
        case '\\':
          put('\\');
          put('\\');
          break;
        case '\b':
          put('\\');
          put('b');
          break;
        case '\f':
          put('\\');
          put('f');
          break;
        case '\n':
          put('\\');
          put('n');
          break;
        case '\r':
          put('\\');
          put('r');
          break;
        case '\t':
          put('\\');
          put('t');
          break;
        default:
          if (c < 0x20) {
            put('\\');
            put('u');
            put_hex(c, 4);
          } else if (c < 0x80) {
            put(static_cast<char>(c));
          } else {
            put('?');  // bytes above ASCII: a cut UTF-8 sequence would make the line invalid JSON
          }
      }
    }
    put('"');
  }

  char buf_[kCapacity];
  size_t len_ = 0;
  bool finished_ = false;
};

}  // namespace collmc::recorder
