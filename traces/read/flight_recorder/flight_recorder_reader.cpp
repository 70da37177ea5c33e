// PyTorch Flight Recorder dumps (one per rank, pickle or JSON, versions 2.2 to 2.10) into the trace
// model: process groups from `pg_config`, per-rank collectives in `record_id` order with their state.
// Field names follow torch/csrc/distributed/c10d/FlightRecorderDetail.hpp and the analyzer in
// torch/distributed/flight_recorder; docs/TRACES.md has the mapping.
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

#include <simdjson.h>

#include "collmc/model/operations.h"
#include "collmc/traces/pickle.h"
#include "collmc/traces/trace.h"
#include "file_io.h"
#include "rank_list.h"
#include "trim_history.h"

namespace collmc::traces {
namespace {

using nlohmann::json;

constexpr int kOldestMinor = 2, kNewestMinor = 10;
constexpr int kMaxWorld = 1 << 16;

struct PgConfig {
  std::string name, desc;
  std::vector<int> ranks;  // global ranks, in group-rank order
  std::string id;          // its Communicator::id
};

[[noreturn]] void bad(const std::string& file, const std::string& message) {
  throw TraceInputError(file, 0, 0, 0, message);
}

// The line and column of a byte offset, for JSON parse errors.
std::pair<int, int> line_col(const std::string& text, size_t offset) {
  int line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// Called with each element of a JSON dump's top-level `entries` list as soon as it is parsed; the element
// is then discarded, so a JSON dump is never held whole as a tree (a pickle is decoded whole: the decoder
// is data-only and small files' trees are freed as soon as they are read).
using EntrySink = std::function<void(const json& entry)>;

json parse_dump(const std::string& file, const std::string& bytes, const EntrySink& sink = {}) {
  size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) bad(file, "the file is empty: expected a Flight Recorder dump (pickle or JSON)");
  if (static_cast<unsigned char>(bytes[first]) == 0x80 && first == 0) return decode_pickle(file, bytes);
  if (bytes[first] != '{')
    bad(file, "not a Flight Recorder dump: expected a pickle (first byte 0x80) or a JSON object ('{')");
  try {
    if (!sink) return json::parse(bytes);
    // nlohmann's callback parser: depth 1 is the top object's members, depth 2 the elements of its lists.
    std::string top_key;
    bool in_entries = false;
    auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
      using E = json::parse_event_t;
      if (depth == 1) {
        if (event == E::key) {
          top_key = parsed.get<std::string>();
        } else if (event == E::array_start) {
          in_entries = top_key == "entries";
        } else if (event == E::array_end) {
          in_entries = false;
        }
        return true;
      }
      if (depth == 2 && in_entries && (event == E::object_end || event == E::array_end || event == E::value)) {
        sink(parsed);
        return false;  // not kept in the tree
      }
      return true;
    };
    json root = json::parse(bytes, callback);
    if (root.is_object())
      if (auto it = root.find("entries"); it != root.end() && it->is_array() && it->empty()) root.erase(it);
    return root;
  } catch (const json::parse_error& e) {
    auto [line, col] = line_col(bytes, e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    size_t cut = what.find("parse error");
    throw TraceInputError(file, line, col, 0, "JSON: " + (cut == std::string::npos ? what : what.substr(cut)));
  } catch (const json::exception& e) {  // a number too large for a double, ...
    throw TraceInputError(file, 0, 0, 0, std::string("JSON: ") + e.what());
  }
}

// Typed access with the field's path in errors.
const json* field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::string want_string(const std::string& file, const json& obj, const char* key, const std::string& path) {
  const json* v = field(obj, key);
  if (!v || !v->is_string()) bad(file, path + "." + key + ": expected a string");
  return v->get<std::string>();
}

// An integer, or a string of one (test dumps and some torch versions write sequence ids as "12", "-1").
std::optional<int64_t> integer_text(const std::string& s) {
  size_t i = s.size() > 0 && s[0] == '-' ? 1 : 0;
  if (i == s.size() || s.size() - i > 18) return std::nullopt;
  for (size_t k = i; k < s.size(); ++k)
    if (!std::isdigit(static_cast<unsigned char>(s[k]))) return std::nullopt;
  return std::stoll(s);
}

int64_t want_int(const std::string& file, const json& obj, const char* key, const std::string& path) {
  const json* v = field(obj, key);
  if (v && v->is_string()) {
    if (auto n = integer_text(v->get_ref<const std::string&>())) return *n;
    bad(file, path + "." + key + ": expected an integer, got \"" + v->get<std::string>() + "\"");
  }
  if (!v || !v->is_number_integer()) bad(file, path + "." + key + ": expected an integer");
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    bad(file, path + "." + key + ": integer out of range");
  return v->get<int64_t>();
}

std::optional<int64_t> opt_int(const std::string& file, const json& obj, const char* key, const std::string& path) {
  if (!field(obj, key)) return std::nullopt;
  return want_int(file, obj, key, path);
}

// `ranks` is written as a string "[0, 1, 2]" (the dump's format) or, by other tools, as a list.
std::vector<int> parse_ranks(const std::string& file, const json& v, const std::string& path) {
  std::vector<int> ranks;
  auto add = [&](int64_t r) {
    if (r < 0 || r >= kMaxWorld) bad(file, path + ": rank " + std::to_string(r) + " is out of range");
    ranks.push_back(static_cast<int>(r));
  };
  if (v.is_array()) {
    for (const auto& r : v) {
      if (!r.is_number_integer()) bad(file, path + ": expected a list of integers");
      add(r.get<int64_t>());
    }
  } else if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    size_t i = 0;
    auto skip = [&] {
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    };
    skip();
    if (i >= s.size() || s[i] != '[') bad(file, path + ": expected a rank list like \"[0, 1]\", got \"" + s + "\"");
    ++i;
    skip();
    if (i < s.size() && s[i] == ']') {
      ++i;
    } else {
      while (true) {
        skip();
        size_t start = i;
        while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
        if (i == start) bad(file, path + ": expected a rank number in \"" + s + "\"");
        // Read whole, so an error names the number as written (never a truncated prefix of it).
        if (i - start > 9) bad(file, path + ": rank " + s.substr(start, i - start) + " is out of range");
        add(std::stoll(s.substr(start, i - start)));
        skip();
        if (i < s.size() && s[i] == ',') {
          ++i;
          continue;
        }
        if (i < s.size() && s[i] == ']') {
          ++i;
          break;
        }
        bad(file, path + ": expected ',' or ']' in \"" + s + "\"");
      }
    }
    skip();
    if (i != s.size()) bad(file, path + ": unexpected text after the rank list in \"" + s + "\"");
  } else {
    bad(file, path + ": expected a rank list");
  }
  std::set<int> unique(ranks.begin(), ranks.end());
  if (unique.size() != ranks.size()) bad(file, path + ": a rank appears twice");
  return ranks;
}

std::pair<int, int> parse_version(const std::string& file, const json& root) {
  const json* v = field(root, "version");
  if (!v) bad(file, "version: missing (expected a Flight Recorder dump, versions 2.2 to 2.10)");
  std::string text;
  if (v->is_string()) {
    text = v->get<std::string>();
  } else if (v->is_number()) {
    text = v->dump();
  } else {
    bad(file, "version: expected a string like \"2.10\"");
  }
  int major = 0, minor = 0;
  char dot = 0;
  std::istringstream in(text);
  if (!(in >> major >> dot >> minor) || dot != '.' || major != 2)
    bad(file, "version \"" + text + "\": expected 2.x (this reader knows 2.2 to 2.10)");
  return {major, minor};
}

std::string comm_id(const PgConfig& pg) {
  std::string id = "pg:" + pg.name + ":";
  for (size_t i = 0; i < pg.ranks.size(); ++i) id += (i ? "," : "") + std::to_string(pg.ranks[i]);
  return id;
}

std::string comm_label(const PgConfig& pg) {
  return pg.desc.empty() || pg.desc == "undefined" ? "pg " + pg.name : "pg " + pg.name + " (" + pg.desc + ")";
}

// c10::toString(ScalarType) -> the scenario's dtype names; empty when the language has none.
std::string scenario_dtype(const std::string& t) {
  static const std::map<std::string, std::string> names = {
      {"Float", "float32"},
      {"Double", "float64"},
      {"Half", "float16"},
      {"BFloat16", "bfloat16"},
      {"Byte", "uint8"},
      {"Char", "int8"},
      {"Int", "int32"},
      {"Long", "int64"},
      {"UInt32", "uint32"},
      {"UInt64", "uint64"},
      {"Bool", "uint8"},
      {"Float8_e4m3fn", "float8e4m3"},
      {"Float8_e5m2", "float8e5m2"},
  };
  auto it = names.find(t);
  return it == names.end() ? "" : it->second;
}

struct OpInfo {
  CallKind kind = CallKind::Other;
  bool coalesced_marker = false;  // "coalesced": only ever the end of a batch
  // "ALLGATHER_coalesced", "allreduce_coalesced", ...: the end of a batch when entries with its sequence
  // numbers come just before it (then it is dropped, the batch a group), else one collective of its own.
  bool closes_batch = false;
  bool varying_count = false;  // uneven per-rank sizes are legal: leave the count out
  std::optional<int> p2p_group_src, p2p_group_dst;
};

// "nccl:all_reduce", "nccl:send 0->1", "nccl:recv 1<-0", "nccl:coalesced".
OpInfo classify(const std::string& file, const std::string& profiling_name, const std::string& path) {
  OpInfo info;
  std::string name = profiling_name;
  if (size_t colon = name.find(':'); colon != std::string::npos) name = name.substr(colon + 1);
  std::string meta;
  if (size_t sp = name.find(' '); sp != std::string::npos) {
    meta = name.substr(sp + 1);
    name = name.substr(0, sp);
  }
  static const std::map<std::string, CallKind> kinds = {
      {"all_reduce", CallKind::AllReduce},
      {"allreduce", CallKind::AllReduce},
      {"allreduce_coalesced", CallKind::AllReduce},
      {"all_reduce_coalesced", CallKind::AllReduce},
      {"ALLREDUCE_coalesced", CallKind::AllReduce},
      {"broadcast", CallKind::Broadcast},
      {"_broadcast_oop", CallKind::Broadcast},
      {"reduce", CallKind::Reduce},
      {"_reduce_oop", CallKind::Reduce},
      {"all_gather", CallKind::AllGather},
      {"_all_gather_base", CallKind::AllGather},
      {"all_gather_single", CallKind::AllGather},
      {"all_gather_into_tensor", CallKind::AllGather},
      {"all_gather_into_tensor_coalesced", CallKind::AllGather},
      {"ALLGATHER_coalesced", CallKind::AllGather},
      {"all_gather_v", CallKind::AllGather},
      {"reduce_scatter", CallKind::ReduceScatter},
      {"_reduce_scatter_base", CallKind::ReduceScatter},
      {"reduce_scatter_single", CallKind::ReduceScatter},
      {"reduce_scatter_tensor_coalesced", CallKind::ReduceScatter},
      {"REDUCE_SCATTER_coalesced", CallKind::ReduceScatter},
      {"reduce_scatter_v", CallKind::ReduceScatter},
      {"all_to_all", CallKind::AllToAll},
      {"all_to_all_single", CallKind::AllToAll},
      {"all_to_all_v_single", CallKind::AllToAll},
      {"alltoall", CallKind::AllToAll},
      {"alltoall_base", CallKind::AllToAll},
      {"gather", CallKind::AllToAll},
      {"scatter", CallKind::AllToAll},
      {"barrier", CallKind::Barrier},
      {"all_reduce_barrier", CallKind::Barrier},
      {"send", CallKind::Send},
      {"recv", CallKind::Recv},
  };
  if (name == "coalesced") {
    info.coalesced_marker = true;
    return info;
  }
  info.closes_batch = name.ends_with("_coalesced");
  auto it = kinds.find(name);
  if (it == kinds.end()) return info;  // Other: kept as a comment
  info.kind = it->second;
  info.varying_count = info.kind == CallKind::AllToAll || name.ends_with("_v") || name == "gather" || name == "scatter";
  if (info.kind == CallKind::Send || info.kind == CallKind::Recv) {
    // send "S->D", recv "D<-S", in group ranks.
    const char* arrow = info.kind == CallKind::Send ? "->" : "<-";
    size_t a = meta.find(arrow);
    if (a == std::string::npos)
      bad(file, path + ".profiling_name \"" + profiling_name + "\": expected \"" + name + " A" + arrow + "B\"");
    auto number = [&](const std::string& s) -> int {
      if (s.empty() || s.size() > 7 ||
          !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        bad(file, path + ".profiling_name \"" + profiling_name + "\": expected group ranks around " + arrow);
      return std::stoi(s);
    };
    int left = number(meta.substr(0, a)), right = number(meta.substr(a + 2));
    if (info.kind == CallKind::Send) {
      info.p2p_group_src = left;
      info.p2p_group_dst = right;
    } else {
      info.p2p_group_dst = left;
      info.p2p_group_src = right;
    }
  }
  return info;
}

uint64_t numel(const std::string& file, const json& sizes, const std::string& path) {
  if (!sizes.is_array()) bad(file, path + ": expected a list of tensor sizes");
  uint64_t total = 0;
  for (const auto& t : sizes) {
    if (!t.is_array()) bad(file, path + ": expected a list of tensor sizes (lists of integers)");
    uint64_t n = 1;
    for (const auto& d : t) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) bad(file, path + ": a tensor dimension is not a size");
      auto dim = d.get<uint64_t>();
      if (dim != 0 && n > (UINT64_MAX >> 1) / dim) bad(file, path + ": tensor sizes overflow");
      n *= dim;
    }
    if (total > (UINT64_MAX >> 1) - n) bad(file, path + ": tensor sizes overflow");
    total += n;
  }
  return total;
}

