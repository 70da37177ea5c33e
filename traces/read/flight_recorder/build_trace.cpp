// PyTorch Flight Recorder dumps (one per rank, pickle or JSON, versions 2.2 to 2.10) into the trace
// model: process groups from `pg_config`, per-rank collectives in `record_id` order with their state.
// Field names follow torch/csrc/distributed/c10d/FlightRecorderDetail.hpp and the analyzer in
// torch/distributed/flight_recorder; docs/TRACES.md has the mapping. This file builds the Trace from the
// parsed dumps (dump.h); the passes that read a dump are beside it.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "dump.h"
#include "rank_list.h"
#include "trim_history.h"

namespace collmc::traces {
namespace {

using namespace flight_recorder;

struct Entry {
  int64_t record_id = 0;
  std::string comm;
  int64_t collective_seq = -1, p2p_seq = -1;
  OpInfo op;
  Call call;
};

class Builder {
 public:
  explicit Builder(bool full_history) : full_history_(full_history) {}

  Trace build(std::vector<ParsedDump>& dumps, const ConfigCache& cache) {
    trace_.format = "flight-recorder";
    assign_ranks(dumps);
    read_configs(dumps, cache);
    for (auto& d : dumps) read_entries(d);
    for (const auto& [who, count] : non_member_)
      trace_.findings.push_back("rank " + std::to_string(who.first) + " calls on pg " + who.second + " (" +
                                std::to_string(count) + " entr" + (count == 1 ? "y" : "ies") +
                                ") although its pg_config lists the group without it: a non-member call, or the "
                                "dump is not this rank's");
    report_stuck(dumps);
    align_dropped();
    if (!full_history_) trim();
    finish();
    return std::move(trace_);
  }

 private:
  // Ranks from the dumps' own fields first, then the file names' trailing numbers; never renumbered:
  // two dumps of one rank, or a dump whose rank nothing says (with other dumps beside it), is an error.
  void assign_ranks(std::vector<ParsedDump>& dumps) {
    std::map<int, const ParsedDump*> seen;
    for (auto& d : dumps) {
      if (d.by_fields) {
        d.rank = *d.by_fields;
        if (d.by_name && *d.by_name != *d.by_fields)
          trace_.notes.push_back(d.file + ": its fields say rank " + std::to_string(*d.by_fields) + ", its file name " +
                                 std::to_string(*d.by_name) + "; rank " + std::to_string(*d.by_fields) + " is used");
      } else if (d.by_name) {
        d.rank = *d.by_name;
      } else if (dumps.size() == 1) {
        d.rank = 0;
        trace_.notes.push_back(d.file + ": neither its fields nor its file name say its rank; read as rank 0");
      } else {
        bad(d.file,
            "cannot tell which rank this dump is: it has no `rank` field, its sends, recvs and process groups do not "
            "single one out, and its file name does not end in a rank number (name it like nccl_trace_rank_3)");
      }
      if (seen.count(d.rank))
        bad(d.file, "a second dump for rank " + std::to_string(d.rank) + " (the first is " + seen[d.rank]->file +
                        "): import one dump per rank, e.g. the pickles of one snapshot");
      seen[d.rank] = &d;
    }
  }

  void read_configs(const std::vector<ParsedDump>& dumps, const ConfigCache& cache) {
    for (const auto& d : dumps) {
      if (d.minor < kOldestMinor || d.minor > kNewestMinor)
        note_once("version " + std::to_string(d.major) + "." + std::to_string(d.minor) +
                  " is outside the versions this reader knows (2.2 to 2.10); read as the nearest");
      configs_[d.rank] = d.configs;
      world_ = std::max(world_, d.rank + 1);
    }
    // Communicators in the order the dumps first list them.
    std::set<const ConfigSet*> done;
    for (const auto& d : dumps) {
      const ConfigSet* set = d.configs;
      if (!done.insert(set).second) continue;
      for (const auto& [name, pg] : set->by_name) {
        if (comm_index_.count(pg->id)) continue;
        Communicator c;
        c.id = pg->id;
        c.label = comm_label(*pg);
        c.size = static_cast<int>(pg->ranks.size());
        for (size_t i = 0; i < pg->ranks.size(); ++i) c.members[pg->ranks[i]] = static_cast<int>(i);
        c.origin = CommOrigin::Preexisting;
        comm_index_[pg->id] = trace_.comms.size();
        trace_.comms.push_back(std::move(c));
        for (int r : pg->ranks) world_ = std::max(world_, r + 1);
      }
    }
    (void)cache;
    if (world_ > kMaxWorld) bad(dumps.front().file, "more than " + std::to_string(kMaxWorld) + " ranks");
  }

