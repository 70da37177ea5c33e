// The depth-first search's visited set: states stored as trees of shared parts (LTSmin's tree
// compression). Every rank's, comm's and store key's encoding is kept once in a leaf table; a state is
// the sequence of its parts' leaf ids, folded pairwise into a binary tree whose nodes are kept once
// per level in flat hash tables. Two states that differ in k parts share all but about k * log2(n)
// nodes, so storing a state that a step changed in one rank costs O(log n) table entries, not O(n)
// bytes; and since the tree follows the search's one current state, only the parts the steps since
// the last insert wrote (State's Tracked parts note them) are re-encoded.
//
// Exact: leaf ids are given per distinct byte string (compared in full), node ids per distinct pair of
// ids at their level, so two states get the same root id only when every part is equal. A state is
// new exactly when its root pair is new at the top level.
//
// Small states (at most kFlatParts parts) skip the tree: the vector of leaf ids itself is the key of
// one flat set (FixedWidthSet). A tree costs a table probe per changed node per level (about ten
// cache-missing probes per state at 18 parts), the flat set one probe and one key compare; its
// 4 * parts bytes per stored state are then no more than the tree's nodes. Exact for the same reason:
// equal keys mean equal leaf ids, hence equal parts.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "collmc/checker/state.h"
#include "state_codec.h"
#include "visited_set.h"

namespace collmc::checker {

class StateTree {
 public:
  // Stores `s`; returns true when it was not stored before. Between calls `s` should be one State
  // object changed only through its parts' accessors (Tracked notes the writes); any other state is
  // rebuilt in full, which is correct but costs O(parts).
  bool insert(State& s) {
    sync(s);
    if (flat_)
      insert_flat();
    else
      propagate();
    return new_root_;
  }

  // True when `s` is certainly stored: what lets the search skip a revisited state's enabled steps.
  // Only the flat set answers (a lookup there is one probe); a tree's lookup costs as much as an insert,
  // so with more than kFlatParts parts this answers false without looking. The parts' encodings are
  // brought up to date as insert does, so an insert of the same state right after costs little.
  bool known_stored(State& s) {
    if (part_count(s) > kFlatParts) return false;
    sync(s);
    if (dirty_.empty() && key_stored_) return true;
    dirty_.clear();  // key_stored_ now speaks for the current key
    key_stored_ = flat_->contains(levels_[0].data());
    return key_stored_;
  }

  size_t size() const { return stored_; }
  size_t parts() const { return leaves_.size(); }
  uint64_t memory_bytes() const {
    uint64_t bytes = leaves_.memory_bytes() + (flat_ ? flat_->memory_bytes() : 0);
    for (const auto& level : nodes_)
      bytes += level.capacity() * (sizeof(uint64_t) + sizeof(uint32_t) + 1);  // slot and control byte
    for (const auto& level : levels_) bytes += level.capacity() * sizeof(uint32_t);
    return bytes;
  }

 private:
  static constexpr uint32_t kNone = Tracked<int>::kNoId;
  static constexpr size_t kFlatParts = 32;

  static size_t part_count(const State& s) { return s.ranks.size() + s.comms.size() + s.store.size(); }

  template <class T, class Encode>
  uint32_t leaf(Tracked<T>& part, size_t i, Encode&& encode) {
    uint32_t id = part.id(i);
    if (id == kNone) {
      buf_.clear();
      encode(i);
      id = leaves_.insert(buf_).first;
      part.set_id(i, id);
    }
    return id;
  }

  // Brings the leaf ids of levels_[0] up to date with `s` (dirty_: the level-1 nodes above changed
  // leaves; for the flat set, non-empty when the key changed) and clears `s`'s change notes.
  void sync(State& s) {
    const size_t n = part_count(s);
    const bool full = bound_ != &s || s.ranks.all_changed() || s.comms.all_changed() || s.store.all_changed();
    if (full) {
      if (!levels_.empty() && n != levels_[0].size())
        throw std::logic_error("visited set: states of different shapes in one search");
      bound_ = &s;
      build(s, n);
    } else {
      dirty_.clear();
      update_part(s.ranks, 0, [&](size_t i) { encode_rank(s.ranks.values()[i], buf_); });
      update_part(s.comms, s.ranks.size(), [&](size_t i) { encode_comm(s.comms.values()[i], buf_); });
      update_part(s.store, s.ranks.size() + s.comms.size(),
                  [&](size_t i) { encode_store_key(s.store.values()[i], buf_); });
    }
    s.ranks.clear_changed();
    s.comms.clear_changed();
    s.store.clear_changed();
  }