// Process groups, shared by every dump that lists them alike: at 16k ranks each dump's pg_config names
// thousands of groups, the same ones; each is parsed once and each dump keeps one pointer to its set.
struct ConfigSet {
  std::map<std::string, const PgConfig*> by_name;
  std::optional<int> common_rank;  // the one rank all its groups share, if there is one
};

// Computed once per set, not once per dump: at 16k ranks a dump's groups hold about 50,000 ranks.
std::optional<int> common_rank_of(const ConfigSet& set) {
  std::optional<std::vector<int>> common;
  for (const auto& [name, pg] : set.by_name) {
    std::vector<int> ranks = pg->ranks;
    std::sort(ranks.begin(), ranks.end());
    if (!common) {
      common = std::move(ranks);
      continue;
    }
    std::vector<int> both;
    std::set_intersection(common->begin(), common->end(), ranks.begin(), ranks.end(), std::back_inserter(both));
    common = std::move(both);
    if (common->empty()) break;
  }
  if (common && common->size() == 1) return common->front();
  return std::nullopt;
}

class ConfigCache {
 public:
  // The dump's pg_config (null: none), interned. Thread-safe.
  const ConfigSet* intern(const std::string& file, const json* cfg) {
    std::vector<const PgConfig*> pgs;
    if (cfg) {
      if (!cfg->is_object()) bad(file, "pg_config: expected a dict of process groups");
      for (const auto& [key, pg] : cfg->items()) {
        std::string path = "pg_config[\"" + key + "\"]";
        if (!pg.is_object()) bad(file, path + ": expected a dict with name, desc, ranks");
        std::string name = field(pg, "name") ? want_string(file, pg, "name", path) : key;
        std::string desc = field(pg, "desc") ? want_string(file, pg, "desc", path) : "";
        const json* ranks = field(pg, "ranks");
        if (!ranks) bad(file, path + ".ranks: missing");
        std::string raw = ranks->is_string() ? ranks->get<std::string>() : ranks->dump();
        std::string key_text = name + '\0' + desc + '\0' + raw;
        {
          std::lock_guard lock(mutex_);
          if (auto it = pgs_.find(key_text); it != pgs_.end()) {
            pgs.push_back(it->second.get());
            continue;
          }
        }
        auto c = std::make_unique<PgConfig>();
        c->name = name;
        c->desc = desc;
        c->ranks = parse_ranks(file, *ranks, path + ".ranks");
        c->id = comm_id(*c);
        std::lock_guard lock(mutex_);
        auto [it, fresh] = pgs_.emplace(std::move(key_text), std::move(c));
        pgs.push_back(it->second.get());
      }
    }
    std::lock_guard lock(mutex_);
    auto [it, fresh] = sets_.try_emplace(pgs);
    if (fresh) {
      it->second = std::make_unique<ConfigSet>();
      for (const PgConfig* pg : pgs) it->second->by_name[pg->name] = pg;
      it->second->common_rank = common_rank_of(*it->second);
    }
    return it->second.get();
  }

