// The recorder's format one JSON object at a time (nlohmann): the line parser with its field checks, which
// the MPI recorder's and the torch shim's readers read whole files with (parse_recorder_file), and which
// reads every line the fast line reader (recorder_lines.h) gives up on; the fields of a parsed line; the
// pairing of entries and returns into processes (split_recorded_processes). recorder_reader.h declares them.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "collmc/traces/recorder_reader.h"
#include "recorder_lines.h"

namespace collmc::traces {
namespace {

using Json = nlohmann::ordered_json;

constexpr uint64_t kFormatVersion = 1;
constexpr const char* kNcclFormat = "collmc-recorder";     // libcollmc_record.so
constexpr const char* kMpiFormat = "collmc-mpi-recorder";  // libcollmc_record_mpi.so
constexpr const char* kTorchFormat = "collmc-torch";       // the torch shim (python/collmc/record), its own reader

// ---------------------------------------------------------------------------------------------------
// Lines

// The column of the first byte that makes `text` more than one flat object ('[' or a nested '{' outside
// strings), or 0. The recorder never writes nesting, and refusing it bounds the parser's work.
int nesting_column(const std::string& text) {
  bool in_string = false, escaped = false;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || (c == '{' && ++depth > 1)) {
      return static_cast<int>(i) + 1;
    } else if (c == '}') {
      --depth;
    }
  }
  return 0;
}

int column_of(const std::string& text, const char* key) {
  size_t at = text.find(std::string("\"") + key + "\"");
  return at == std::string::npos ? 1 : static_cast<int>(at) + 1;
}

// Field checks for one line, with errors that point at the field.
class LineFields {
 public:
  LineFields(const std::string& file, int line, const std::string& text, const Json& j)
      : file_(file), line_(line), text_(text), j_(j) {}

  [[noreturn]] void fail(const char* key, const std::string& message) const {
    throw TraceInputError(file_, line_, key ? column_of(text_, key) : 1, 0, message);
  }
  const Json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  void require_string(const char* key) const {
    const Json* v = find(key);
    if (v == nullptr) fail(nullptr, std::string("expected a \"") + key + "\" member (a string)");
    if (!v->is_string()) fail(key, std::string("expected \"") + key + "\" to be a string");
  }
  void require_integer(const char* key, bool unsigned_only) const {
    const Json* v = find(key);
    if (v == nullptr) fail(nullptr, std::string("expected a \"") + key + "\" member (an integer)");
    if (!v->is_number_integer() || (unsigned_only && !v->is_number_unsigned()))
      fail(key,
           std::string("expected \"") + key + "\" to be " + (unsigned_only ? "a non-negative integer" : "an integer"));
  }

 private:
  const std::string& file_;
  int line_;
  const std::string& text_;
  const Json& j_;
};

RecorderLine parse_line(const std::string& name, int number, const std::string& text) {
  if (int col = nesting_column(text); col > 0)
    throw TraceInputError(name, number, col, 0, "expected one flat JSON object per line (no arrays or nesting)");
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::parse_error& e) {
    int col = static_cast<int>(std::min<size_t>(e.byte == 0 ? 1 : e.byte, text.size() + 1));
    throw TraceInputError(name, number, col, 0, std::string("expected a JSON object: ") + e.what());
  } catch (const Json::exception& e) {  // a number too large for a double, ...
    throw TraceInputError(name, number, 1, 0, std::string("expected a JSON object: ") + e.what());
  }
  if (!j.is_object()) throw TraceInputError(name, number, 1, 0, "expected a JSON object");
  LineFields f(name, number, text, j);
  f.require_string("ev");
  const std::string ev = j["ev"].get<std::string>();
  if (ev == "process") {
    f.require_string("format");
    if (j["format"] != kNcclFormat && j["format"] != kMpiFormat && j["format"] != kTorchFormat)
      f.fail("format", "expected \"format\":\"collmc-recorder\", \"collmc-mpi-recorder\" or \"collmc-torch\"");
    f.require_integer("version", true);
    if (j["version"].get<uint64_t>() != kFormatVersion)
      f.fail("version", "this collmc reads recorder format version " + std::to_string(kFormatVersion));
    f.require_integer("pid", false);
    f.require_string("host");
  } else if (ev == "enter" || ev == "return") {
    f.require_integer("seq", true);
    f.require_integer("tid", false);
    f.require_string("call");
    if (ev == "return") f.require_integer("result", false);
  } else if (ev == "access") {  // the program's loads or stores to memory it gave MPI (docs/TRACES.md)
    f.require_integer("seq", true);
    f.require_integer("tid", false);
    f.require_string("call");
    if (j["call"] != "load" && j["call"] != "store") f.fail("call", "expected \"call\" to be \"load\" or \"store\"");
    f.require_string("addr");
    if (!parse_hex_view(j["addr"].get<std::string>())) f.fail("addr", "expected \"addr\" as a hex string \"0x...\"");
    f.require_integer("bytes", true);
  } else if (ev == "omp") {  // the OpenMP runtime's synchronization of the threads (docs/TRACES.md)
    f.require_integer("seq", true);
    f.require_integer("tid", false);
    f.require_string("call");
  } else {
    f.fail("ev", "expected \"ev\" to be \"process\", \"enter\", \"return\", \"access\" or \"omp\"");
  }
  return RecorderLine{number, std::move(j)};
}

}  // namespace