  template <class T, class Encode>
  void update_part(Tracked<T>& part, size_t offset, Encode&& encode) {
    for (uint32_t i : part.changed()) {
      const uint32_t id = leaf(part, i, encode);
      uint32_t& at = levels_[0][offset + i];
      if (at == id) continue;
      at = id;
      dirty_.push_back(static_cast<uint32_t>(offset + i) >> 1);
    }
  }

  void build(State& s, size_t n) {
    levels_.assign(1, std::vector<uint32_t>(n));
    for (size_t i = 0; i < s.ranks.size(); ++i)
      levels_[0][i] = leaf(s.ranks, i, [&](size_t k) { encode_rank(s.ranks.values()[k], buf_); });
    for (size_t i = 0; i < s.comms.size(); ++i)
      levels_[0][s.ranks.size() + i] = leaf(s.comms, i, [&](size_t k) { encode_comm(s.comms.values()[k], buf_); });
    for (size_t i = 0; i < s.store.size(); ++i)
      levels_[0][s.ranks.size() + s.comms.size() + i] =
          leaf(s.store, i, [&](size_t k) { encode_store_key(s.store.values()[k], buf_); });
    if (n <= kFlatParts) {
      if (!flat_) flat_ = std::make_unique<FixedWidthSet>(n);
      dirty_.assign(1, 0);
      key_stored_ = false;
      return;
    }
    // Every level halves the one below, down to one node (at least one level of nodes).
    size_t width = n;
    do {
      width = (width + 1) / 2;
      levels_.emplace_back(width, kNone);
    } while (width > 1);
    if (nodes_.size() < levels_.size()) nodes_.resize(levels_.size());
    dirty_.clear();
    for (size_t j = 0; j < levels_[1].size(); ++j) dirty_.push_back(static_cast<uint32_t>(j));
  }

  // The flat set's insert: the leaf ids are the key (dirty_ empty: the same key as the last one
  // stored or looked up, and key_stored_ says which).
  void insert_flat() {
    new_root_ = !(dirty_.empty() && key_stored_) && flat_->insert(levels_[0].data());
    key_stored_ = true;
    if (new_root_) ++stored_;
  }

  // Recomputes the nodes above the changed children, level by level (dirty_: indices at level 1).
  void propagate() {
    new_root_ = false;
    if (dirty_.empty()) return;  // the same parts as the last state stored
    for (size_t level = 1; level < levels_.size(); ++level) {
      std::sort(dirty_.begin(), dirty_.end());
      dirty_.erase(std::unique(dirty_.begin(), dirty_.end()), dirty_.end());
      const auto& below = levels_[level - 1];
      auto& here = levels_[level];
      auto& table = nodes_[level];
      next_.clear();
      for (uint32_t j : dirty_) {
        const size_t left = 2 * static_cast<size_t>(j);
        const uint32_t a = below[left];
        const uint32_t b = left + 1 < below.size() ? below[left + 1] : kNone;
        const uint64_t key = (static_cast<uint64_t>(a) << 32) | b;
        auto [it, inserted] = table.try_emplace(key, static_cast<uint32_t>(table.size()));
        if (level + 1 == levels_.size()) new_root_ = inserted;
        if (here[j] == it->second) continue;
        here[j] = it->second;
        next_.push_back(j >> 1);
      }
      dirty_.swap(next_);
      if (dirty_.empty()) break;  // nothing above changed
    }
    if (new_root_) ++stored_;
  }

  VisitedSet leaves_;
  std::unique_ptr<FixedWidthSet> flat_;        // set when the states have at most kFlatParts parts
  std::vector<std::vector<uint32_t>> levels_;  // [0]: the current state's leaf ids; then node ids; last: root
  std::vector<absl::flat_hash_map<uint64_t, uint32_t>> nodes_;  // [level]: (left, right) -> node id
  const State* bound_ = nullptr;
  std::string buf_;
  std::vector<uint32_t> dirty_, next_;
  bool new_root_ = false;
  bool key_stored_ = false;  // flat set: levels_[0] as it stands is stored
  size_t stored_ = 0;
};

}  // namespace collmc::checker