  // The same from the pg_config's JSON text (none: null), each distinct text parsed once: at 16k ranks every
  // dump lists the same ~2,000 groups, about 400 KB of JSON, which the fast path then only compares.
  const ConfigSet* intern_raw(const std::string& file, std::optional<std::string_view> raw) {
    return intern_text(file, raw, [&] { return json::parse(*raw); });
  }

  // The same under any text that determines the pg_config (a pickle's bytes up to its end): `make` gives
  // its JSON the first time the text is seen.
  template <typename Make>
  const ConfigSet* intern_text(const std::string& file, std::optional<std::string_view> text, const Make& make) {
    if (!text) return intern(file, nullptr);
    {
      std::lock_guard lock(mutex_);
      if (auto it = raw_sets_.find(*text); it != raw_sets_.end()) return it->second;
    }
    const json cfg = make();
    const ConfigSet* set = intern(file, &cfg);
    std::lock_guard lock(mutex_);
    raw_sets_.emplace(std::string(*text), set);
    return set;
  }

  std::vector<const ConfigSet*> sets() const {
    std::vector<const ConfigSet*> out;
    for (const auto& [key, set] : sets_) out.push_back(set.get());
    return out;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<PgConfig>> pgs_;
  std::map<std::vector<const PgConfig*>, std::unique_ptr<ConfigSet>> sets_;
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, const ConfigSet*, TextHash, std::equal_to<>> raw_sets_;
};

constexpr uint32_t kNoPg = UINT32_MAX;
const std::vector<std::string> kDtypes = {"",     "float32", "float64", "float16", "bfloat16",   "uint8",
                                          "int8", "int32",   "int64",   "uint32",  "float8e4m3", "float8e5m2"};

// One entry as read, before the trace is built (stored as a Packed: see below).
struct Slim {
  int64_t record_id = 0;
  int64_t collective_seq = -1, p2p_seq = -1;
  uint64_t count = 0;
  uint64_t time_ns = 0;
  uint32_t pg = kNoPg;                 // index into the dump's pg names
  uint16_t name = 0;                   // index into the dump's profiling names
  int32_t p2p_src = -1, p2p_dst = -1;  // group ranks of a send/recv
  CallKind kind = CallKind::Other;
  CallState state = CallState::Completed;
  uint8_t dtype = 0;  // index into kDtypes
  bool has_count = false;
  bool coalesced_marker = false, closes_batch = false;
};

// What entries of a dump share: its group, operation, size and type (a job repeats a few hundred of them).
struct Shape {
  uint64_t count = 0;
  uint32_t pg = kNoPg;
  int32_t p2p_src = -1, p2p_dst = -1;
  uint16_t name = 0;
  CallKind kind = CallKind::Other;
  uint8_t dtype = 0;
  bool has_count = false, coalesced_marker = false, closes_batch = false;
  bool operator==(const Shape&) const = default;
};

struct ShapeHash {
  size_t operator()(const Shape& s) const {
    uint64_t h = s.count * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t{s.pg} << 32 | s.name) + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
    h ^= (uint64_t(uint32_t(s.p2p_src)) << 32 | uint32_t(s.p2p_dst)) + (h << 6) + (h >> 2);
    h ^= uint64_t(s.kind) << 24 | uint64_t{s.dtype} << 16 | uint64_t{s.has_count} << 2 |
         uint64_t{s.coalesced_marker} << 1 | uint64_t{s.closes_batch};
    return static_cast<size_t>(h * 0xff51afd7ed558ccdull);
  }
};

// An entry as kept until the trim: 40 bytes, its shape interned per dump (a Slim is 72), so that 16,384
// ranks x 2,000 entries (32.8 M) take 1.3 GB rather than 2.4 before the trim can drop any.
struct Packed {
  int64_t record_id = 0;
  int64_t collective_seq = -1, p2p_seq = -1;
  uint64_t time_ns = 0;
  uint32_t shape = 0;
  CallState state = CallState::Completed;
};
static_assert(sizeof(Packed) <= 40);

// One dump as read (in parallel), its JSON or pickle tree already gone.
struct ParsedDump {
  std::string file;
  int rank = -1;
  std::optional<int> by_fields, by_name;
  int major = 2, minor = 10;
  const ConfigSet* configs = nullptr;
  std::vector<std::string> pg_names;   // by Slim::pg
  std::vector<std::string> profiling;  // by Slim::name
  std::vector<Packed> entries;
  std::vector<Shape> shapes;  // by Packed::shape
  std::unordered_map<Shape, uint32_t, ShapeHash> shape_index;
  std::vector<std::pair<std::string, int64_t>> completed;  // pg_status: pg -> last_completed_collective
  bool has_entries_list = false;

  void add(const Slim& e) {
    Shape sh{e.count, e.pg,    e.p2p_src,   e.p2p_dst,          e.name,
             e.kind,  e.dtype, e.has_count, e.coalesced_marker, e.closes_batch};
    auto [it, fresh] = shape_index.try_emplace(sh, static_cast<uint32_t>(shapes.size()));
    if (fresh) shapes.push_back(sh);
    entries.push_back({e.record_id, e.collective_seq, e.p2p_seq, e.time_ns, it->second, e.state});
  }
};

Slim unpack(const std::vector<Shape>& shapes, const Packed& p) {
  const Shape& sh = shapes[p.shape];
  Slim e;
  e.record_id = p.record_id;
  e.collective_seq = p.collective_seq;
  e.p2p_seq = p.p2p_seq;
  e.time_ns = p.time_ns;
  e.state = p.state;
  e.count = sh.count;
  e.pg = sh.pg;
  e.name = sh.name;
  e.p2p_src = sh.p2p_src;
  e.p2p_dst = sh.p2p_dst;
  e.kind = sh.kind;
  e.dtype = sh.dtype;
  e.has_count = sh.has_count;
  e.coalesced_marker = sh.coalesced_marker;
  e.closes_batch = sh.closes_batch;
  return e;
}

// A dump's rank from its own fields: a top-level `rank`; else the sender of its sends / the receiver
// of its recvs (group rank -> global rank by its pg_config); else the one rank all its process groups
// share. nullopt when the fields do not say.
std::optional<int> rank_from_fields(const std::string& file, const json& root, const ConfigSet& configs,
                                    const ParsedDump& streamed) {
  if (field(root, "rank")) {
    int64_t v = want_int(file, root, "rank", "rank");
    if (v < 0 || v >= kMaxWorld) bad(file, "rank: " + std::to_string(v) + " is out of range");
    return static_cast<int>(v);
  }
  if (const json* entries = field(root, "entries"); entries && entries->is_array()) {
    for (const auto& e : *entries) {
      const json* name = field(e, "profiling_name");
      const json* pg = field(e, "process_group");
      if (!name || !name->is_string() || !pg || !pg->is_array() || pg->empty() || !(*pg)[0].is_string()) continue;
      auto cfg = configs.by_name.find((*pg)[0].get<std::string>());
      if (cfg == configs.by_name.end()) continue;
      OpInfo op;
      try {
        op = classify(file, name->get<std::string>(), "entries");
      } catch (const TraceInputError&) {
        continue;  // read_entry reports it
      }
      std::optional<int> self = op.kind == CallKind::Send   ? op.p2p_group_src
                                : op.kind == CallKind::Recv ? op.p2p_group_dst
                                                            : std::nullopt;
      if (self && *self >= 0 && static_cast<size_t>(*self) < cfg->second->ranks.size())
        return cfg->second->ranks[static_cast<size_t>(*self)];
    }
  }
  // Entries streamed out of a JSON dump, in file order, as above.
  for (const Packed& packed : streamed.entries) {
    const Slim e = unpack(streamed.shapes, packed);
    if (e.p2p_src < 0) continue;
    auto cfg = configs.by_name.find(streamed.pg_names[e.pg]);
    if (cfg == configs.by_name.end()) continue;
    const int self = e.kind == CallKind::Send ? e.p2p_src : e.p2p_dst;
    if (self >= 0 && static_cast<size_t>(self) < cfg->second->ranks.size())
      return cfg->second->ranks[static_cast<size_t>(self)];
  }
  return configs.common_rank;
}