  const PgConfig* find_config(int rank, const std::string& name) const {
    if (auto it = configs_.find(rank); it != configs_.end())
      if (auto jt = it->second->by_name.find(name); jt != it->second->by_name.end()) return jt->second;
    // Another rank's dump may name the group (this one lost it): use it if this rank is a member.
    std::set<const ConfigSet*> tried;
    for (const auto& [r, cfgs] : configs_) {
      if (!tried.insert(cfgs).second) continue;
      if (auto jt = cfgs->by_name.find(name); jt != cfgs->by_name.end())
        if (std::find(jt->second->ranks.begin(), jt->second->ranks.end(), rank) != jt->second->ranks.end())
          return jt->second;
    }
    return nullptr;
  }

  // One rank's entries: process groups resolved, in record_id order.
  struct RankEntries {
    const ParsedDump* dump = nullptr;
    std::vector<Packed> list;
    std::vector<const PgConfig*> pg;  // by Slim::pg
    // By Slim::pg: its index in trace_.comms, and whether this rank is a member. Per entry, the comm is then
    // looked up by number: its id names every member (12 KB for a dp group of 16k ranks), and comparing ids
    // per entry was a quarter of a 16k-rank import.
    std::vector<uint32_t> comm;
    std::vector<bool> member;
    std::vector<bool> dropped;  // by position in `list`, after trim()
    Slim unpack(const Packed& p) const { return traces::unpack(dump->shapes, p); }
    Slim get(size_t i) const { return unpack(list[i]); }
  };

  void read_entries(ParsedDump& d) {
    RankTrace& rt = trace_.ranks[d.rank];
    rt.rank = d.rank;
    rt.source = d.file;
    RankEntries& re = entries_[d.rank];
    re.dump = &d;
    re.pg.resize(d.pg_names.size());
    re.comm.assign(d.pg_names.size(), UINT32_MAX);
    re.member.assign(d.pg_names.size(), false);
    for (size_t i = 0; i < d.pg_names.size(); ++i) {
      re.pg[i] = find_config(d.rank, d.pg_names[i]);
      if (!re.pg[i]) continue;
      re.comm[i] = static_cast<uint32_t>(comm_index_.at(re.pg[i]->id));
      re.member[i] = std::binary_search(member_sorted(re.pg[i]).begin(), member_sorted(re.pg[i]).end(), d.rank);
    }
    re.list = std::move(d.entries);
    for (size_t i = 0; i < re.list.size(); ++i) {
      const Slim e = re.get(i);
      const PgConfig* cfg = re.pg[e.pg];
      if (!cfg)
        bad(d.file, "entries[" + std::to_string(i) + "].process_group: '" + d.pg_names[e.pg] + "' is not in pg_config");
      if (!re.member[e.pg]) ++non_member_[{d.rank, cfg->name}];
      if (e.p2p_src >= 0) {
        auto n = static_cast<int>(cfg->ranks.size());
        if (e.p2p_src >= n || e.p2p_dst >= n)
          bad(d.file, "entries[" + std::to_string(i) + "].profiling_name \"" + d.profiling[e.name] +
                          "\": a group rank is outside " + comm_label(*cfg));
      }
    }
    std::sort(re.list.begin(), re.list.end(),
              [](const Packed& a, const Packed& b) { return a.record_id < b.record_id; });
    for (size_t i = 1; i < re.list.size(); ++i)
      if (re.list[i].record_id == re.list[i - 1].record_id)
        bad(d.file, "record_id " + std::to_string(re.list[i].record_id) + " appears twice");
    if (!re.list.empty() && re.list.front().record_id > 0) {
      dropped_[d.rank] = re.list.front().record_id;
      rt.notes.push_back("the ring buffer dropped the " + std::to_string(re.list.front().record_id) +
                         " oldest entries (record_id 0.." + std::to_string(re.list.front().record_id - 1) + ")");
    }
    if (re.list.empty()) rt.notes.push_back("the dump holds no entries");
  }

  const std::vector<int>& member_sorted(const PgConfig* cfg) {
    auto [it, fresh] = sorted_members_.try_emplace(cfg);
    if (fresh) {
      it->second = cfg->ranks;
      std::sort(it->second.begin(), it->second.end());
    }
    return it->second;
  }