const nlohmann::ordered_json* recorder_field(const RecorderLine* line, const char* key) {
  if (line == nullptr) return nullptr;
  auto it = line->event.find(key);
  return it == line->event.end() ? nullptr : &*it;
}

std::optional<uint64_t> parse_hex_field(const std::string& text) { return parse_hex_view(text); }

RecorderLine parse_recorder_line(const std::string& file, int number, const std::string& text) {
  return parse_line(file, number, text);
}

void RecorderFields::fail(const std::string& message) const {
  throw TraceInputError(file_.name, line_ != nullptr ? line_->line : 0, 1, 0, message);
}

int64_t RecorderFields::integer(const char* key) const {
  const auto* v = recorder_field(line_, key);
  if (v == nullptr || !v->is_number_integer()) {
    const auto* call = recorder_field(line_, "call");
    fail(std::string("expected \"") + key + "\" (an integer)" +
         (call != nullptr && call->is_string() ? " in this " + call->get<std::string>() + " event" : ""));
  }
  return v->get<int64_t>();
}

std::string RecorderFields::string(const char* key) const {
  const auto* v = recorder_field(line_, key);
  if (v == nullptr || !v->is_string()) fail(std::string("expected \"") + key + "\" (a string)");
  return v->get<std::string>();
}

uint64_t RecorderFields::hex(const char* key) const {
  auto v = parse_hex_field(string(key));
  if (!v) fail(std::string("expected \"") + key + "\" to be a lowercase hex string \"0x...\"");
  return *v;
}

std::vector<RecordedProcess> split_recorded_processes(const std::vector<RecorderFile>& files,
                                                      std::vector<std::string>& notes) {
  std::vector<RecordedProcess> processes;
  for (const auto& f : files) {
    absl::flat_hash_map<uint64_t, uint32_t> open;  // seq -> index in the current process's calls
    for (const auto& l : f.lines) {
      const std::string ev = l.event["ev"].get<std::string>();
      if (ev == "process") {
        processes.push_back(RecordedProcess{&f, &l, {}, {}, {}});
        open.clear();
        continue;
      }
      if (processes.empty() || processes.back().file != &f)
        throw TraceInputError(f.name, l.line, 1, 0, "expected a \"process\" line before the first event");
      RecordedProcess& p = processes.back();
      if (ev == "access") {
        p.accesses.push_back(RecordedAccess{&l, p.calls.size()});
        continue;
      }
      if (ev == "omp") {
        p.omp_events.push_back(RecordedOmpEvent{&l, p.calls.size()});
        continue;
      }
      const uint64_t seq = l.event["seq"].get<uint64_t>();
      if (ev == "enter") {
        if (!open.emplace(seq, static_cast<uint32_t>(p.calls.size())).second)
          throw TraceInputError(f.name, l.line, 1, 0, "event seq " + std::to_string(seq) + " entered twice");
        p.calls.push_back(RecordedCall{&l, nullptr});
      } else {
        auto it = open.find(seq);
        if (it == open.end() || p.calls[it->second].ret != nullptr)
          throw TraceInputError(f.name, l.line, 1, 0,
                                "a return of seq " + std::to_string(seq) + " with no open entry before it");
        if (p.calls[it->second].enter->event["call"] != l.event["call"])
          throw TraceInputError(f.name, l.line, 1, 0,
                                "the return of seq " + std::to_string(seq) + " names another call than its entry");
        p.calls[it->second].ret = &l;
      }
    }
    if (f.truncated_tail)
      notes.push_back(f.name + ": the last line was cut short (the process died while writing it); left out");
  }
  return processes;
}

RecorderFile parse_recorder_file(const std::string& name, const std::string& text) {
  RecorderFile f;
  f.name = name;
  f.truncated_tail = for_each_recorder_line(name, text, text.size(), [&](int number, std::string_view line, size_t) {
    f.lines.push_back(parse_line(name, number, std::string(line)));
  });
  if (f.lines.empty()) throw TraceInputError(name, 0, 0, 0, "the file holds no event: expected a recorder trace");
  if (f.lines.front().event["ev"] != "process")
    throw TraceInputError(name, 1, 1, 0, "expected a \"process\" line first (a collmc recorder trace)");
  return f;
}

std::string write_recorder_file(const RecorderFile& file) {
  std::string out;
  for (const auto& l : file.lines) {
    out += l.event.dump();
    out += '\n';
  }
  return out;
}

}  // namespace collmc::traces