uint16_t intern_small(std::vector<std::string>& table, std::map<std::string, uint16_t>& index, const std::string& s,
                      const std::string& file) {
  auto [it, fresh] = index.emplace(s, static_cast<uint16_t>(table.size()));
  if (fresh) {
    if (table.size() >= UINT16_MAX) bad(file, "more than 65535 distinct profiling names or process groups");
    table.push_back(s);
  }
  return it->second;
}

CallState call_state(const std::string& file, std::string_view state, const std::string& path) {
  if (state == "completed") return CallState::Completed;
  if (state == "started") return CallState::Started;
  if (state == "scheduled") return CallState::Scheduled;
  bad(file, path + ".state \"" + std::string(state) + "\": expected scheduled, started or completed");
}

// c10's dtype name -> index into kDtypes (0: none the scenario language has).
uint8_t dtype_index(const std::string& torch_name) {
  std::string name = scenario_dtype(torch_name);
  auto it = std::find(kDtypes.begin(), kDtypes.end(), name);
  return static_cast<uint8_t>(it == kDtypes.end() ? 0 : it - kDtypes.begin());
}

Slim read_slim(const std::string& file, const json& e, const std::string& path, ParsedDump& d,
               std::map<std::string, uint16_t>& names, std::map<std::string, uint16_t>& pgs) {
  if (!e.is_object()) bad(file, path + ": expected a dict");
  Slim out;
  out.record_id = want_int(file, e, "record_id", path);
  if (out.record_id < 0) bad(file, path + ".record_id: expected a non-negative integer");
  const json* prof = field(e, "profiling_name");
  if (!prof || !prof->is_string()) bad(file, path + ".profiling_name: expected a string");
  const std::string& profiling = prof->get_ref<const std::string&>();
  const json* pg = field(e, "process_group");
  if (!pg || !pg->is_array() || pg->size() != 2 || !(*pg)[0].is_string() || !(*pg)[1].is_string())
    bad(file, path + ".process_group: expected (name, desc)");
  out.pg = intern_small(d.pg_names, pgs, (*pg)[0].get_ref<const std::string&>(), file);
  OpInfo op = classify(file, profiling, path);
  out.name = intern_small(d.profiling, names, profiling, file);
  out.kind = op.kind;
  out.coalesced_marker = op.coalesced_marker;
  out.closes_batch = op.closes_batch;
  out.collective_seq =
      opt_int(file, e, "collective_seq_id", path).value_or(opt_int(file, e, "seq_id", path).value_or(-1));
  out.p2p_seq = opt_int(file, e, "p2p_seq_id", path).value_or(-1);
  if (op.p2p_group_src) {
    out.p2p_src = *op.p2p_group_src;
    out.p2p_dst = *op.p2p_group_dst;
  }
  if (const json* t = field(e, "time_created_ns"); t && t->is_number_unsigned()) out.time_ns = t->get<uint64_t>();
  const json* st = field(e, "state");
  if (st && !st->is_string()) bad(file, path + ".state: expected a string");
  out.state = call_state(file, st ? st->get_ref<const std::string&>() : "completed", path);
  if (const json* sizes = field(e, "input_sizes"); sizes && !op.varying_count) {
    out.count = numel(file, *sizes, path + ".input_sizes");
    out.has_count = true;
  }
  if (const json* dt = field(e, "input_dtypes"); dt && dt->is_array() && !dt->empty() && (*dt)[0].is_string())
    out.dtype = dtype_index((*dt)[0].get_ref<const std::string&>());
  return out;
}

// pg_status: {pg: {last_enqueued_collective, last_started_collective, last_completed_collective}}.
void read_pg_status(const std::string& file, const json& root, ParsedDump& d) {
  if (const json* status = field(root, "pg_status"); status && status->is_object()) {
    for (const auto& [pg, st] : status->items()) {
      if (!st.is_object() || !field(st, "last_completed_collective")) continue;
      try {
        d.completed.emplace_back(pg, want_int(file, st, "last_completed_collective", "pg_status[\"" + pg + "\"]"));
      } catch (const TraceInputError&) {
        continue;  // a status we cannot read is no evidence
      }
    }
  }
}

// The fast way through a JSON dump: simdjson On-Demand over the file's bytes, the fields the reader needs
// read straight into Slim entries, no tree built per entry (nlohmann's tree of each entry was about 60 % of
// the import's time). It takes only what it can read exactly as the tree reader (read_slim) would: at
// anything else (bad JSON, a field of another type than usual, a duplicate key, a value read_slim rejects)
// it gives up and the dump is read again by the tree reader, whose errors name the line and column. Both
// readers thus accept the same dumps and read them alike (fuzz_flight_recorder checks that they agree);
// the fast one is the path of every well-formed dump.
namespace od = simdjson::ondemand;

struct FastFallback {};  // thrown inside the fast path: read this dump with the tree reader

template <typename T>
T take(simdjson::simdjson_result<T> r) {
  T v;
  if (std::move(r).get(v) != simdjson::SUCCESS) throw FastFallback{};
  return v;
}

// Checks a value the reader does not use as nlohmann would parse it (On-Demand skips what is not read
// without looking at it: a bad literal there would pass).
void validate(od::value v) {
  switch (take(v.type())) {
    case od::json_type::object:
      for (auto f : take(v.get_object())) {
        od::field fld = take(std::move(f));
        take(fld.unescaped_key());
        validate(fld.value());
      }
      break;
    case od::json_type::array:
      for (auto e : take(v.get_array())) validate(take(e));
      break;
    case od::json_type::number:
      take(v.get_number());
      break;
    case od::json_type::string:
      take(v.get_string());
      break;
    case od::json_type::boolean:
      take(v.get_bool());
      break;
    case od::json_type::null:
      if (!take(v.is_null())) throw FastFallback{};
      break;
  }
}

// want_int's integers: a JSON integer that fits int64_t, or a string of one.
int64_t fast_int(od::value v) {
  if (take(v.type()) == od::json_type::string) {
    std::string_view s = take(v.get_string());
    if (auto n = integer_text(std::string(s))) return *n;
    throw FastFallback{};
  }
  od::number n = take(v.get_number());
  if (n.get_number_type() != od::number_type::signed_integer) throw FastFallback{};
  return n.get_int64();
}

bool fast_null(od::value& v) { return take(v.type()) == od::json_type::null; }

// Interns names by string_view (every entry names its group and operation: no string is built for them).
struct FastIntern {
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint16_t, Hash, std::equal_to<>> index;
  uint16_t operator()(std::vector<std::string>& table, std::string_view s) {
    if (auto it = index.find(s); it != index.end()) return it->second;
    if (table.size() >= UINT16_MAX) throw FastFallback{};
    index.emplace(std::string(s), static_cast<uint16_t>(table.size()));
    table.emplace_back(s);
    return static_cast<uint16_t>(table.size() - 1);
  }
};

// The raw text of a value, for the few small top-level fields handed to nlohmann whole.
std::string_view raw_of(od::value v) {
  switch (take(v.type())) {
    case od::json_type::object:
      return take(take(v.get_object()).raw_json());
    case od::json_type::array:
      return take(take(v.get_array()).raw_json());
    default:
      return v.raw_json_token();
  }
}