  const PgConfig& pg_of(const RankEntries& re, const Slim& e) const { return *re.pg[e.pg]; }

  bool is_p2p(const Slim& e) const { return e.kind == CallKind::Send || e.kind == CallKind::Recv; }

  // "record_id 12, nccl:all_reduce #3"
  std::string origin_of(const RankEntries& re, const Slim& e) const {
    std::string o = "record_id " + std::to_string(e.record_id) + ", " + re.dump->profiling[e.name];
    if (e.collective_seq >= 0 && !is_p2p(e)) o += " #" + std::to_string(e.collective_seq);
    return o;
  }

  Entry make_entry(const RankEntries& re, const Slim& s) const {
    const PgConfig& cfg = pg_of(re, s);
    Entry out;
    out.record_id = s.record_id;
    out.comm = cfg.id;
    out.collective_seq = s.collective_seq;
    out.p2p_seq = s.p2p_seq;
    out.op.kind = s.kind;
    out.op.coalesced_marker = s.coalesced_marker;
    out.op.closes_batch = s.closes_batch;
    Call& c = out.call;
    c.kind = s.kind;
    c.state = s.state;
    c.comm = cfg.id;
    c.seq = s.record_id;
    c.buffer = "tensor";
    c.stream = "pg_" + cfg.name;
    c.origin = origin_of(re, s);
    c.detail = re.dump->profiling[s.name];
    c.time_ns = s.time_ns;
    if (s.has_count) c.count = s.count;
    c.dtype = kDtypes[s.dtype];
    if (s.p2p_src >= 0) {
      int peer_group = c.kind == CallKind::Send ? s.p2p_dst : s.p2p_src;
      c.peer = cfg.ranks[static_cast<size_t>(peer_group)];
    }
    return out;
  }

  // Evidence that a rank is stuck or faulted rather than merely behind: far more entries that never
  // completed than the other ranks (the GPU stopped finishing work), and a group status whose last
  // completed collective lags its peers' by more than one.
  void report_stuck(const std::vector<ParsedDump>& dumps) {
    std::map<int, size_t> open;
    std::map<int, std::string> oldest_open;
    for (const auto& [rank, re] : entries_) {
      size_t n = 0;
      for (const Packed& packed : re.list) {
        const Slim e = re.unpack(packed);
        if (e.state == CallState::Completed) continue;
        if (n++ == 0)
          oldest_open[rank] = origin_of(re, e) + " (" + (e.state == CallState::Started ? "started" : "scheduled") + ")";
      }
      open[rank] = n;
    }
    if (open.size() >= 2) {
      std::vector<size_t> counts;
      for (const auto& [rank, n] : open) counts.push_back(n);
      std::sort(counts.begin(), counts.end());
      const size_t median = counts[(counts.size() - 1) / 2];
      // The range over the other ranks, from the sorted counts (leaving one copy of n out).
      for (const auto& [rank, n] : open) {
        if (n < 10 || n < 2 * median + 5) continue;
        size_t lo = counts.front() == n ? counts[1] : counts.front();
        size_t hi = counts.back() == n ? counts[counts.size() - 2] : counts.back();
        trace_.findings.push_back("rank " + std::to_string(rank) + " looks stuck or faulted: " + std::to_string(n) +
                                  " entries never completed, against " +
                                  (lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi)) +
                                  " on the other ranks; the oldest is " + oldest_open[rank] +
                                  " (a GPU fault or a kernel that never finished stops every later entry)");
      }
    }
    std::map<std::string, std::map<int, int64_t>> completed;
    for (const auto& d : dumps)
      for (const auto& [pg, seq] : d.completed) completed[pg][d.rank] = seq;
    for (const auto& [pg, by_rank] : completed) {
      if (by_rank.size() < 2) continue;
      int64_t best = INT64_MIN;
      for (const auto& [rank, seq] : by_rank) best = std::max(best, seq);
      for (const auto& [rank, seq] : by_rank)
        if (best - seq >= 2)
          trace_.findings.push_back("rank " + std::to_string(rank) + " lags on pg " + pg + ": its last completed " +
                                    "collective is #" + std::to_string(seq) + ", another rank's #" +
                                    std::to_string(best) + " (" + std::to_string(best - seq) +
                                    " behind, from pg_status): it stopped making progress there");
    }
  }

