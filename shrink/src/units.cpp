#include "units.h"

#include <map>
#include <tuple>

namespace collmc::shrink {

std::vector<std::vector<int>> statement_units(const model::World& world) {
  // (comm, kind, a, b, ordinal): a and b are the sender and receiver of a point-to-point pair, -1 else.
  using Key = std::tuple<int, int, int, int, int>;
  std::map<Key, size_t> unit_of;
  std::map<std::tuple<int, int, int, int, int>, int> seen;  // (rank, comm, kind, a, b) -> calls so far
  std::vector<std::vector<int>> units;
  for (const auto& c : world.calls) {
    if (c.comm < 0) {
      units.push_back({c.id});
      continue;
    }
    int kind = static_cast<int>(c.kind);
    int a = -1, b = -1;
    if (model::is_p2p(c.kind)) {
      kind = -1;  // a send and its recv share a unit
      a = c.kind == model::OpKind::Send ? c.rank : c.peer;
      b = c.kind == model::OpKind::Send ? c.peer : c.rank;
    }
    const int ordinal = seen[{c.rank, c.comm, kind, a, b}]++;
    const Key key{c.comm, kind, a, b, ordinal};
    auto it = unit_of.find(key);
    if (it == unit_of.end()) {
      unit_of[key] = units.size();
      units.push_back({c.id});
    } else {
      units[it->second].push_back(c.id);
    }
  }
  return units;
}

}  // namespace collmc::shrink