// What a fast path reads of one entry (record_id, names, time, state and dtype already in `out`).
struct FastFields {
  Slim out;
  bool has_record = false, has_name = false, has_pg = false;
  std::optional<int64_t> collective_seq, seq, p2p_seq;
  bool sizes_set = false;
  uint64_t sizes_total = 0;  // numel() of input_sizes
};

// The rest of read_slim: what follows from the operation's name (classified once per distinct name).
Slim finish_fast(const std::string& file, FastFields& f, ParsedDump& d, std::vector<OpInfo>& ops) {
  Slim& out = f.out;
  if (!f.has_record || out.record_id < 0 || !f.has_name || !f.has_pg) throw FastFallback{};
  while (ops.size() < d.profiling.size()) {
    try {
      ops.push_back(classify(file, d.profiling[ops.size()], "entries"));
    } catch (const TraceInputError&) {
      throw FastFallback{};  // the tree reader says where
    }
  }
  const OpInfo& op = ops[out.name];
  out.kind = op.kind;
  out.coalesced_marker = op.coalesced_marker;
  out.closes_batch = op.closes_batch;
  out.collective_seq = f.collective_seq.value_or(f.seq.value_or(-1));
  out.p2p_seq = f.p2p_seq.value_or(-1);
  if (op.p2p_group_src) {
    out.p2p_src = *op.p2p_group_src;
    out.p2p_dst = *op.p2p_group_dst;
  }
  if (f.sizes_set && !op.varying_count) {
    out.count = f.sizes_total;
    out.has_count = true;
  }
  return out;
}

// numel()'s sum, one tensor at a time, with its overflow limits (past them: the tree reader reports it).
void add_tensor(FastFields& f, uint64_t n) {
  if (f.sizes_total > (UINT64_MAX >> 1) - n) throw FastFallback{};
  f.sizes_total += n;
}
void mul_dim(uint64_t& n, int64_t dim) {
  if (dim < 0) throw FastFallback{};
  const auto d = static_cast<uint64_t>(dim);
  if (d != 0 && n > (UINT64_MAX >> 1) / d) throw FastFallback{};
  n *= d;
}

Slim fast_entry(const std::string& file, od::value v, ParsedDump& d, FastIntern& names, FastIntern& pgs,
                std::vector<OpInfo>& ops) {
  FastFields f;
  Slim& out = f.out;
  bool &has_record = f.has_record, &has_name = f.has_name, &has_pg = f.has_pg;
  std::optional<int64_t>&collective_seq = f.collective_seq, &seq = f.seq, &p2p_seq = f.p2p_seq;
  uint32_t seen = 0;  // a key twice: the tree reader decides (nlohmann keeps the last)
  auto once = [&](int bit) {
    if (seen & (1u << bit)) throw FastFallback{};
    seen |= 1u << bit;
  };
  for (auto fr : take(v.get_object())) {
    od::field fld = take(std::move(fr));
    std::string_view key = take(fld.unescaped_key());
    od::value val = fld.value();
    if (key == "record_id") {
      once(0);
      out.record_id = fast_int(val);
      has_record = true;
    } else if (key == "profiling_name") {
      once(1);
      std::string_view name = take(val.get_string());
      out.name = names(d.profiling, name);
      has_name = true;
    } else if (key == "process_group") {
      once(2);
      od::array pair = take(val.get_array());
      int n = 0;
      for (auto e : pair) {
        std::string_view s = take(take(e).get_string());
        if (n++ == 0) out.pg = pgs(d.pg_names, s);
      }
      if (n != 2) throw FastFallback{};
      has_pg = true;
    } else if (key == "collective_seq_id") {
      once(3);
      if (!fast_null(val)) collective_seq = fast_int(val);
    } else if (key == "seq_id") {
      once(4);
      if (!fast_null(val)) seq = fast_int(val);
    } else if (key == "p2p_seq_id") {
      once(5);
      if (!fast_null(val)) p2p_seq = fast_int(val);
    } else if (key == "time_created_ns") {
      once(6);
      // read_slim keeps only a non-negative integer (nlohmann's unsigned).
      if (take(val.type()) == od::json_type::number) {
        od::number n = take(val.get_number());
        if (n.get_number_type() == od::number_type::unsigned_integer) {
          out.time_ns = n.get_uint64();
        } else if (n.get_number_type() == od::number_type::signed_integer && n.get_int64() >= 0) {
          out.time_ns = static_cast<uint64_t>(n.get_int64());
        }
      } else {
        validate(val);
      }
    } else if (key == "state") {
      once(7);
      if (!fast_null(val)) {
        std::string_view st = take(val.get_string());
        if (st == "completed") {
          out.state = CallState::Completed;
        } else if (st == "started") {
          out.state = CallState::Started;
        } else if (st == "scheduled") {
          out.state = CallState::Scheduled;
        } else {
          throw FastFallback{};
        }
      }
    } else if (key == "input_sizes") {
      once(8);
      if (fast_null(val)) continue;
      // numel(): the same sum and the same overflow limits; anything it would reject falls back.
      for (auto t : take(val.get_array())) {
        uint64_t n = 1;
        for (auto dim_r : take(take(t).get_array())) {
          od::number num = take(take(dim_r).get_number());
          if (num.get_number_type() != od::number_type::signed_integer) throw FastFallback{};
          mul_dim(n, num.get_int64());
        }
        add_tensor(f, n);
      }
      f.sizes_set = true;
    } else if (key == "input_dtypes") {
      once(9);
      if (take(val.type()) != od::json_type::array) {
        validate(val);
        continue;
      }
      bool first = true;
      for (auto e : take(val.get_array())) {
        od::value ev = take(e);
        if (first && take(ev.type()) == od::json_type::string) {
          out.dtype = dtype_index(std::string(take(ev.get_string())));
        } else {
          validate(ev);
        }
        first = false;
      }
    } else {
      validate(val);
    }
  }
  return finish_fast(file, f, d, ops);
}

// Reads a JSON dump into `d` the fast way; false: read it with the tree reader instead.
bool parse_json_fast(const std::string& file, const std::string& bytes, ConfigCache& cache, ParsedDump& d) {
  thread_local od::parser parser;
  simdjson::padded_string copy;
  simdjson::padded_string_view view;
  if (bytes.capacity() - bytes.size() >= simdjson::SIMDJSON_PADDING) {
    view = simdjson::padded_string_view(bytes.data(), bytes.size(), bytes.capacity());
  } else {
    copy = simdjson::padded_string(bytes);
    view = copy;
  }
  try {
    od::document doc = take(parser.iterate(view));
    json root = json::object();  // the small top-level fields, for the functions the tree reader uses
    FastIntern names, pgs;
    std::vector<OpInfo> ops;
    std::optional<std::string_view> pg_config;
    for (auto f : take(doc.get_object())) {
      od::field fld = take(std::move(f));
      std::string key(take(fld.unescaped_key()));
      if (root.contains(key) || (key == "pg_config" && pg_config) || (key == "entries" && d.has_entries_list))
        return false;
      od::value val = fld.value();
      if (key == "entries") {
        if (take(val.type()) != od::json_type::array) return false;
        for (auto e : take(val.get_array())) d.add(fast_entry(file, take(e), d, names, pgs, ops));
        d.has_entries_list = true;  // (a repeated "entries" key falls back above)
      } else if (key == "pg_config") {
        if (take(val.type()) != od::json_type::object) return false;
        pg_config = raw_of(val);
      } else if (key == "version" || key == "rank" || key == "pg_status") {
        root[key] = json::parse(raw_of(val));
      } else {
        validate(val);
        root[key] = nullptr;  // only to see a repeated key
      }
    }
    // Nothing after the top-level object (On-Demand answers OUT_OF_BOUNDS only at the end of the input).
    if (const char* rest = nullptr; doc.current_location().get(rest) != simdjson::OUT_OF_BOUNDS) return false;
    d.has_entries_list = !d.entries.empty();
    std::tie(d.major, d.minor) = parse_version(file, root);
    d.configs = cache.intern_raw(file, pg_config);
    d.by_fields = rank_from_fields(file, root, *d.configs, d);
    d.by_name = rank_from_file_name(file);
    read_pg_status(file, root, d);
    return true;
  } catch (...) {  // FastFallback, a TraceInputError or nlohmann's: the tree reader reads it and says why
    return false;
  }
}

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

