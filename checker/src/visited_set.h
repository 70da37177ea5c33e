// The set of states a search has stored: every state's canonical bytes once, in one arena, and a flat
// open-addressing table (absl::flat_hash_set) of state numbers keyed by an xxHash3 of those bytes.
// No allocation per state; about 20 bytes of bookkeeping per state besides its bytes.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <cstdint>
#include <string_view>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace collmc::checker {

class VisitedSet {
 public:
  VisitedSet() : index_(0, Hash{this}, Eq{this}) {}
  VisitedSet(const VisitedSet&) = delete;
  VisitedSet& operator=(const VisitedSet&) = delete;

  // Stores `bytes` if new: returns its number and true, or the number it already had and false.
  std::pair<uint32_t, bool> insert(std::string_view bytes) {
    const uint64_t h = XXH3_64bits(bytes.data(), bytes.size());
    if (auto it = index_.find(Probe{bytes, h}); it != index_.end()) return {*it, false};
    const auto id = static_cast<uint32_t>(offsets_.size());
    offsets_.push_back(arena_.size());
    hashes_.push_back(h);
    arena_.insert(arena_.end(), bytes.begin(), bytes.end());
    index_.insert(id);
    return {id, true};
  }

  std::string_view bytes(uint32_t id) const {
    const uint64_t begin = offsets_[id];
    const uint64_t end = id + 1 < offsets_.size() ? offsets_[id + 1] : arena_.size();
    return {arena_.data() + begin, static_cast<size_t>(end - begin)};
  }

  size_t size() const { return offsets_.size(); }
  uint64_t key_bytes() const { return arena_.size(); }
  // Arena, offsets, hashes and table slots (one control byte and one id per slot).
  uint64_t memory_bytes() const {
    return arena_.capacity() + offsets_.capacity() * sizeof(uint64_t) + hashes_.capacity() * sizeof(uint64_t) +
           index_.capacity() * (sizeof(uint32_t) + 1);
  }

 private:
  struct Probe {
    std::string_view bytes;
    uint64_t hash;
  };
  struct Hash {
    using is_transparent = void;
    const VisitedSet* set;
    size_t operator()(uint32_t id) const { return set->hashes_[id]; }
    size_t operator()(const Probe& p) const { return p.hash; }
  };
  struct Eq {
    using is_transparent = void;
    const VisitedSet* set;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(const Probe& p, uint32_t id) const { return set->bytes(id) == p.bytes; }
    bool operator()(uint32_t id, const Probe& p) const { return set->bytes(id) == p.bytes; }
  };

  std::vector<char> arena_;
  std::vector<uint64_t> offsets_;
  std::vector<uint64_t> hashes_;
  absl::flat_hash_set<uint32_t, Hash, Eq> index_;
};

}  // namespace collmc::checker
