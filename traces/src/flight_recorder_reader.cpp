// PyTorch Flight Recorder dumps (one per rank, pickle or JSON, versions 2.2 to 2.10) into the trace
// model: process groups from `pg_config`, per-rank collectives in `record_id` order with their state.
// Field names follow torch/csrc/distributed/c10d/FlightRecorderDetail.hpp and the analyzer in
// torch/distributed/flight_recorder; docs/TRACES.md has the mapping.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "collmc/traces/pickle.h"
#include "collmc/traces/trace.h"
#include "file_io.h"
#include "rank_list.h"

namespace collmc::traces {
namespace {

using nlohmann::json;

constexpr int kOldestMinor = 2, kNewestMinor = 10;
constexpr int kMaxWorld = 1 << 16;

struct Dump {
  std::string file;
  int rank = -1;
  json root;
};

struct PgConfig {
  std::string name, desc;
  std::vector<int> ranks;  // global ranks, in group-rank order
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

json parse_dump(const std::string& file, const std::string& bytes) {
  size_t first = bytes.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) bad(file, "the file is empty: expected a Flight Recorder dump (pickle or JSON)");
  if (static_cast<unsigned char>(bytes[first]) == 0x80 && first == 0) return decode_pickle(file, bytes);
  if (bytes[first] != '{')
    bad(file, "not a Flight Recorder dump: expected a pickle (first byte 0x80) or a JSON object ('{')");
  try {
    return json::parse(bytes);
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

std::map<std::string, PgConfig> parse_pg_config(const Dump& d) {
  std::map<std::string, PgConfig> out;
  const json* cfg = field(d.root, "pg_config");
  if (!cfg) return out;
  if (!cfg->is_object()) bad(d.file, "pg_config: expected a dict of process groups");
  for (const auto& [key, pg] : cfg->items()) {
    std::string path = "pg_config[\"" + key + "\"]";
    if (!pg.is_object()) bad(d.file, path + ": expected a dict with name, desc, ranks");
    PgConfig c;
    c.name = field(pg, "name") ? want_string(d.file, pg, "name", path) : key;
    c.desc = field(pg, "desc") ? want_string(d.file, pg, "desc", path) : "";
    const json* ranks = field(pg, "ranks");
    if (!ranks) bad(d.file, path + ".ranks: missing");
    c.ranks = parse_ranks(d.file, *ranks, path + ".ranks");
    out[c.name] = std::move(c);
  }
  return out;
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

struct Entry {
  int64_t record_id = 0;
  std::string comm;
  int64_t collective_seq = -1, p2p_seq = -1;
  OpInfo op;
  Call call;
};

class Builder {
 public:
  Trace build(std::vector<Dump>& dumps) {
    trace_.format = "flight-recorder";
    assign_ranks(dumps);
    for (auto& d : dumps) read_config(d);
    for (auto& d : dumps) read_entries(d);
    for (const auto& [who, count] : non_member_)
      trace_.findings.push_back("rank " + std::to_string(who.first) + " calls on pg " + who.second + " (" +
                                std::to_string(count) + " entr" + (count == 1 ? "y" : "ies") +
                                ") although its pg_config lists the group without it: a non-member call, or the "
                                "dump is not this rank's");
    report_stuck(dumps);
    align_dropped();
    finish();
    return std::move(trace_);
  }

 private:
  // A dump's rank from its own fields: a top-level `rank`; else the sender of its sends / the receiver
  // of its recvs (group rank -> global rank by its pg_config); else the one rank all its process groups
  // share. nullopt when the fields do not say.
  static std::optional<int> rank_from_fields(const Dump& d) {
    if (const json* r = field(d.root, "rank")) {
      int64_t v = want_int(d.file, d.root, "rank", "rank");
      if (v < 0 || v >= kMaxWorld) bad(d.file, "rank: " + std::to_string(v) + " is out of range");
      (void)r;
      return static_cast<int>(v);
    }
    auto configs = parse_pg_config(d);
    if (const json* entries = field(d.root, "entries"); entries && entries->is_array()) {
      for (const auto& e : *entries) {
        const json* name = field(e, "profiling_name");
        const json* pg = field(e, "process_group");
        if (!name || !name->is_string() || !pg || !pg->is_array() || pg->empty() || !(*pg)[0].is_string()) continue;
        auto cfg = configs.find((*pg)[0].get<std::string>());
        if (cfg == configs.end()) continue;
        OpInfo op;
        try {
          op = classify(d.file, name->get<std::string>(), "entries");
        } catch (const TraceInputError&) {
          continue;  // read_entry reports it
        }
        std::optional<int> self = op.kind == CallKind::Send   ? op.p2p_group_src
                                  : op.kind == CallKind::Recv ? op.p2p_group_dst
                                                              : std::nullopt;
        if (self && *self >= 0 && static_cast<size_t>(*self) < cfg->second.ranks.size())
          return cfg->second.ranks[static_cast<size_t>(*self)];
      }
    }
    std::optional<std::set<int>> common;
    for (const auto& [name, pg] : configs) {
      std::set<int> ranks(pg.ranks.begin(), pg.ranks.end());
      if (!common) {
        common = ranks;
        continue;
      }
      std::set<int> both;
      std::set_intersection(common->begin(), common->end(), ranks.begin(), ranks.end(),
                            std::inserter(both, both.begin()));
      common = both;
    }
    if (common && common->size() == 1) return *common->begin();
    return std::nullopt;
  }

  // Ranks from the dumps' own fields first, then the file names' trailing numbers; never renumbered:
  // two dumps of one rank, or a dump whose rank nothing says (with other dumps beside it), is an error.
  void assign_ranks(std::vector<Dump>& dumps) {
    std::map<int, const Dump*> seen;
    for (auto& d : dumps) {
      std::optional<int> by_fields = rank_from_fields(d);
      std::optional<int> by_name = rank_from_file_name(d.file);
      if (by_fields) {
        d.rank = *by_fields;
        if (by_name && *by_name != *by_fields)
          trace_.notes.push_back(d.file + ": its fields say rank " + std::to_string(*by_fields) + ", its file name " +
                                 std::to_string(*by_name) + "; rank " + std::to_string(*by_fields) + " is used");
      } else if (by_name) {
        d.rank = *by_name;
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

  void read_config(const Dump& d) {
    auto [major, minor] = parse_version(d.file, d.root);
    if (minor < kOldestMinor || minor > kNewestMinor)
      note_once("version " + std::to_string(major) + "." + std::to_string(minor) +
                " is outside the versions this reader knows (2.2 to 2.10); read as the nearest");
    for (auto& [name, pg] : parse_pg_config(d)) {
      configs_[d.rank][name] = pg;
      std::string id = comm_id(pg);
      if (!comm_index_.count(id)) {
        Communicator c;
        c.id = id;
        c.label = comm_label(pg);
        c.size = static_cast<int>(pg.ranks.size());
        for (size_t i = 0; i < pg.ranks.size(); ++i) c.members[pg.ranks[i]] = static_cast<int>(i);
        c.origin = CommOrigin::Preexisting;
        comm_index_[id] = trace_.comms.size();
        trace_.comms.push_back(std::move(c));
      }
      for (int r : pg.ranks) world_ = std::max(world_, r + 1);
    }
    world_ = std::max(world_, d.rank + 1);
    if (world_ > kMaxWorld) bad(d.file, "more than " + std::to_string(kMaxWorld) + " ranks");
  }

  void read_entries(const Dump& d) {
    RankTrace& rt = trace_.ranks[d.rank];
    rt.rank = d.rank;
    rt.source = d.file;
    const json* entries = field(d.root, "entries");
    std::vector<Entry> list;
    if (entries) {
      if (!entries->is_array()) bad(d.file, "entries: expected a list");
      size_t index = 0;
      for (const auto& e : *entries) list.push_back(read_entry(d, e, "entries[" + std::to_string(index++) + "]"));
    }
    std::sort(list.begin(), list.end(), [](const Entry& a, const Entry& b) { return a.record_id < b.record_id; });
    for (size_t i = 1; i < list.size(); ++i)
      if (list[i].record_id == list[i - 1].record_id)
        bad(d.file, "record_id " + std::to_string(list[i].record_id) + " appears twice");
    if (!list.empty() && list.front().record_id > 0) {
      dropped_[d.rank] = list.front().record_id;
      rt.notes.push_back("the ring buffer dropped the " + std::to_string(list.front().record_id) +
                         " oldest entries (record_id 0.." + std::to_string(list.front().record_id - 1) + ")");
    }
    if (list.empty()) rt.notes.push_back("the dump holds no entries");
    entries_[d.rank] = std::move(list);
  }

  Entry read_entry(const Dump& d, const json& e, const std::string& path) {
    if (!e.is_object()) bad(d.file, path + ": expected a dict");
    Entry out;
    out.record_id = want_int(d.file, e, "record_id", path);
    if (out.record_id < 0) bad(d.file, path + ".record_id: expected a non-negative integer");
    std::string profiling = want_string(d.file, e, "profiling_name", path);
    const json* pg = field(e, "process_group");
    if (!pg || !pg->is_array() || pg->size() != 2 || !(*pg)[0].is_string() || !(*pg)[1].is_string())
      bad(d.file, path + ".process_group: expected (name, desc)");
    std::string pg_name = (*pg)[0].get<std::string>();
    const PgConfig* cfg = find_config(d.rank, pg_name);
    if (!cfg) bad(d.file, path + ".process_group: '" + pg_name + "' is not in pg_config");
    out.comm = comm_id(*cfg);
    if (std::find(cfg->ranks.begin(), cfg->ranks.end(), d.rank) == cfg->ranks.end()) ++non_member_[{d.rank, pg_name}];
    out.op = classify(d.file, profiling, path);
    out.collective_seq =
        opt_int(d.file, e, "collective_seq_id", path).value_or(opt_int(d.file, e, "seq_id", path).value_or(-1));
    out.p2p_seq = opt_int(d.file, e, "p2p_seq_id", path).value_or(-1);

    Call& c = out.call;
    c.kind = out.op.kind;
    c.comm = out.comm;
    c.seq = out.record_id;
    c.buffer = "tensor";
    c.stream = "pg_" + cfg->name;
    c.origin = "record_id " + std::to_string(out.record_id) + ", " + profiling;
    if (out.collective_seq >= 0 && c.kind != CallKind::Send && c.kind != CallKind::Recv)
      c.origin += " #" + std::to_string(out.collective_seq);
    c.detail = profiling;
    if (const json* t = field(e, "time_created_ns"); t && t->is_number_unsigned()) c.time_ns = t->get<uint64_t>();
    std::string state = field(e, "state") ? want_string(d.file, e, "state", path) : "completed";
    if (state == "completed") {
      c.state = CallState::Completed;
    } else if (state == "started") {
      c.state = CallState::Started;
    } else if (state == "scheduled") {
      c.state = CallState::Scheduled;
    } else {
      bad(d.file, path + ".state \"" + state + "\": expected scheduled, started or completed");
    }
    if (const json* sizes = field(e, "input_sizes"); sizes && !out.op.varying_count)
      c.count = numel(d.file, *sizes, path + ".input_sizes");
    if (const json* dt = field(e, "input_dtypes"); dt && dt->is_array() && !dt->empty() && (*dt)[0].is_string())
      c.dtype = scenario_dtype((*dt)[0].get<std::string>());
    if (out.op.p2p_group_src) {
      int peer_group = c.kind == CallKind::Send ? *out.op.p2p_group_dst : *out.op.p2p_group_src;
      int self_group = c.kind == CallKind::Send ? *out.op.p2p_group_src : *out.op.p2p_group_dst;
      auto n = static_cast<int>(cfg->ranks.size());
      if (peer_group >= n || self_group >= n)
        bad(d.file, path + ".profiling_name \"" + profiling + "\": a group rank is outside " + comm_label(*cfg));
      c.peer = cfg->ranks[static_cast<size_t>(peer_group)];
    }
    return out;
  }

  const PgConfig* find_config(int rank, const std::string& name) const {
    if (auto it = configs_.find(rank); it != configs_.end())
      if (auto jt = it->second.find(name); jt != it->second.end()) return &jt->second;
    // Another rank's dump may name the group (this one lost it): use it if this rank is a member.
    for (const auto& [r, cfgs] : configs_)
      if (auto jt = cfgs.find(name); jt != cfgs.end())
        if (std::find(jt->second.ranks.begin(), jt->second.ranks.end(), rank) != jt->second.ranks.end())
          return &jt->second;
    return nullptr;
  }

  // Evidence that a rank is stuck or faulted rather than merely behind: far more entries that never
  // completed than the other ranks (the GPU stopped finishing work), and a group status whose last
  // completed collective lags its peers' by more than one.
  void report_stuck(const std::vector<Dump>& dumps) {
    std::map<int, size_t> open;
    std::map<int, std::string> oldest_open;
    for (const auto& [rank, list] : entries_) {
      size_t n = 0;
      for (const auto& e : list) {
        if (e.call.state == CallState::Completed) continue;
        if (n++ == 0)
          oldest_open[rank] =
              e.call.origin + " (" + (e.call.state == CallState::Started ? "started" : "scheduled") + ")";
      }
      open[rank] = n;
    }
    if (open.size() >= 2) {
      std::vector<size_t> counts;
      for (const auto& [rank, n] : open) counts.push_back(n);
      std::sort(counts.begin(), counts.end());
      const size_t median = counts[(counts.size() - 1) / 2];
      for (const auto& [rank, n] : open) {
        if (n < 10 || n < 2 * median + 5) continue;
        size_t lo = SIZE_MAX, hi = 0;
        for (const auto& [other, m] : open)
          if (other != rank) lo = std::min(lo, m), hi = std::max(hi, m);
        trace_.findings.push_back("rank " + std::to_string(rank) + " looks stuck or faulted: " + std::to_string(n) +
                                  " entries never completed, against " +
                                  (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi)) +
                                  " on the other ranks; the oldest is " + oldest_open[rank] +
                                  " (a GPU fault or a kernel that never finished stops every later entry)");
      }
    }
    // pg_status: {pg: {last_enqueued_collective, last_started_collective, last_completed_collective}}.
    std::map<std::string, std::map<int, int64_t>> completed;
    for (const auto& d : dumps) {
      const json* status = field(d.root, "pg_status");
      if (!status || !status->is_object()) continue;
      for (const auto& [pg, st] : status->items()) {
        if (!st.is_object() || !field(st, "last_completed_collective")) continue;
        try {
          completed[pg][d.rank] = want_int(d.file, st, "last_completed_collective", "pg_status[\"" + pg + "\"]");
        } catch (const TraceInputError&) {
          continue;  // a status we cannot read is no evidence
        }
      }
    }
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
    std::map<std::string, int64_t> cut;
    for (const auto& [rank, first] : dropped_) {
      std::map<std::string, int64_t> oldest;
      for (const auto& e : entries_[rank]) {
        if (e.collective_seq < 0 || e.call.kind == CallKind::Send || e.call.kind == CallKind::Recv) continue;
        auto [it, fresh] = oldest.emplace(e.comm, e.collective_seq);
        if (!fresh) it->second = std::min(it->second, e.collective_seq);
      }
      for (const auto& [comm, seq] : oldest) cut[comm] = std::max(cut[comm], seq);
    }
    for (const auto& cut_at : cut) {
      const std::string& comm = cut_at.first;
      const int64_t seq = cut_at.second;
      size_t removed = 0;
      for (auto& [rank, list] : entries_) {
        auto keep = std::remove_if(list.begin(), list.end(), [&comm, seq](const Entry& e) {
          return e.comm == comm && e.collective_seq >= 0 && e.collective_seq < seq && e.call.kind != CallKind::Send &&
                 e.call.kind != CallKind::Recv;
        });
        removed += static_cast<size_t>(list.end() - keep);
        list.erase(keep, list.end());
      }
      if (removed > 0)
        trace_.notes.push_back("the collectives on " + label_of(comm) + " before #" + std::to_string(seq) +
                               " are left out on every rank (" + std::to_string(removed) + " entries): the ring " +
                               "buffer of " + rank_phrase(dropped_ranks) + " no longer holds them");
    }
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
      if (!entries_.count(r)) {
        rt.present = false;
        missing.push_back(r);
        continue;
      }
      ThreadTrace t;
      t.name = "main";
      const auto& list = entries_[r];
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

  Trace trace_;
  int world_ = 0;
  std::map<std::pair<int, std::string>, size_t> non_member_;  // (rank, pg name) -> calls
  std::map<int, std::map<std::string, PgConfig>> configs_;
  std::map<std::string, size_t> comm_index_;
  std::map<int, std::vector<Entry>> entries_;
  std::map<int, int64_t> dropped_;
};

}  // namespace

Trace read_flight_recorder(const std::vector<std::string>& files) {
  if (files.empty()) throw TraceInputError("", 0, 0, 0, "no Flight Recorder dump given");
  std::vector<Dump> dumps;
  for (const auto& f : files) {
    Dump d;
    d.file = f;
    d.root = parse_dump(f, read_trace_file(f));
    if (!d.root.is_object()) bad(f, "expected a dict at the top of the dump");
    dumps.push_back(std::move(d));
  }
  return Builder().build(dumps);
}

Trace read_flight_recorder_buffer(const std::string& name, const std::string& bytes) {
  std::vector<Dump> dumps(1);
  dumps[0].file = name;
  dumps[0].root = parse_dump(name, bytes);
  if (!dumps[0].root.is_object()) bad(name, "expected a dict at the top of the dump");
  return Builder().build(dumps);
}

}  // namespace collmc::traces