  // A rank whose ring buffer dropped old entries starts later than its peers: leave out, on every
  // rank, the collectives of each group older than the oldest one every such rank still holds, so
  // the ranks' programs line up again.
  void align_dropped() {
    if (dropped_.empty()) return;
    std::vector<int> dropped_ranks;
    for (const auto& [rank, first] : dropped_) dropped_ranks.push_back(rank);
    std::map<uint32_t, int64_t> cut;  // by comm index
    for (const auto& [rank, first] : dropped_) {
      const RankEntries& re = entries_[rank];
      std::map<uint32_t, int64_t> oldest;
      for (const Packed& packed : re.list) {
        const Slim e = re.unpack(packed);
        if (e.collective_seq < 0 || is_p2p(e)) continue;
        auto [it, fresh] = oldest.emplace(re.comm[e.pg], e.collective_seq);
        if (!fresh) it->second = std::min(it->second, e.collective_seq);
      }
      for (const auto& [comm, seq] : oldest) cut[comm] = std::max(cut[comm], seq);
    }
    // What the lost collectives left behind (torch numbers a group's collectives from 1): the kept ones take
    // the dumps' slot numbers, on a comm that is warm (`history`, trim_history.h).
    for (const auto& [comm, seq] : cut)
      if (seq > 1) {
        trace_.comms[comm].dropped_collectives = static_cast<uint64_t>(seq - 1);
        trace_.comms[comm].history_connected = true;
      }
    std::map<uint32_t, size_t> removed;
    for (auto& [rank, rank_entries] : entries_) {
      auto& re = rank_entries;  // a lambda may not capture a structured binding (clang before C++20's fix)
      auto keep = std::remove_if(re.list.begin(), re.list.end(), [&](const Packed& packed) {
        const Slim e = re.unpack(packed);
        if (e.collective_seq < 0 || is_p2p(e)) return false;
        auto it = cut.find(re.comm[e.pg]);
        if (it == cut.end() || e.collective_seq >= it->second) return false;
        ++removed[it->first];
        return true;
      });
      re.list.erase(keep, re.list.end());
    }
    // The notes in the order of the comms' ids, as they always were.
    std::map<std::string, uint32_t> by_id;
    for (const auto& [comm, seq] : cut) by_id.emplace(trace_.comms[comm].id, comm);
    for (const auto& [id, comm] : by_id)
      if (removed[comm] > 0)
        trace_.notes.push_back("the collectives on " + label_of(id) + " before #" + std::to_string(cut[comm]) +
                               " are left out on every rank (" + std::to_string(removed[comm]) +
                               " entries): the ring buffer of " + rank_phrase(dropped_ranks) + " no longer holds them");
  }

  // Keep what the hang needs (trim_history.h): plans on the entries, before any Call is built.
  void trim() {
    TrimInput in;
    std::vector<RankEntries*> rows;
    std::map<int, uint32_t> row_of;
    for (auto& [rank, re] : entries_) {
      row_of[rank] = static_cast<uint32_t>(rows.size());
      rows.push_back(&re);
      std::vector<TrimItem> items(re.list.size());
      for (size_t i = 0; i < re.list.size(); ++i) {
        const Slim e = re.get(i);
        TrimItem& it = items[i];
        it.kind = static_cast<uint16_t>(e.kind);
        it.completed = e.state == CallState::Completed;
        if (e.coalesced_marker || e.closes_batch) {
          // A batch's entries (those just before it with its sequence numbers) are one launch.
          for (size_t k = i; k-- > 0;) {
            const Slim p = re.get(k);
            if (p.coalesced_marker || p.closes_batch || re.pg[p.pg] != re.pg[e.pg] ||
                p.collective_seq != e.collective_seq || p.p2p_seq != e.p2p_seq)
              break;
            items[k].in_group = true;
          }
          continue;
        }
        auto op = op_kind_of(e.kind);
        if (op && (model::is_collective(*op) || model::op_form(*op) == model::OpForm::Barrier) &&
            e.collective_seq >= 0) {
          it.collective = true;
          it.comm = re.comm[e.pg];
          // Matched by the group's own sequence number, and the size.
          it.shape = static_cast<uint64_t>(e.collective_seq) * 0x9e3779b97f4a7c15ull ^ (e.has_count ? e.count : 0);
        }
      }
      in.ranks.push_back(std::move(items));
    }
    fill_trim_members(trace_.comms, row_of, in);
    TrimPlan plan = plan_trim(in);
    for (size_t r = 0; r < rows.size(); ++r) rows[r]->dropped = std::move(plan.dropped[r]);
    std::vector<std::string> labels;
    for (const auto& c : trace_.comms) labels.push_back(c.label);
    record_trim(trace_, labels, plan, rows.size(), /*completion_seen=*/true);
  }

