// A message's type and count as the language writes them (message_form.h).
#include "message_form.h"

#include <cctype>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include <absl/strings/str_cat.h>

namespace collmc::traces {

// MPI's predefined datatypes that the language names; any other predefined type is `mpi_<name>` (compared by
// name only), MPI_PACKED and what cannot be said `any` (never compared: MPI 4.1 sec. 3.3.1, 5.2.2).
std::string language_dtype(const std::string& mpi) {
  static const std::map<std::string, std::string> names = {
      {"MPI_INT", "int32"},           {"MPI_INT32_T", "int32"},       {"MPI_UNSIGNED", "uint32"},
      {"MPI_UINT32_T", "uint32"},     {"MPI_LONG", "int64"},          {"MPI_LONG_LONG", "int64"},
      {"MPI_LONG_LONG_INT", "int64"}, {"MPI_INT64_T", "int64"},       {"MPI_UNSIGNED_LONG", "uint64"},
      {"MPI_UINT64_T", "uint64"},     {"MPI_FLOAT", "float32"},       {"MPI_DOUBLE", "float64"},
      {"MPI_CHAR", "int8"},           {"MPI_SIGNED_CHAR", "int8"},    {"MPI_INT8_T", "int8"},
      {"MPI_BYTE", "uint8"},          {"MPI_UNSIGNED_CHAR", "uint8"}, {"MPI_UINT8_T", "uint8"},
  };
  auto it = names.find(mpi);
  if (it != names.end()) return it->second;
  if (mpi.empty() || mpi == "MPI_PACKED" || mpi.rfind("MPI_", 0) != 0) return "any";
  std::string out = "mpi_";
  for (char ch : mpi.substr(4))
    out += std::isalnum(static_cast<unsigned char>(ch)) ? static_cast<char>(std::tolower(ch)) : '_';
  return out;
}

MessageForm message_form(const std::string& name, const std::string& sig, int64_t count) {
  MessageForm f;
  // MPI_DATATYPE_NULL is the program's erroneous argument whatever the count (a v-collective's is not one
  // number): kept, so that the semantics reports it (model/mpi_rules.def).
  if (name == "MPI_DATATYPE_NULL") {
    f.dtype = "null";
    return f;
  }
  if (count < 0) return f;
  if (!name.empty()) {
    f.dtype = language_dtype(name);
    if (f.dtype != "any") f.count = static_cast<uint64_t>(count);
    return f;
  }
  std::vector<std::pair<std::string, uint64_t>> runs;  // language dtype, times
  size_t start = 0;
  while (start < sig.size()) {
    size_t comma = sig.find(',', start);
    const std::string run = sig.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const size_t star = run.rfind('*');
    if (star == std::string::npos) return f;
    const std::string d = language_dtype(run.substr(0, star));
    const long long n = std::atoll(run.c_str() + star + 1);
    if (d == "any" || n < 0) return f;
    if (n > 0) {
      if (!runs.empty() && runs.back().first == d)
        runs.back().second += static_cast<uint64_t>(n);
      else
        runs.emplace_back(d, static_cast<uint64_t>(n));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (runs.empty()) return f;
  if (runs.size() == 1) {
    f.dtype = runs[0].first;
    f.count = runs[0].second * static_cast<uint64_t>(count);
    return f;
  }
  // The shortest unit that repeats: the prefix function's period of the element sequence (small types only).
  uint64_t total = 0;
  for (const auto& r : runs) total += r.second;
  std::vector<std::pair<std::string, uint64_t>> unit = runs;
  uint64_t repeats = 1;
  if (total <= 4096) {
    // The elements, each named by its dtype.
    std::vector<std::string> el;
    for (const auto& r : runs) el.insert(el.end(), r.second, r.first);
    std::vector<size_t> pi(el.size(), 0);
    for (size_t i = 1; i < el.size(); ++i) {
      size_t k = pi[i - 1];
      while (k > 0 && el[i] != el[k]) k = pi[k - 1];
      if (el[i] == el[k]) ++k;
      pi[i] = k;
    }
    const size_t period = el.size() - pi.back();
    if (el.size() % period == 0 && period < el.size()) {
      repeats = el.size() / period;
      unit.clear();
      for (size_t i = 0; i < period; ++i)
        if (!unit.empty() && unit.back().first == el[i])
          ++unit.back().second;
        else
          unit.emplace_back(el[i], 1);
    }
  }
  if (unit.size() == 1) {
    f.dtype = unit[0].first;
    f.count = unit[0].second * repeats * static_cast<uint64_t>(count);
    return f;
  }
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the unit's runs
  for (const auto& [d, n] : unit) {
    f.signature += (f.signature.empty() ? "" : ",") + d + "*" + std::to_string(n);
  }
  for (char ch : f.signature) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  f.dtype = "mpi_sig_" + absl::StrCat(absl::Hex(h)).substr(0, 8);
  f.count = repeats * static_cast<uint64_t>(count);
  return f;
}

namespace {
std::string text_field(const RecorderLine* l, const std::string& key) {
  const auto* f = recorder_field(l, key.c_str());
  return f != nullptr && f->is_string() ? f->get<std::string>() : std::string();
}
int64_t integer_field(const RecorderLine* l, const std::string& key, int64_t fallback) {
  const auto* f = recorder_field(l, key.c_str());
  return f != nullptr && f->is_number_integer() ? f->get<int64_t>() : fallback;
}
}  // namespace

MessageForm recorded_message(const RecorderLine* l, const std::string& prefix, const char* count_key) {
  return message_form(text_field(l, prefix + "dtype"), text_field(l, prefix + "dtype_sig"),
                      integer_field(l, count_key, -1));
}

MessageForm recorded_v_message(const RecorderLine* l) {
  std::optional<MessageForm> unit;
  bool compared = true;
  for (const std::string side : {"v_send_", "v_recv_"}) {
    if (recorder_field(l, (side + "min").c_str()) == nullptr) continue;
    MessageForm f = message_form(text_field(l, side + "dtype"), text_field(l, side + "dtype_sig"), 1);
    if (f.dtype == "null") return f;  // the program's erroneous argument, judged whatever the counts
    // A zero count, or a type the trace cannot say (MPI_PACKED matches any signature): not compared.
    if (integer_field(l, side + "min", 0) <= 0 || f.dtype == "any") compared = false;
    f.count.reset();
    if (!unit) unit = f;
  }
  if (!unit || !compared) return {};
  return *unit;
}

}  // namespace collmc::traces
