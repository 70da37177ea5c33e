// Delta debugging (Zeller and Hildebrandt, "Simplifying and Isolating Failure-Inducing Input", 2002):
// the ddmin search for a 1-minimal subset that still fails, i.e. one where removing any single item
// makes the failure go away.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace collmc::shrink {

template <class T>
std::vector<std::vector<T>> split_into(const std::vector<T>& items, size_t parts) {
  std::vector<std::vector<T>> out(parts);
  for (size_t i = 0, start = 0; i < parts; ++i) {
    const size_t len = (items.size() - start) / (parts - i);
    out[i].assign(items.begin() + static_cast<long>(start), items.begin() + static_cast<long>(start + len));
    start += len;
  }
  return out;
}

// `fails(subset)` says whether the subset still fails; it is assumed to hold for `items`.
template <class T, class Fails>
std::vector<T> ddmin(std::vector<T> items, Fails&& fails) {
  size_t n = 2;
  while (!items.empty()) {
    if (items.size() == 1) {
      if (fails(std::vector<T>{})) items.clear();
      break;
    }
    n = std::min(n, items.size());
    const auto chunks = split_into(items, n);
    bool reduced = false;
    for (const auto& chunk : chunks)
      if (fails(chunk)) {
        items = chunk;
        n = 2;
        reduced = true;
        break;
      }
    if (!reduced && n > 2) {
      for (size_t i = 0; i < chunks.size() && !reduced; ++i) {
        std::vector<T> complement;
        for (size_t j = 0; j < chunks.size(); ++j)
          if (j != i) complement.insert(complement.end(), chunks[j].begin(), chunks[j].end());
        if (fails(complement)) {
          items = std::move(complement);
          n = std::max<size_t>(n - 1, 2);
          reduced = true;
        }
      }
    }
    if (!reduced) {
      if (n >= items.size()) break;
      n = std::min(items.size(), 2 * n);
    }
  }
  return items;
}

}  // namespace collmc::shrink
