#include <sstream>
#include <stdexcept>

#include "collmc/gen/generators.h"

namespace collmc::gen {

std::string ring_scenario(int comms, bool agreed, bool mpi) {
  if (comms < 2) throw std::invalid_argument("a ring needs at least 2 comms");
  std::ostringstream out;
  out << "# " << comms << " two-rank communicators in a ring: c_i = [i, i+1 mod " << comms << "].\n"
      << "# Every rank registers a pool on its two comms, "
      << (agreed ? "lower comm index first (one agreed order): safe.\n"
                 : "its own comm first, then its left neighbour's (rotating order): a cycle.\n");
  out << "ranks " << comms << "\nname \"ring of " << comms << (agreed ? ", agreed order" : ", rotating order")
      << "\"\nexpect " << (agreed ? "safe" : "deadlock") << "\n";
  if (mpi) out << "set profile = mpi\n";
  for (int i = 0; i < comms; ++i) {
    int a = i, b = (i + 1) % comms;
    out << "comm c" << i << " = [" << std::min(a, b) << ", " << std::max(a, b) << "]\n";
  }
  for (int r = 0; r < comms; ++r) {
    int own = r, left = (r + comms - 1) % comms;
    int first = own, second = left;
    if (agreed && second < first) std::swap(first, second);
    out << "rank " << r << " {\n  alloc pool\n  register c" << first << " pool\n  register c" << second << " pool\n}\n";
  }
  return out.str();
}

std::string hook_fanout_scenario(int ranks, int comms, bool sorted) {
  if (ranks < 2 || comms < 1) throw std::invalid_argument("hook fan-out needs 2 ranks and 1 comm");
  std::ostringstream out;
  out << "# The allocator hook registers a new pool segment on every comm that registered the pool.\n"
      << "# "
      << (sorted ? "Comms sorted by a key every rank agrees on (the fix): safe."
                 : "Iterating an unordered_map: each rank has its own order: a deadlock.")
      << "\nranks " << ranks << "\nname \"hook fan-out over " << comms << " comms on " << ranks << " ranks"
      << (sorted ? ", sorted" : ", per-rank order") << "\"\nexpect " << (sorted ? "safe" : "deadlock") << "\n";
  for (int c = 0; c < comms; ++c) out << "comm g" << c << " = all\n";
  out << "rank * {\n  alloc seg 64MiB\n  " << (sorted ? "{" : "any_order {") << "\n";
  for (int c = 0; c < comms; ++c) out << "    register g" << c << " seg\n";
  out << "  }\n  all_reduce g0 seg\n  sync main\n}\n";
  return out.str();
}

}  // namespace collmc::gen
