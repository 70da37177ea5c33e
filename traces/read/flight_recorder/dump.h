// The Flight Recorder reader's parsed form of one dump, shared by its passes (internal to traces/read):
//   read_dump.cpp   the tree reader (nlohmann, every error with its field path) and the way each dump is read;
//   json_fast.cpp   the fast way through a JSON dump (simdjson On-Demand), falling back to the tree reader;
//   pickle_fast.cpp the fast way through a pickle as torch's C++ Pickler writes it, likewise;
//   build_trace.cpp the builder: parsed dumps -> the common Trace (ranks, groups, order, trim).
#pragma once

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

#include <nlohmann/json.hpp>

#include "collmc/model/operations.h"
#include "collmc/traces/trace.h"

namespace collmc::traces::flight_recorder {

using nlohmann::json;

constexpr int kOldestMinor = 2, kNewestMinor = 10;
constexpr int kMaxWorld = 1 << 16;
struct PgConfig {
  std::string name, desc;
  std::vector<int> ranks;  // global ranks, in group-rank order
  std::string id;          // its Communicator::id
};

[[noreturn]] inline void bad(const std::string& file, const std::string& message) {
  throw TraceInputError(file, 0, 0, 0, message);
}

// Called with each element of a JSON dump's top-level `entries` list as soon as it is parsed; the element
// is then discarded, so a JSON dump is never held whole as a tree (a pickle is decoded whole: the decoder
// is data-only and small files' trees are freed as soon as they are read).
using EntrySink = std::function<void(const json& entry)>;

// The tree reader's pieces (read_dump.cpp).
std::pair<int, int> line_col(const std::string& text, size_t offset);
json parse_dump(const std::string& file, const std::string& bytes, const EntrySink& sink = {});
const json* field(const json& obj, const char* key);
std::string want_string(const std::string& file, const json& obj, const char* key, const std::string& path);
std::optional<int64_t> integer_text(const std::string& s);
int64_t want_int(const std::string& file, const json& obj, const char* key, const std::string& path);
std::optional<int64_t> opt_int(const std::string& file, const json& obj, const char* key, const std::string& path);
std::vector<int> parse_ranks(const std::string& file, const json& v, const std::string& path);
std::pair<int, int> parse_version(const std::string& file, const json& root);
std::string comm_id(const PgConfig& pg);
std::string comm_label(const PgConfig& pg);
std::string scenario_dtype(const std::string& t);

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
OpInfo classify(const std::string& file, const std::string& profiling_name, const std::string& path);
uint64_t numel(const std::string& file, const json& sizes, const std::string& path);

// Process groups, shared by every dump that lists them alike: at 16k ranks each dump's pg_config names
// thousands of groups, the same ones; each is parsed once and each dump keeps one pointer to its set.
struct ConfigSet {
  std::map<std::string, const PgConfig*> by_name;
  std::optional<int> common_rank;  // the one rank all its groups share, if there is one
};

std::optional<int> common_rank_of(const ConfigSet& set);

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
inline const std::vector<std::string> kDtypes = {"",     "float32", "float64", "float16", "bfloat16",   "uint8",
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

Slim unpack(const std::vector<Shape>& shapes, const Packed& p);
// A dump's rank from its own fields: a top-level `rank`; else the sender of its sends / the receiver
// of its recvs (group rank -> global rank by its pg_config); else the one rank all its process groups
// share. nullopt when the fields do not say.
std::optional<int> rank_from_fields(const std::string& file, const json& root, const ConfigSet& configs,
                                    const ParsedDump& streamed);
uint16_t intern_small(std::vector<std::string>& table, std::map<std::string, uint16_t>& index, const std::string& s,
                      const std::string& file);
CallState call_state(const std::string& file, std::string_view state, const std::string& path);
uint8_t dtype_index(const std::string& torch_name);
Slim read_slim(const std::string& file, const json& e, const std::string& path, ParsedDump& d,
               std::map<std::string, uint16_t>& names, std::map<std::string, uint16_t>& pgs);
// pg_status: {pg: {last_enqueued_collective, last_started_collective, last_completed_collective}}.
void read_pg_status(const std::string& file, const json& root, ParsedDump& d);

// What the two fast ways share (read_dump.cpp): they give up on anything they cannot read exactly as the
// tree reader would, and the dump is read again by the tree reader.
struct FastFallback {};  // thrown inside the fast path: read this dump with the tree reader

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

// What a fast path reads of one entry (record_id, names, time, state and dtype already in `out`).
struct FastFields {
  Slim out;
  bool has_record = false, has_name = false, has_pg = false;
  std::optional<int64_t> collective_seq, seq, p2p_seq;
  bool sizes_set = false;
  uint64_t sizes_total = 0;  // numel() of input_sizes
};

// The rest of read_slim: what follows from the operation's name (classified once per distinct name).
Slim finish_fast(const std::string& file, FastFields& f, ParsedDump& d, std::vector<OpInfo>& ops);
// numel()'s sum, one tensor at a time, with its overflow limits (past them: the tree reader reports it).
void add_tensor(FastFields& f, uint64_t n);
void mul_dim(uint64_t& n, int64_t dim);

// The fast ways (json_fast.cpp, pickle_fast.cpp): false when the dump must be read by the tree reader.
bool parse_json_fast(const std::string& file, const std::string& bytes, ConfigCache& cache, ParsedDump& d);
bool parse_pickle_fast(const std::string& file, const std::string& bytes, ConfigCache& cache, ParsedDump& d);

// Reads one dump into its slim form; the tree is freed when this returns. `fast`: a JSON dump goes the
// fast way first (false: the tree reader only, for the fuzz target that compares the two).
ParsedDump parse_one(const std::string& file, const std::string& bytes, ConfigCache& cache, bool fast = true);
// Reads the files on `threads` workers (0: one per core, at most one per file). Errors are those of the
// first file, in the order given, that has one.
std::vector<ParsedDump> parse_all(const std::vector<std::string>& files, const std::vector<const std::string*>& buffers,
                                  unsigned threads, ConfigCache& cache, bool fast = true);

}  // namespace collmc::traces::flight_recorder