bool parse_pickle_fast(const std::string& file, const std::string& bytes, ConfigCache& cache, ParsedDump& d) {
  try {
    FastPickle(file, bytes, cache, d).run();
    return true;
  } catch (...) {  // FastFallback, or an error the tree reader will report as it always has
    return false;
  }
}

bool looks_like_json(const std::string& bytes) {
  size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string::npos && bytes[first] == '{';
}

// Reads one dump into its slim form; the tree is freed when this returns. `fast`: a JSON dump goes the
// fast way first (false: the tree reader only, for the fuzz target that compares the two).
ParsedDump parse_one(const std::string& file, const std::string& bytes, ConfigCache& cache, bool fast = true) {
  ParsedDump d;
  d.file = file;
  if (fast && looks_like_json(bytes) && parse_json_fast(file, bytes, cache, d)) return d;
  if (fast && !bytes.empty() && static_cast<unsigned char>(bytes[0]) == 0x80) {
    if (parse_pickle_fast(file, bytes, cache, d)) return d;
    d = ParsedDump{};
    d.file = file;
  }
  d = ParsedDump{};
  d.file = file;
  std::map<std::string, uint16_t> names, pgs;
  size_t streamed = 0;
  json root = parse_dump(file, bytes, [&](const json& e) {
    d.has_entries_list = true;
    d.add(read_slim(file, e, "entries[" + std::to_string(streamed++) + "]", d, names, pgs));
  });
  if (!root.is_object()) bad(file, "expected a dict at the top of the dump");
  std::tie(d.major, d.minor) = parse_version(file, root);
  d.configs = cache.intern(file, field(root, "pg_config"));
  d.by_fields = rank_from_fields(file, root, *d.configs, d);
  d.by_name = rank_from_file_name(file);
  if (const json* entries = field(root, "entries")) {
    if (!entries->is_array()) bad(file, "entries: expected a list");
    d.has_entries_list = true;
    d.entries.reserve(entries->size());
    size_t index = 0;
    for (const auto& e : *entries) d.add(read_slim(file, e, "entries[" + std::to_string(index++) + "]", d, names, pgs));
  }
  read_pg_status(file, root, d);
  return d;
}

// Reads the files on `threads` workers (0: one per core, at most one per file). Errors are those of the
// first file, in the order given, that has one.
std::vector<ParsedDump> parse_all(const std::vector<std::string>& files, const std::vector<const std::string*>& buffers,
                                  unsigned threads, ConfigCache& cache, bool fast = true) {
  std::vector<ParsedDump> out(files.size());
  for_each_file(files.size(), threads, [&](size_t i) {
    if (buffers.empty()) read_ahead(files, i);  // file_io.h: parsing overlaps the disk
    out[i] = buffers.empty() ? parse_one(files[i], read_trace_file(files[i]), cache, fast)
                             : parse_one(files[i], *buffers[i], cache, fast);
  });
  return out;
}

struct Entry {
  int64_t record_id = 0;
  std::string comm;
  int64_t collective_seq = -1, p2p_seq = -1;
  OpInfo op;
  Call call;
};

class Builder {
 public:
  explicit Builder(bool full_history) : full_history_(full_history) {}

  Trace build(std::vector<ParsedDump>& dumps, const ConfigCache& cache) {
    trace_.format = "flight-recorder";
    assign_ranks(dumps);
    read_configs(dumps, cache);
    for (auto& d : dumps) read_entries(d);
    for (const auto& [who, count] : non_member_)
      trace_.findings.push_back("rank " + std::to_string(who.first) + " calls on pg " + who.second + " (" +
                                std::to_string(count) + " entr" + (count == 1 ? "y" : "ies") +
                                ") although its pg_config lists the group without it: a non-member call, or the "
                                "dump is not this rank's");
    report_stuck(dumps);
    align_dropped();
    if (!full_history_) trim();
    finish();
    return std::move(trace_);
  }

 private:
  // Ranks from the dumps' own fields first, then the file names' trailing numbers; never renumbered:
  // two dumps of one rank, or a dump whose rank nothing says (with other dumps beside it), is an error.
  void assign_ranks(std::vector<ParsedDump>& dumps) {
    std::map<int, const ParsedDump*> seen;
    for (auto& d : dumps) {
      if (d.by_fields) {
        d.rank = *d.by_fields;
        if (d.by_name && *d.by_name != *d.by_fields)
          trace_.notes.push_back(d.file + ": its fields say rank " + std::to_string(*d.by_fields) + ", its file name " +
                                 std::to_string(*d.by_name) + "; rank " + std::to_string(*d.by_fields) + " is used");
      } else if (d.by_name) {
        d.rank = *d.by_name;
      } else if (dumps.size() == 1) {
        d.rank = 0;
        trace_.notes.push_back(d.file + ": neither its fields nor its file name say its rank; read as rank 0");
      } else {
        bad(d.file,
            "cannot tell which rank this dump is: it has no `rank` field, its sends, recvs and process groups do not "
            "single one out, and its file name does not end in a rank number (name it like nccl_trace_rank_3)");
      }
      if (seen.count(d.rank))
        bad(d.file, "a second dump for rank " + std::to_string(d.rank) + " (the first is " + seen[d.rank]->file +
                        "): import one dump per rank, e.g. the pickles of one snapshot");
      seen[d.rank] = &d;
    }
  }

  void read_configs(const std::vector<ParsedDump>& dumps, const ConfigCache& cache) {
    for (const auto& d : dumps) {
      if (d.minor < kOldestMinor || d.minor > kNewestMinor)
        note_once("version " + std::to_string(d.major) + "." + std::to_string(d.minor) +
                  " is outside the versions this reader knows (2.2 to 2.10); read as the nearest");
      configs_[d.rank] = d.configs;
      world_ = std::max(world_, d.rank + 1);
    }
    // Communicators in the order the dumps first list them.
    std::set<const ConfigSet*> done;
    for (const auto& d : dumps) {
      const ConfigSet* set = d.configs;
      if (!done.insert(set).second) continue;
      for (const auto& [name, pg] : set->by_name) {
        if (comm_index_.count(pg->id)) continue;
        Communicator c;
        c.id = pg->id;
        c.label = comm_label(*pg);
        c.size = static_cast<int>(pg->ranks.size());
        for (size_t i = 0; i < pg->ranks.size(); ++i) c.members[pg->ranks[i]] = static_cast<int>(i);
        c.origin = CommOrigin::Preexisting;
        comm_index_[pg->id] = trace_.comms.size();
        trace_.comms.push_back(std::move(c));
        for (int r : pg->ranks) world_ = std::max(world_, r + 1);
      }
    }
    (void)cache;
    if (world_ > kMaxWorld) bad(dumps.front().file, "more than " + std::to_string(kMaxWorld) + " ranks");
  }

  const PgConfig* find_config(int rank, const std::string& name) const {
    if (auto it = configs_.find(rank); it != configs_.end())
      if (auto jt = it->second->by_name.find(name); jt != it->second->by_name.end()) return jt->second;
    // Another rank's dump may name the group (this one lost it): use it if this rank is a member.
    std::set<const ConfigSet*> tried;
    for (const auto& [r, cfgs] : configs_) {
      if (!tried.insert(cfgs).second) continue;
      if (auto jt = cfgs->by_name.find(name); jt != cfgs->by_name.end())
        if (std::find(jt->second->ranks.begin(), jt->second->ranks.end(), rank) != jt->second->ranks.end())
          return jt->second;
    }
    return nullptr;
  }

  // One rank's entries: process groups resolved, in record_id order.
  struct RankEntries {
    const ParsedDump* dump = nullptr;
    std::vector<Packed> list;
    std::vector<const PgConfig*> pg;  // by Slim::pg
    // By Slim::pg: its index in trace_.comms, and whether this rank is a member. Per entry, the comm is then
    // looked up by number: its id names every member (12 KB for a dp group of 16k ranks), and comparing ids
    // per entry was a quarter of a 16k-rank import.
    std::vector<uint32_t> comm;
    std::vector<bool> member;
    std::vector<bool> dropped;  // by position in `list`, after trim()
    Slim unpack(const Packed& p) const { return traces::unpack(dump->shapes, p); }
    Slim get(size_t i) const { return unpack(list[i]); }
  };

