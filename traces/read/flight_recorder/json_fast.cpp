// The fast way through a Flight Recorder JSON dump: simdjson On-Demand (dump.h).
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

#include "dump.h"
#include "file_io.h"

namespace collmc::traces::flight_recorder {

namespace {

// The fast way through a JSON dump: simdjson On-Demand over the file's bytes, the fields the reader needs
// read straight into Slim entries, no tree built per entry (nlohmann's tree of each entry was about 60 % of
// the import's time). It takes only what it can read exactly as the tree reader (read_slim) would: at
// anything else (bad JSON, a field of another type than usual, a duplicate key, a value read_slim rejects)
// it gives up and the dump is read again by the tree reader, whose errors name the line and column. Both
// readers thus accept the same dumps and read them alike (fuzz_flight_recorder checks that they agree);
// the fast one is the path of every well-formed dump.
namespace od = simdjson::ondemand;

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

}  // namespace

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

}  // namespace collmc::traces::flight_recorder
