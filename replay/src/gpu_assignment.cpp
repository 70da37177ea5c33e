#include "collmc/replay/gpu_assignment.h"

#include <functional>

namespace collmc::replay {

std::optional<std::vector<int>> assign_gpus(const model::World& world, int gpus) {
  const int n = world.ranks;
  std::vector<int> identity(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) identity[static_cast<size_t>(r)] = r;
  if (n <= gpus) return identity;
  if (gpus <= 0) return std::nullopt;
  // Two ranks conflict when some communicator holds both, or when one sends to / receives from the other.
  std::vector<std::vector<bool>> conflict(static_cast<size_t>(n), std::vector<bool>(static_cast<size_t>(n), false));
  auto mark = [&](int a, int b) {
    if (a < 0 || b < 0 || a >= n || b >= n || a == b) return;
    conflict[static_cast<size_t>(a)][static_cast<size_t>(b)] = true;
    conflict[static_cast<size_t>(b)][static_cast<size_t>(a)] = true;
  };
  for (const auto& c : world.comms)
    for (int a : c.members)
      for (int b : c.members) mark(a, b);
  for (const auto& call : world.calls) mark(call.rank, call.peer);
  std::vector<int> gpu(static_cast<size_t>(n), -1);
  std::function<bool(int)> place = [&](int r) {
    if (r == n) return true;
    for (int g = 0; g < gpus; ++g) {
      bool free = true;
      for (int q = 0; q < r && free; ++q)
        free = !(conflict[static_cast<size_t>(r)][static_cast<size_t>(q)] && gpu[static_cast<size_t>(q)] == g);
      if (!free) continue;
      gpu[static_cast<size_t>(r)] = g;
      if (place(r + 1)) return true;
    }
    gpu[static_cast<size_t>(r)] = -1;
    return false;
  };
  if (!place(0)) return std::nullopt;
  return gpu;
}

std::string describe_gpu_assignment(const std::vector<int>& gpu_of_rank) {
  int gpus = 0;
  for (int g : gpu_of_rank) gpus = std::max(gpus, g + 1);
  std::string out;
  for (int g = 0; g < gpus; ++g) {
    out += (g ? "; GPU " : "GPU ") + std::to_string(g) + ": rank";
    std::string ranks;
    int count = 0;
    for (size_t r = 0; r < gpu_of_rank.size(); ++r)
      if (gpu_of_rank[r] == g) ranks += (count++ ? ", " : " ") + std::to_string(r);
    out += (count > 1 ? "s" : "") + ranks;
  }
  return out;
}

}  // namespace collmc::replay
