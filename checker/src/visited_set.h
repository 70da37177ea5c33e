// The set of states a search has stored: every state's canonical bytes once, in one arena, and a flat
// open-addressing table (absl::flat_hash_set) of state numbers keyed by an xxHash3 of those bytes.
// No allocation per state; about 20 bytes of bookkeeping per state besides its bytes.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
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
    bool inserted = false;
    // One probe: lazy_emplace constructs the slot only when the bytes are new.
    const uint32_t id = *index_.lazy_emplace(Probe{bytes, h}, [&](const auto& construct) {
      const auto fresh = static_cast<uint32_t>(offsets_.size());
      offsets_.push_back(arena_.size());
      hashes_.push_back(h);
      arena_.insert(arena_.end(), bytes.begin(), bytes.end());
      construct(fresh);
      inserted = true;
    });
    return {id, inserted};
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

// A set of keys that all have the same number of 32-bit words (fixed at construction): the keys side
// by side in blocks of 2^k keys, about 1 MiB (key i at word (i mod 2^k) * width of block i >> k; full
// blocks never move, so growing copies at most one block), and the same kind of table of key numbers keyed by xxHash3.
// A lookup of a stored key costs the table's slot and the key's words: two or three cache lines, against two per level
// of a tree.
class FixedWidthSet {
 public:
  explicit FixedWidthSet(size_t width)
      : width_(width),
        block_shift_(
            static_cast<unsigned>(std::bit_width(std::max<size_t>(1, kBlockBytes / (width * sizeof(uint32_t)))) - 1)),
        index_(0, Hash{this}, Eq{this}) {}
  FixedWidthSet(const FixedWidthSet&) = delete;
  FixedWidthSet& operator=(const FixedWidthSet&) = delete;

  size_t width() const { return width_; }

  // Stores the `width()` words at `key` if new; returns true when they were not stored before.
  bool insert(const uint32_t* key) {
    const uint64_t h = XXH3_64bits(key, width_ * sizeof(uint32_t));
    bool inserted = false;
    // One probe: lazy_emplace constructs the slot only when the key is new.
    index_.lazy_emplace(Probe{key, h}, [&](const auto& construct) {
      const auto id = static_cast<uint32_t>(hashes_.size());
      if ((id >> block_shift_) == blocks_.size()) {
        blocks_.emplace_back();
        if (blocks_.size() > 1) blocks_.back().reserve(width_ << block_shift_);  // the first grows as needed
      }
      blocks_.back().insert(blocks_.back().end(), key, key + width_);
      hashes_.push_back(h);
      construct(id);
      inserted = true;
    });
    return inserted;
  }

  bool contains(const uint32_t* key) const {
    return index_.find(Probe{key, XXH3_64bits(key, width_ * sizeof(uint32_t))}) != index_.end();
  }

  size_t size() const { return hashes_.size(); }
  uint64_t memory_bytes() const {
    const uint64_t blocks = blocks_.empty() ? 0
                                            : (blocks_.size() - 1) * ((width_ * sizeof(uint32_t)) << block_shift_) +
                                                  blocks_.back().capacity() * sizeof(uint32_t);
    return blocks + hashes_.capacity() * sizeof(uint64_t) + index_.capacity() * (sizeof(uint32_t) + 1);
  }

 private:
  static constexpr size_t kBlockBytes = size_t{1} << 20;

  const uint32_t* at(uint32_t id) const {
    return blocks_[id >> block_shift_].data() + (id & ((uint32_t{1} << block_shift_) - 1)) * width_;
  }

  struct Probe {
    const uint32_t* key;
    uint64_t hash;
  };
  struct Hash {
    using is_transparent = void;
    const FixedWidthSet* set;
    size_t operator()(uint32_t id) const { return set->hashes_[id]; }
    size_t operator()(const Probe& p) const { return p.hash; }
  };
  struct Eq {
    using is_transparent = void;
    const FixedWidthSet* set;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(const Probe& p, uint32_t id) const { return same(p, id); }
    bool operator()(uint32_t id, const Probe& p) const { return same(p, id); }
    bool same(const Probe& p, uint32_t id) const {
      return std::memcmp(set->at(id), p.key, set->width_ * sizeof(uint32_t)) == 0;
    }
  };

  size_t width_;
  unsigned block_shift_;                       // 2^block_shift_ keys per block
  std::vector<std::vector<uint32_t>> blocks_;  // full blocks, then the one being filled
  std::vector<uint64_t> hashes_;
  absl::flat_hash_set<uint32_t, Hash, Eq> index_;
};

}  // namespace collmc::checker
