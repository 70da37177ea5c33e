// The set of states a search has stored: every state's canonical bytes once, in one arena, and a flat
// open-addressing table (absl::flat_hash_set) of state numbers keyed by an xxHash3 of those bytes.
// No allocation per state; about 20 bytes of bookkeeping per state besides its bytes.
#pragma once

#include <absl/container/flat_hash_set.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace collmc::checker {

// What both sets below share: a flat open-addressing table (absl::flat_hash_set) of key numbers, each
// key's xxHash3 kept beside it (for rehashing), looked up by a key and its hash. The keys themselves
// stay with the owner, which compares a key with stored key `id` in `same(key, id)`.
template <class Owner, class Key>
class KeyIndex {
 public:
  explicit KeyIndex(const Owner* owner) : index_(0, Hash{this}, Eq{owner}) {}
  KeyIndex(const KeyIndex&) = delete;
  KeyIndex& operator=(const KeyIndex&) = delete;

  // The number of `key` (hash `h`) and false when it is stored; else calls `store(id)` to keep the key
  // under the next number and returns that and true. One probe: lazy_emplace makes the slot only when new.
  template <class Store>
  std::pair<uint32_t, bool> insert(Key key, uint64_t h, Store&& store) {
    bool inserted = false;
    const uint32_t id = *index_.lazy_emplace(Probe{key, h}, [&](const auto& construct) {
      const auto fresh = static_cast<uint32_t>(hashes_.size());
      store(fresh);
      hashes_.push_back(h);
      construct(fresh);
      inserted = true;
    });
    return {id, inserted};
  }
  bool contains(Key key, uint64_t h) const { return index_.find(Probe{key, h}) != index_.end(); }

  size_t size() const { return hashes_.size(); }
  // Hashes and table slots (one control byte and one id per slot).
  uint64_t memory_bytes() const {
    return hashes_.capacity() * sizeof(uint64_t) + index_.capacity() * (sizeof(uint32_t) + 1);
  }

 private:
  struct Probe {
    Key key;
    uint64_t hash;
  };
  struct Hash {
    using is_transparent = void;
    const KeyIndex* index;
    size_t operator()(uint32_t id) const { return index->hashes_[id]; }
    size_t operator()(const Probe& p) const { return p.hash; }
  };
  struct Eq {
    using is_transparent = void;
    const Owner* owner;
    bool operator()(uint32_t a, uint32_t b) const { return a == b; }
    bool operator()(const Probe& p, uint32_t id) const { return owner->same(p.key, id); }
    bool operator()(uint32_t id, const Probe& p) const { return owner->same(p.key, id); }
  };

  std::vector<uint64_t> hashes_;
  absl::flat_hash_set<uint32_t, Hash, Eq> index_;
};

class VisitedSet {
 public:
  VisitedSet() : index_(this) {}
  VisitedSet(const VisitedSet&) = delete;
  VisitedSet& operator=(const VisitedSet&) = delete;

  // Stores `bytes` if new: returns its number and true, or the number it already had and false.
  std::pair<uint32_t, bool> insert(std::string_view bytes) {
    return index_.insert(bytes, XXH3_64bits(bytes.data(), bytes.size()), [&](uint32_t) {
      offsets_.push_back(arena_.size());
      arena_.insert(arena_.end(), bytes.begin(), bytes.end());
    });
  }

  std::string_view bytes(uint32_t id) const {
    const uint64_t begin = offsets_[id];
    const uint64_t end = id + 1 < offsets_.size() ? offsets_[id + 1] : arena_.size();
    return {arena_.data() + begin, static_cast<size_t>(end - begin)};
  }

  size_t size() const { return offsets_.size(); }
  uint64_t key_bytes() const { return arena_.size(); }
  // Arena, offsets, hashes and table slots.
  uint64_t memory_bytes() const {
    return arena_.capacity() + offsets_.capacity() * sizeof(uint64_t) + index_.memory_bytes();
  }

 private:
  friend KeyIndex<VisitedSet, std::string_view>;
  bool same(std::string_view key, uint32_t id) const { return bytes(id) == key; }

  std::vector<char> arena_;
  std::vector<uint64_t> offsets_;
  KeyIndex<VisitedSet, std::string_view> index_;
};

// A set of keys that all have the same number of 32-bit words (fixed at construction): the keys side
// by side in blocks of 2^k keys, about 1 MiB each (key i at word (i mod 2^k) * width of block i >> k;
// full blocks never move, so growing copies at most one block), and a KeyIndex of their numbers. A
// lookup of a stored key costs the table's slot and the key's words: two or three cache lines, against
// two per level of a tree.
class FixedWidthSet {
 public:
  explicit FixedWidthSet(size_t width)
      : width_(width),
        block_shift_(
            static_cast<unsigned>(std::bit_width(std::max<size_t>(1, kBlockBytes / (width * sizeof(uint32_t)))) - 1)),
        index_(this) {}
  FixedWidthSet(const FixedWidthSet&) = delete;
  FixedWidthSet& operator=(const FixedWidthSet&) = delete;

  // Stores the width words at `key` if new; returns true when they were not stored before.
  bool insert(const uint32_t* key) {
    return index_
        .insert(key, hash(key),
                [&](uint32_t id) {
                  if ((id >> block_shift_) == blocks_.size()) {
                    blocks_.emplace_back();
                    if (blocks_.size() > 1) blocks_.back().reserve(width_ << block_shift_);  // the first grows
                  }
                  blocks_.back().insert(blocks_.back().end(), key, key + width_);
                })
        .second;
  }
  bool contains(const uint32_t* key) const { return index_.contains(key, hash(key)); }

  size_t size() const { return index_.size(); }
  // Key blocks, hashes and table slots.
  uint64_t memory_bytes() const {
    const uint64_t blocks = blocks_.empty() ? 0
                                            : (blocks_.size() - 1) * ((width_ * sizeof(uint32_t)) << block_shift_) +
                                                  blocks_.back().capacity() * sizeof(uint32_t);
    return blocks + index_.memory_bytes();
  }

 private:
  friend KeyIndex<FixedWidthSet, const uint32_t*>;
  static constexpr size_t kBlockBytes = size_t{1} << 20;

  uint64_t hash(const uint32_t* key) const { return XXH3_64bits(key, width_ * sizeof(uint32_t)); }
  const uint32_t* at(uint32_t id) const {
    return blocks_[id >> block_shift_].data() + (id & ((uint32_t{1} << block_shift_) - 1)) * width_;
  }
  bool same(const uint32_t* key, uint32_t id) const { return std::memcmp(at(id), key, width_ * sizeof(uint32_t)) == 0; }

  size_t width_;
  unsigned block_shift_;                       // 2^block_shift_ keys per block
  std::vector<std::vector<uint32_t>> blocks_;  // full blocks, then the one being filled
  KeyIndex<FixedWidthSet, const uint32_t*> index_;
};

}  // namespace collmc::checker