  void read_entries(ParsedDump& d) {
    RankTrace& rt = trace_.ranks[d.rank];
    rt.rank = d.rank;
    rt.source = d.file;
    RankEntries& re = entries_[d.rank];
    re.dump = &d;
    re.pg.resize(d.pg_names.size());
    re.comm.assign(d.pg_names.size(), UINT32_MAX);
    re.member.assign(d.pg_names.size(), false);
    for (size_t i = 0; i < d.pg_names.size(); ++i) {
      re.pg[i] = find_config(d.rank, d.pg_names[i]);
      if (!re.pg[i]) continue;
      re.comm[i] = static_cast<uint32_t>(comm_index_.at(re.pg[i]->id));
      re.member[i] = std::binary_search(member_sorted(re.pg[i]).begin(), member_sorted(re.pg[i]).end(), d.rank);
    }
    re.list = std::move(d.entries);
    for (size_t i = 0; i < re.list.size(); ++i) {
      const Slim e = re.get(i);
      const PgConfig* cfg = re.pg[e.pg];
      if (!cfg)
        bad(d.file, "entries[" + std::to_string(i) + "].process_group: '" + d.pg_names[e.pg] + "' is not in pg_config");
      if (!re.member[e.pg]) ++non_member_[{d.rank, cfg->name}];
      if (e.p2p_src >= 0) {
        auto n = static_cast<int>(cfg->ranks.size());
        if (e.p2p_src >= n || e.p2p_dst >= n)
          bad(d.file, "entries[" + std::to_string(i) + "].profiling_name \"" + d.profiling[e.name] +
                          "\": a group rank is outside " + comm_label(*cfg));
      }
    }
    std::sort(re.list.begin(), re.list.end(),
              [](const Packed& a, const Packed& b) { return a.record_id < b.record_id; });
    for (size_t i = 1; i < re.list.size(); ++i)
      if (re.list[i].record_id == re.list[i - 1].record_id)
        bad(d.file, "record_id " + std::to_string(re.list[i].record_id) + " appears twice");
    if (!re.list.empty() && re.list.front().record_id > 0) {
      dropped_[d.rank] = re.list.front().record_id;
      rt.notes.push_back("the ring buffer dropped the " + std::to_string(re.list.front().record_id) +
                         " oldest entries (record_id 0.." + std::to_string(re.list.front().record_id - 1) + ")");
    }
    if (re.list.empty()) rt.notes.push_back("the dump holds no entries");
  }

  const std::vector<int>& member_sorted(const PgConfig* cfg) {
    auto [it, fresh] = sorted_members_.try_emplace(cfg);
    if (fresh) {
      it->second = cfg->ranks;
      std::sort(it->second.begin(), it->second.end());
    }
    return it->second;
  }

  const PgConfig& pg_of(const RankEntries& re, const Slim& e) const { return *re.pg[e.pg]; }

  bool is_p2p(const Slim& e) const { return e.kind == CallKind::Send || e.kind == CallKind::Recv; }

  // "record_id 12, nccl:all_reduce #3"
  std::string origin_of(const RankEntries& re, const Slim& e) const {
    std::string o = "record_id " + std::to_string(e.record_id) + ", " + re.dump->profiling[e.name];
    if (e.collective_seq >= 0 && !is_p2p(e)) o += " #" + std::to_string(e.collective_seq);
    return o;
  }

  Entry make_entry(const RankEntries& re, const Slim& s) const {
    const PgConfig& cfg = pg_of(re, s);
    Entry out;
    out.record_id = s.record_id;
    out.comm = cfg.id;
    out.collective_seq = s.collective_seq;
    out.p2p_seq = s.p2p_seq;
    out.op.kind = s.kind;
    out.op.coalesced_marker = s.coalesced_marker;
    out.op.closes_batch = s.closes_batch;
    Call& c = out.call;
    c.kind = s.kind;
    c.state = s.state;
    c.comm = cfg.id;
    c.seq = s.record_id;
    c.buffer = "tensor";
    c.stream = "pg_" + cfg.name;
    c.origin = origin_of(re, s);
    c.detail = re.dump->profiling[s.name];
    c.time_ns = s.time_ns;
    if (s.has_count) c.count = s.count;
    c.dtype = kDtypes[s.dtype];
    if (s.p2p_src >= 0) {
      int peer_group = c.kind == CallKind::Send ? s.p2p_dst : s.p2p_src;
      c.peer = cfg.ranks[static_cast<size_t>(peer_group)];
    }
    return out;
  }

