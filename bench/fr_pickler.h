// Writing a Flight Recorder dump as torch's C++ Pickler does (torch::jit::Pickler, protocol 2): every string
// memoised once and fetched with BINGET after, dicts as EMPTY_DICT MARK ... SETITEMS, the dump's dict
// memoised last, as in the torch-written fixtures of tests/fixtures/traces/gpu. Shared by the hung-job
// generator (gen_hung_job.cpp) and the trim's differential (tests/trace_runs.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace collmc::bench {

class Pickler {
 public:
  explicit Pickler(std::string& out) : out_(out) { out_ += "\x80\x02"; }
  void stop() { out_ += '.'; }
  void str(std::string_view s) {
    if (auto it = memo_.find(std::string(s)); it != memo_.end()) {
      get(it->second);
      return;
    }
    out_ += 'X';
    le(s.size(), 4);
    out_ += s;
    const auto id = static_cast<uint32_t>(memo_.size());
    memo_.emplace(std::string(s), id);
    put(id);
  }
  // Pickler::pushInt: the smallest of BININT1, BININT2, BININT, else LONG1 of 8 bytes.
  void integer(int64_t v) {
    if (v >= 0 && v <= 0xff) {
      out_ += 'K';
      le(static_cast<uint64_t>(v), 1);
    } else if (v >= 0 && v <= 0xffff) {
      out_ += 'M';
      le(static_cast<uint64_t>(v), 2);
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      out_ += 'J';
      le(static_cast<uint32_t>(static_cast<int32_t>(v)), 4);
    } else {
      out_ += "\x8a\x08";
      le(static_cast<uint64_t>(v), 8);
    }
  }
  void boolean(bool b) { out_ += b ? '\x88' : '\x89'; }
  void none() { out_ += 'N'; }
  void dict_start() { out_ += "}("; }  // EMPTY_DICT MARK
  void dict_end() { out_ += 'u'; }     // SETITEMS
  void list_start() { out_ += "]("; }  // EMPTY_LIST MARK
  void list_end() { out_ += 'e'; }     // APPENDS
  void tuple2() { out_ += '\x86'; }
  // torch memoises the dump's dict once it is filled (a BINPUT before STOP).
  void memoise_top() { put(static_cast<uint32_t>(memo_.size() + extra_++)); }

 private:
  void le(uint64_t v, int n) {
    for (int k = 0; k < n; ++k) out_ += static_cast<char>((v >> (8 * k)) & 0xff);
  }
  void put(uint32_t id) {
    if (id < 256) {
      out_ += 'q';
      le(id, 1);
    } else {
      out_ += 'r';
      le(id, 4);
    }
  }
  void get(uint32_t id) {
    if (id < 256) {
      out_ += 'h';
      le(id, 1);
    } else {
      out_ += 'j';
      le(id, 4);
    }
  }
  std::string& out_;
  std::unordered_map<std::string, uint32_t> memo_;
  uint32_t extra_ = 0;  // memo ids taken by other than strings
};

}  // namespace collmc::bench
