// The Flight Recorder tree reader (nlohmann; every error names its field) and the way each dump is read (dump.h).
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
#include "rank_list.h"

namespace collmc::traces::flight_recorder {

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
json parse_dump(const std::string& file, const std::string& bytes, const EntrySink& sink) {
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
  // The one table of the format's operation names (profiling_name after "nccl:"): the kind, and whether
  // uneven per-rank sizes are legal (the count is then left out). A name ending in "_coalesced" closes a
  // batch (its suffix, not its name, says so); "coalesced" alone is only the end of a batch.
  struct NamedOp {
    CallKind kind;
    bool varying_count;
    bool batch_end_marker = false;  // "coalesced": only ever the end of a batch
  };
  static const std::map<std::string, NamedOp, std::less<>> kinds = {
      {"coalesced", {CallKind::Other, false, true}},
      {"all_reduce", {CallKind::AllReduce, false}},
      {"allreduce", {CallKind::AllReduce, false}},
      {"allreduce_coalesced", {CallKind::AllReduce, false}},
      {"all_reduce_coalesced", {CallKind::AllReduce, false}},
      {"ALLREDUCE_coalesced", {CallKind::AllReduce, false}},
      {"broadcast", {CallKind::Broadcast, false}},
      {"_broadcast_oop", {CallKind::Broadcast, false}},
      {"reduce", {CallKind::Reduce, false}},
      {"_reduce_oop", {CallKind::Reduce, false}},
      {"all_gather", {CallKind::AllGather, false}},
      {"_all_gather_base", {CallKind::AllGather, false}},
      {"all_gather_single", {CallKind::AllGather, false}},
      {"all_gather_into_tensor", {CallKind::AllGather, false}},
      {"all_gather_into_tensor_coalesced", {CallKind::AllGather, false}},
      {"ALLGATHER_coalesced", {CallKind::AllGather, false}},
      {"all_gather_v", {CallKind::AllGather, true}},
      {"reduce_scatter", {CallKind::ReduceScatter, false}},
      {"_reduce_scatter_base", {CallKind::ReduceScatter, false}},
      {"reduce_scatter_single", {CallKind::ReduceScatter, false}},
      {"reduce_scatter_tensor_coalesced", {CallKind::ReduceScatter, false}},
      {"REDUCE_SCATTER_coalesced", {CallKind::ReduceScatter, false}},
      {"reduce_scatter_v", {CallKind::ReduceScatter, true}},
      {"all_to_all", {CallKind::AllToAll, true}},
      {"all_to_all_single", {CallKind::AllToAll, true}},
      {"all_to_all_v_single", {CallKind::AllToAll, true}},
      {"alltoall", {CallKind::AllToAll, true}},
      {"alltoall_base", {CallKind::AllToAll, true}},
      {"gather", {CallKind::AllToAll, true}},
      {"scatter", {CallKind::AllToAll, true}},
      {"barrier", {CallKind::Barrier, false}},
      {"all_reduce_barrier", {CallKind::Barrier, false}},
      {"send", {CallKind::Send, false}},
      {"recv", {CallKind::Recv, false}},
  };
  auto it = kinds.find(name);
  if (it != kinds.end() && it->second.batch_end_marker) {
    info.coalesced_marker = true;
    return info;
  }
  info.closes_batch = name.ends_with("_coalesced");
  if (it == kinds.end()) return info;  // Other: kept as a comment
  info.kind = it->second.kind;
  info.varying_count = it->second.varying_count;
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

bool looks_like_json(const std::string& bytes) {
  size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string::npos && bytes[first] == '{';
}

ParsedDump parse_one(const std::string& file, const std::string& bytes, ConfigCache& cache, bool fast) {
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

std::vector<ParsedDump> parse_all(const std::vector<std::string>& files, const std::vector<const std::string*>& buffers,
                                  unsigned threads, ConfigCache& cache, bool fast) {
  std::vector<ParsedDump> out(files.size());
  for_each_file(files.size(), threads, [&](size_t i) {
    if (buffers.empty()) read_ahead(files, i);  // file_io.h: parsing overlaps the disk
    out[i] = buffers.empty() ? parse_one(files[i], read_trace_file(files[i]), cache, fast)
                             : parse_one(files[i], *buffers[i], cache, fast);
  });
  return out;
}

}  // namespace collmc::traces::flight_recorder