  std::string label_of(const std::string& id) const {
    auto it = comm_index_.find(id);
    return it == comm_index_.end() ? id : trace_.comms[it->second].label;
  }

  void finish() {
    trace_.world_size = std::max(world_, 1);
    std::vector<int> missing;
    for (int r = 0; r < trace_.world_size; ++r) {
      RankTrace& rt = trace_.ranks[r];
      rt.rank = r;
      auto found = entries_.find(r);
      if (found == entries_.end()) {
        rt.present = false;
        missing.push_back(r);
        continue;
      }
      RankEntries& re = found->second;
      std::vector<Entry> list;
      for (size_t i = 0; i < re.list.size(); ++i)
        if (re.dropped.empty() || !re.dropped[i]) list.push_back(make_entry(re, re.get(i)));
      std::vector<Packed>().swap(re.list);
      ThreadTrace t;
      t.name = "main";
      for (size_t i = 0; i < list.size(); ++i) {
        const Entry& e = list[i];
        if ((e.op.coalesced_marker || e.op.closes_batch) && wrap_coalesced(list, i, t.calls)) continue;
        if (e.op.coalesced_marker) {
          Call other = e.call;  // a batch end with no batch before it
          other.kind = CallKind::Other;
          t.calls.push_back(other);
          continue;
        }
        t.calls.push_back(e.call);
      }
      rt.threads.push_back(std::move(t));
    }
    if (!missing.empty())
      trace_.notes.push_back((missing.size() == 1 ? "rank " : "ranks ") + rank_list(missing) +
                             (missing.size() == 1 ? " has" : " have") +
                             " no Flight Recorder dump: an empty program here");
  }
  // "nccl:coalesced" closes a coalescing group: the entries just before it on the same group with the
  // same sequence numbers were issued together, as one ncclGroupStart/End.
  // Returns false (and adds nothing) when no entry of the batch comes before the marker.
  static bool wrap_coalesced(const std::vector<Entry>& list, size_t marker, std::vector<Call>& calls) {
    const Entry& m = list[marker];
    size_t n = 0;
    while (n < marker && n < calls.size()) {
      const Entry& prev = list[marker - 1 - n];
      if (prev.op.coalesced_marker || prev.op.closes_batch || prev.comm != m.comm ||
          prev.collective_seq != m.collective_seq || prev.p2p_seq != m.p2p_seq)
        break;
      ++n;
    }
    if (n == 0) return false;
    Call start;
    start.kind = CallKind::GroupStart;
    start.state = calls[calls.size() - n].state;
    start.origin = "coalesced group closed by record_id " + std::to_string(m.record_id);
    calls.insert(calls.end() - static_cast<std::ptrdiff_t>(n), start);
    Call end = start;
    end.kind = CallKind::GroupEnd;
    end.state = m.call.state;
    calls.push_back(end);
    return true;
  }

  void note_once(const std::string& note) {
    if (std::find(trace_.notes.begin(), trace_.notes.end(), note) == trace_.notes.end()) trace_.notes.push_back(note);
  }

  static std::string rank_phrase(const std::vector<int>& ranks) {
    return std::string(ranks.size() == 1 ? "rank " : "ranks ") + rank_list(ranks);
  }

  bool full_history_ = true;
  Trace trace_;
  int world_ = 0;
  std::map<std::pair<int, std::string>, size_t> non_member_;  // (rank, pg name) -> calls
  std::map<int, const ConfigSet*> configs_;
  std::map<std::string, size_t> comm_index_;
  std::map<int, RankEntries> entries_;
  std::map<int, int64_t> dropped_;
  std::map<const PgConfig*, std::vector<int>> sorted_members_;
};

}  // namespace

Trace read_flight_recorder(const std::vector<std::string>& files, bool full_history, unsigned threads) {
  if (files.empty()) throw TraceInputError("", 0, 0, 0, "no Flight Recorder dump given");
  ConfigCache cache;
  std::vector<ParsedDump> dumps = parse_all(files, {}, threads, cache);
  return Builder(full_history).build(dumps, cache);
}

Trace read_flight_recorder_buffer(const std::string& name, const std::string& bytes, bool full_history,
                                  bool tree_reader_only) {
  ConfigCache cache;
  std::vector<ParsedDump> dumps = parse_all({name}, {&bytes}, 1, cache, !tree_reader_only);
  return Builder(full_history).build(dumps, cache);
}

}  // namespace collmc::traces