  // Evidence that a rank is stuck or faulted rather than merely behind: far more entries that never
  // completed than the other ranks (the GPU stopped finishing work), and a group status whose last
  // completed collective lags its peers' by more than one.
  void report_stuck(const std::vector<ParsedDump>& dumps) {
    std::map<int, size_t> open;
    std::map<int, std::string> oldest_open;
    for (const auto& [rank, re] : entries_) {
      size_t n = 0;
      for (const Packed& packed : re.list) {
        const Slim e = re.unpack(packed);
        if (e.state == CallState::Completed) continue;
        if (n++ == 0)
          oldest_open[rank] = origin_of(re, e) + " (" + (e.state == CallState::Started ? "started" : "scheduled") + ")";
      }
      open[rank] = n;
    }
    if (open.size() >= 2) {
      std::vector<size_t> counts;
      for (const auto& [rank, n] : open) counts.push_back(n);
      std::sort(counts.begin(), counts.end());
      const size_t median = counts[(counts.size() - 1) / 2];
      // The range over the other ranks, from the sorted counts (leaving one copy of n out).
      for (const auto& [rank, n] : open) {
        if (n < 10 || n < 2 * median + 5) continue;
        size_t lo = counts.front() == n ? counts[1] : counts.front();
        size_t hi = counts.back() == n ? counts[counts.size() - 2] : counts.back();
        trace_.findings.push_back("rank " + std::to_string(rank) + " looks stuck or faulted: " + std::to_string(n) +
                                  " entries never completed, against " +
                                  (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi)) +
                                  " on the other ranks; the oldest is " + oldest_open[rank] +
                                  " (a GPU fault or a kernel that never finished stops every later entry)");
      }
    }
    std::map<std::string, std::map<int, int64_t>> completed;
    for (const auto& d : dumps)
      for (const auto& [pg, seq] : d.completed) completed[pg][d.rank] = seq;
    for (const auto& [pg, by_rank] : completed) {
      if (by_rank.size() < 2) continue;
      int64_t best = INT64_MIN;
      for (const auto& [rank, seq] : by_rank) best = std::max(best, seq);
      for (const auto& [rank, seq] : by_rank)
        if (best - seq >= 2)
          trace_.findings.push_back("rank " + std::to_string(rank) + " lags on pg " + pg + ": its last completed " +
                                    "collective is #" + std::to_string(seq) + ", another rank's #" +
                                    std::to_string(best) + " (" + std::to_string(best - seq) +
                                    " behind, from pg_status): it stopped making progress there");
    }
  }

  // A rank whose ring buffer dropped old entries starts later than its peers: leave out, on every
  // rank, the collectives of each group older than the oldest one every such rank still holds, so
  // the ranks' programs line up again.
  void align_dropped() {
    if (dropped_.empty()) return;
    std::vector<int> dropped_ranks;
    for (const auto& [rank, first] : dropped_) dropped_ranks.push_back(rank);
    std::map<uint32_t, int64_t> cut;  // by comm index
    for (const auto& [rank, first] : dropped_) {
      const RankEntries& re = entries_[rank];
      std::map<uint32_t, int64_t> oldest;
      for (const Packed& packed : re.list) {
        const Slim e = re.unpack(packed);
        if (e.collective_seq < 0 || is_p2p(e)) continue;
        auto [it, fresh] = oldest.emplace(re.comm[e.pg], e.collective_seq);
        if (!fresh) it->second = std::min(it->second, e.collective_seq);
      }
      for (const auto& [comm, seq] : oldest) cut[comm] = std::max(cut[comm], seq);
    }
    std::map<uint32_t, size_t> removed;
    for (auto& [rank, rank_entries] : entries_) {
      auto& re = rank_entries;  // a lambda may not capture a structured binding (clang before C++20's fix)
      auto keep = std::remove_if(re.list.begin(), re.list.end(), [&](const Packed& packed) {
        const Slim e = re.unpack(packed);
        if (e.collective_seq < 0 || is_p2p(e)) return false;
        auto it = cut.find(re.comm[e.pg]);
        if (it == cut.end() || e.collective_seq >= it->second) return false;
        ++removed[it->first];
        return true;
      });
      re.list.erase(keep, re.list.end());
    }
    // The notes in the order of the comms' ids, as they always were.
    std::map<std::string, uint32_t> by_id;
    for (const auto& [comm, seq] : cut) by_id.emplace(trace_.comms[comm].id, comm);
    for (const auto& [id, comm] : by_id)
      if (removed[comm] > 0)
        trace_.notes.push_back("the collectives on " + label_of(id) + " before #" + std::to_string(cut[comm]) +
                               " are left out on every rank (" + std::to_string(removed[comm]) +
                               " entries): the ring buffer of " + rank_phrase(dropped_ranks) + " no longer holds them");
  }

  // Keep what the hang needs (trim_history.h): plans on the entries, before any Call is built.
  void trim() {
    TrimInput in;
    std::vector<RankEntries*> rows;
    std::map<int, uint32_t> row_of;
    for (auto& [rank, re] : entries_) {
      row_of[rank] = static_cast<uint32_t>(rows.size());
      rows.push_back(&re);
      std::vector<TrimItem> items(re.list.size());
      for (size_t i = 0; i < re.list.size(); ++i) {
        const Slim e = re.get(i);
        TrimItem& it = items[i];
        it.kind = static_cast<uint16_t>(e.kind);
        it.completed = e.state == CallState::Completed;
        if (e.coalesced_marker || e.closes_batch) {
          // A batch's entries (those just before it with its sequence numbers) are one launch.
          for (size_t k = i; k-- > 0;) {
            const Slim p = re.get(k);
            if (p.coalesced_marker || p.closes_batch || re.pg[p.pg] != re.pg[e.pg] ||
                p.collective_seq != e.collective_seq || p.p2p_seq != e.p2p_seq)
              break;
            items[k].in_group = true;
          }
          continue;
        }
        auto op = op_kind_of(e.kind);
        if (op && (model::is_collective(*op) || model::op_form(*op) == model::OpForm::Barrier) &&
            e.collective_seq >= 0) {
          it.collective = true;
          it.comm = re.comm[e.pg];
          // Matched by the group's own sequence number, and the size.
          it.shape = static_cast<uint64_t>(e.collective_seq) * 0x9e3779b97f4a7c15ull ^ (e.has_count ? e.count : 0);
        }
      }
      in.ranks.push_back(std::move(items));
    }
    fill_trim_members(trace_.comms, row_of, in);
    TrimPlan plan = plan_trim(in);
    for (size_t r = 0; r < rows.size(); ++r) rows[r]->dropped = std::move(plan.dropped[r]);
    std::vector<std::string> labels;
    for (const auto& c : trace_.comms) labels.push_back(c.label);
    for (size_t c = 0; c < trace_.comms.size(); ++c) trace_.comms[c].dropped_collectives = plan.cut[c];
    std::string line = trim_summary(labels, plan, rows.size());
    if (!line.empty()) trace_.dropped.push_back(line);
  }

  std::string label_of(const std::string& id) const {
    auto it = comm_index_.find(id);
    return it == comm_index_.end() ? id : trace_.comms[it->second].label;
  }

  void finish() {
    trace_.world_size = std::max(world_, 1);
    std::vector<int> missing;
    for (int r = 0; r < trace_.world_size; ++r) {
      RankTrace& rt = trace_.ranks[r];
      rt.rank = r;
      auto found = entries_.find(r);
      if (found == entries_.end()) {
        rt.present = false;
        missing.push_back(r);
        continue;
      }
      RankEntries& re = found->second;
      std::vector<Entry> list;
      for (size_t i = 0; i < re.list.size(); ++i)
        if (re.dropped.empty() || !re.dropped[i]) list.push_back(make_entry(re, re.get(i)));
      std::vector<Packed>().swap(re.list);
      ThreadTrace t;
      t.name = "main";
      for (size_t i = 0; i < list.size(); ++i) {
        const Entry& e = list[i];
        if ((e.op.coalesced_marker || e.op.closes_batch) && wrap_coalesced(list, i, t.calls)) continue;
        if (e.op.coalesced_marker) {
          Call other = e.call;  // a batch end with no batch before it
          other.kind = CallKind::Other;
          t.calls.push_back(other);
          continue;
        }
        t.calls.push_back(e.call);
      }
      rt.threads.push_back(std::move(t));
    }
    if (!missing.empty())
      trace_.notes.push_back((missing.size() == 1 ? "rank " : "ranks ") + rank_list(missing) +
                             (missing.size() == 1 ? " has" : " have") +
                             " no Flight Recorder dump: an empty program here");
  }
  // "nccl:coalesced" closes a coalescing group: the entries just before it on the same group with the
  // same sequence numbers were issued together, as one ncclGroupStart/End.
  // Returns false (and adds nothing) when no entry of the batch comes before the marker.
  static bool wrap_coalesced(const std::vector<Entry>& list, size_t marker, std::vector<Call>& calls) {
    const Entry& m = list[marker];
    size_t n = 0;
    while (n < marker && n < calls.size()) {
      const Entry& prev = list[marker - 1 - n];
      if (prev.op.coalesced_marker || prev.op.closes_batch || prev.comm != m.comm ||
          prev.collective_seq != m.collective_seq || prev.p2p_seq != m.p2p_seq)
        break;
      ++n;
    }
    if (n == 0) return false;
    Call start;
    start.kind = CallKind::GroupStart;
    start.state = calls[calls.size() - n].state;
    start.origin = "coalesced group closed by record_id " + std::to_string(m.record_id);
    calls.insert(calls.end() - static_cast<std::ptrdiff_t>(n), start);
    Call end = start;
    end.kind = CallKind::GroupEnd;
    end.state = m.call.state;
    calls.push_back(end);
    return true;
  }

  void note_once(const std::string& note) {
    if (std::find(trace_.notes.begin(), trace_.notes.end(), note) == trace_.notes.end()) trace_.notes.push_back(note);
  }

  static std::string rank_phrase(const std::vector<int>& ranks) {
    return std::string(ranks.size() == 1 ? "rank " : "ranks ") + rank_list(ranks);
  }

  bool full_history_ = true;
  Trace trace_;
  int world_ = 0;
  std::map<std::pair<int, std::string>, size_t> non_member_;  // (rank, pg name) -> calls
  std::map<int, const ConfigSet*> configs_;
  std::map<std::string, size_t> comm_index_;
  std::map<int, RankEntries> entries_;
  std::map<int, int64_t> dropped_;
  std::map<const PgConfig*, std::vector<int>> sorted_members_;
};

}  // namespace

Trace read_flight_recorder(const std::vector<std::string>& files, bool full_history, unsigned threads) {
  if (files.empty()) throw TraceInputError("", 0, 0, 0, "no Flight Recorder dump given");
  ConfigCache cache;
  std::vector<ParsedDump> dumps = parse_all(files, {}, threads, cache);
  return Builder(full_history).build(dumps, cache);
}

Trace read_flight_recorder_buffer(const std::string& name, const std::string& bytes, bool full_history,
                                  bool tree_reader_only) {
  ConfigCache cache;
  std::vector<ParsedDump> dumps = parse_all({name}, {&bytes}, 1, cache, !tree_reader_only);
  return Builder(full_history).build(dumps, cache);
}

}  // namespace collmc::traces
