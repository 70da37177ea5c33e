// The MPI recorder's call-name table (mpi_calls.def).
#include "mpi_calls.h"

#include <array>
#include <string>
#include <unordered_map>

namespace collmc::traces {
namespace {

constexpr std::array kCalls = {
#define MPI_CALL(id, family, kind, flags) \
  MpiCallInfo{MpiCall::id, "MPI_" #id, MpiFamily::family, CallKind::kind, static_cast<uint32_t>(flags)},
#include "mpi_calls.def"
#undef MPI_CALL
};

const std::unordered_map<std::string_view, size_t>& by_name() {
  static const auto* map = [] {
    auto* m = new std::unordered_map<std::string_view, size_t>();
    for (size_t i = 0; i < kCalls.size(); ++i) m->emplace(kCalls[i].name, i);
    return m;
  }();
  return *map;
}

}  // namespace

std::optional<MpiCallInfo> mpi_call_of(std::string_view name) {
  const auto& m = by_name();
  auto it = m.find(name);
  if (it == m.end()) return std::nullopt;
  return kCalls[it->second];
}

const MpiCallInfo& mpi_call_info(MpiCall call) { return kCalls[static_cast<size_t>(call)]; }

std::span<const MpiCallInfo> mpi_calls() { return kCalls; }

}  // namespace collmc::traces
