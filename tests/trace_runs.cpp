// Random recorded runs in every source's files, and the trimmed-versus-full comparison (trace_runs.h).
#include "trace_runs.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include "../bench/fr_pickler.h"
#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/world.h"
#include "collmc/traces/import.h"
#include "collmc/traces/trace.h"

namespace collmc::testing {
namespace {

namespace fs = std::filesystem;

// --- the run, whatever records it --------------------------------------------------------------------

enum class Act : uint8_t {
  Init,
  Split,
  Collective,
  Alloc,
  Register,
  Deregister,
  Free,
  SyncDevice,
  Destroy,
  Abort,
  Shrink
};

struct OpName {
  const char* nccl;  // ncclAllReduce
  const char* log;   // AllReduce
  const char* fr;    // all_reduce
  const char* mpi;   // MPI_Allreduce
  bool reduces, rooted;
};
constexpr OpName kOps[] = {
    {"ncclAllReduce", "AllReduce", "all_reduce", "MPI_Allreduce", true, false},
    {"ncclAllGather", "AllGather", "all_gather", "MPI_Allgather", false, false},
    {"ncclReduceScatter", "ReduceScatter", "reduce_scatter", "MPI_Reduce_scatter_block", true, false},
    {"ncclBroadcast", "Broadcast", "broadcast", "MPI_Bcast", false, true},
};
constexpr int kNumOps = 4;

struct RankCall {
  Act act = Act::Collective;
  int comm = -1;
  int child = -1;  // split: the comm this rank joins
  int color = 0, split_index = 0;
  int op = 0;
  uint64_t count = 0;
  int buffer = -1;  // -1: the plain cudaMalloc buffer; else an ncclMemAlloc buffer of this rank
  bool symmetric = true;
  bool completed = true;  // else entered and never returned (the last call of its rank)
};

struct RunComm {
  std::vector<int> members;  // world ranks, ascending
  int parent = -1;
  int split_index = 0;  // its split's number on the parent (from 0)
  int color = 0;
  bool gone = false;  // destroyed or aborted
  int splits = 0;     // splits made on it so far
};

struct Run {
  int world = 2;
  bool mpi = false;
  std::vector<RunComm> comms;
  std::vector<std::vector<RankCall>> ranks;
  std::string story;
};

// What a source sees of a run shapes which rounds are worth making.
struct Sees {
  bool registrations = false, syncs = false, teardown = false, shrink = false;
};

Sees sees_of(RunSource s) {
  Sees v;
  if (s == RunSource::Recorder) v = {true, true, true, true};
  if (s == RunSource::NcclLog) v.teardown = true;
  return v;
}

class RunMaker {
 public:
  RunMaker(RunSource source, uint64_t seed) : rng_(seed), sees_(sees_of(source)) {
    run_.mpi = source == RunSource::MpiRecorder;
  }

  Run make() {
    run_.world = 2 + static_cast<int>(rng_() % 3);
    run_.ranks.resize(static_cast<size_t>(run_.world));
    alive_.assign(static_cast<size_t>(run_.world), true);
    allocated_.assign(static_cast<size_t>(run_.world), {});
    registered_.assign(static_cast<size_t>(run_.world), {});
    RunComm world;
    for (int r = 0; r < run_.world; ++r) world.members.push_back(r);
    run_.comms.push_back(world);
    round(0, [](int) { return RankCall{.act = Act::Init, .comm = 0}; });
    const int splits = static_cast<int>(rng_() % 4);
    for (int i = 0; i < splits; ++i) split();
    hang_ = static_cast<int>(rng_() % 4);  // 0 passes, 1 a skipped call, 2 crossed destroys, 3 a mismatch
    // At most one kind of bad outcome per run: the check reports the first it meets, and with a deadlock
    // and a violation (or two violations) both reachable which one that is follows the search's order.
    may_diverge_ = hang_ == 0 && pick(2) == 0;
    may_free_unsynced_ = hang_ == 0 && !may_diverge_;
    const int rounds = 2 + static_cast<int>(rng_() % 16);
    skip_at_ = hang_ == 1 ? static_cast<int>(rng_() % static_cast<uint64_t>(rounds)) : -1;
    for (int k = 0; k < rounds; ++k) body_round(k);
    if (hang_ == 2) crossed_destroys();
    if (hang_ == 3) mismatch();
    run_.story += hang_ == 0   ? "passes"
                  : hang_ == 1 ? "a rank skips a call"
                  : hang_ == 2 ? "crossed destroys"
                               : "mismatch";
    return run_;
  }

 private:
  uint64_t pick(uint64_t n) { return rng_() % n; }

  // Every live member of `comm` makes `make(r)`'s call; it completes when every member makes it.
  template <class Make>
  void round(int comm, Make make, int skipper = -1) {
    const auto& members = run_.comms[static_cast<size_t>(comm)].members;
    bool complete = skipper < 0;
    for (int m : members) complete = complete && alive_[static_cast<size_t>(m)];
    for (int m : members) {
      if (!alive_[static_cast<size_t>(m)]) continue;
      if (m == skipper) {
        alive_[static_cast<size_t>(m)] = false;  // its program ends here: it never makes the call
        continue;
      }
      RankCall c = make(m);
      c.completed = complete;
      run_.ranks[static_cast<size_t>(m)].push_back(c);
      if (!complete) alive_[static_cast<size_t>(m)] = false;
    }
  }

  // A live comm of two members or more, or -1.
  int some_comm(bool allow_world = true, size_t min_members = 1) {
    std::vector<int> ok;
    for (size_t c = allow_world ? 0 : 1; c < run_.comms.size(); ++c)
      if (!run_.comms[c].gone && run_.comms[c].members.size() >= min_members) ok.push_back(static_cast<int>(c));
    return ok.empty() ? -1 : ok[pick(ok.size())];
  }

  void split() {
    const int parent = some_comm(true, 2);
    if (parent < 0) return;
    const int index = run_.comms[static_cast<size_t>(parent)].splits++;
    const std::vector<int> members = run_.comms[static_cast<size_t>(parent)].members;  // (comms grows below)
    // One group of every member, or two by a random color each.
    const bool two = pick(2) == 0;
    std::vector<int> color_of;
    for (size_t i = 0; i < members.size(); ++i) color_of.push_back(two ? static_cast<int>(pick(2)) : 0);
    int child_of[2] = {-1, -1};
    for (int color = 0; color < 2; ++color) {
      RunComm child;
      child.parent = parent;
      child.split_index = index;
      child.color = 100 + color;
      for (size_t i = 0; i < members.size(); ++i)
        if (color_of[i] == color) child.members.push_back(members[i]);
      if (child.members.empty()) continue;
      child_of[color] = static_cast<int>(run_.comms.size());
      run_.comms.push_back(child);
    }
    round(parent, [&](int r) {
      const size_t i = static_cast<size_t>(std::find(members.begin(), members.end(), r) - members.begin());
      RankCall c{.act = Act::Split, .comm = parent};
      c.child = child_of[color_of[i]];
      c.color = 100 + color_of[i];
      c.split_index = index;
      return c;
    });
    run_.story += "split " + std::to_string(parent) + (two ? " in two; " : "; ");
  }

  void collective(int comm, int skipper = -1) {
    const int op = static_cast<int>(pick(run_.mpi ? 2 : kNumOps)) * (run_.mpi ? 3 : 1);  // MPI: all_reduce, bcast
    const uint64_t count = pick(2) == 0 ? 1024 : 65536;
    const bool registered = pick(3) != 0;
    round(
        comm,
        [&](int r) {
          RankCall c{.act = Act::Collective, .comm = comm, .op = op, .count = count};
          // A buffer registered on this comm (a symmetric kernel if every member's is symmetric), else plain.
          for (const auto& [b, on] : registered_[static_cast<size_t>(r)])
            if (registered && on == comm) c.buffer = b;
          return c;
        },
        skipper);
    run_.story += std::string(kOps[op].fr) + " " + std::to_string(comm) + (skipper >= 0 ? " (skipped)" : "") + "; ";
  }

  void body_round(int k) {
    if (k == skip_at_) {
      const int comm = some_comm(true, 2);
      if (comm >= 0) {
        const auto& members = run_.comms[static_cast<size_t>(comm)].members;
        collective(comm, members[pick(members.size())]);
        return;
      }
    }
    const uint64_t roll = pick(100);
    const int comm = some_comm();
    if (comm < 0) return;
    if (roll < 55 || (!sees_.registrations && !sees_.teardown)) return collective(comm);
    if (sees_.registrations && roll < 67) return alloc_and_register(comm);
    if (sees_.registrations && roll < 72) return deregister(comm);
    if (sees_.registrations && roll < 78) return free_buffers(!may_free_unsynced_ || pick(2) == 0);
    if (sees_.syncs && roll < 86) {
      round(0, [](int) { return RankCall{.act = Act::SyncDevice}; });
      run_.story += "sync; ";
      return;
    }
    if (sees_.teardown && roll < 94) return teardown(pick(4) == 0 ? Act::Abort : Act::Destroy);
    if (sees_.shrink && roll < 96) {
      round(comm, [&](int) { return RankCall{.act = Act::Shrink, .comm = comm}; });
      run_.story += "shrink " + std::to_string(comm) + "; ";
      return;
    }
    collective(comm);
  }

  void alloc_and_register(int comm) {
    const int buffer = static_cast<int>(pick(3));
    const bool disagree = may_diverge_ && pick(3) == 0;
    const auto& members = run_.comms[static_cast<size_t>(comm)].members;
    const int odd = members[pick(members.size())];
    for (int r : members) {
      if (!alive_[static_cast<size_t>(r)]) continue;
      auto& mine = allocated_[static_cast<size_t>(r)];
      if (std::find(mine.begin(), mine.end(), buffer) == mine.end()) {
        mine.push_back(buffer);
        run_.ranks[static_cast<size_t>(r)].push_back(RankCall{.act = Act::Alloc, .buffer = buffer});
      }
    }
    const bool symmetric = pick(4) != 0;
    round(comm, [&](int r) {
      registered_[static_cast<size_t>(r)].emplace_back(buffer, comm);
      return RankCall{.act = Act::Register,
                      .comm = comm,
                      .buffer = buffer,
                      .symmetric = disagree && r == odd ? !symmetric : symmetric};
    });
    run_.story += std::string("register ") + (symmetric ? "sym" : "default") + (disagree ? " (disagreeing)" : "") +
                  " on " + std::to_string(comm) + "; ";
  }

  void deregister(int comm) {
    int buffer = -1;
    for (const auto& [b, on] : registered_[0])
      if (on == comm) buffer = b;
    if (buffer < 0) return collective(comm);
    // NCCL's deregister is local: each member on its own.
    for (int r : run_.comms[static_cast<size_t>(comm)].members) {
      if (!alive_[static_cast<size_t>(r)]) continue;
      auto& regs = registered_[static_cast<size_t>(r)];
      auto it = std::find(regs.begin(), regs.end(), std::make_pair(buffer, comm));
      if (it == regs.end()) continue;
      regs.erase(it);
      run_.ranks[static_cast<size_t>(r)].push_back(RankCall{.act = Act::Deregister, .comm = comm, .buffer = buffer});
    }
    run_.story += "deregister on " + std::to_string(comm) + "; ";
  }

  // Every rank frees its buffers (their windows deregistered first), after a device sync or not.
  void free_buffers(bool sync_first) {
    for (int r = 0; r < run_.world; ++r) {
      if (!alive_[static_cast<size_t>(r)]) continue;
      auto& calls = run_.ranks[static_cast<size_t>(r)];
      if (sync_first) calls.push_back(RankCall{.act = Act::SyncDevice});
      for (const auto& [b, on] : registered_[static_cast<size_t>(r)])
        calls.push_back(RankCall{.act = Act::Deregister, .comm = on, .buffer = b});
      registered_[static_cast<size_t>(r)].clear();
      for (int b : allocated_[static_cast<size_t>(r)]) calls.push_back(RankCall{.act = Act::Free, .buffer = b});
      allocated_[static_cast<size_t>(r)].clear();
    }
    run_.story += sync_first ? "sync, free; " : "free; ";
  }

  void teardown(Act act) {
    const int comm = some_comm(false);
    if (comm < 0) return collective(0);
    round(comm, [&](int) { return RankCall{.act = act, .comm = comm}; });
    run_.comms[static_cast<size_t>(comm)].gone = true;
    for (auto& regs : registered_)
      regs.erase(std::remove_if(regs.begin(), regs.end(), [&](const auto& x) { return x.second == comm; }), regs.end());
    run_.story += std::string(act == Act::Abort ? "abort " : "destroy ") + std::to_string(comm) + "; ";
  }

  // Two comms of the same members, each destroyed first by half of them: the first destroy of each rank
  // never returns (warm comms hang so; the trace need not say why).
  void crossed_destroys() {
    if (!sees_.teardown) return;
    for (size_t a = 1; a < run_.comms.size(); ++a)
      for (size_t b = a + 1; b < run_.comms.size(); ++b) {
        const RunComm &x = run_.comms[a], &y = run_.comms[b];
        if (x.gone || y.gone || x.members != y.members || x.members.size() < 2) continue;
        for (size_t i = 0; i < x.members.size(); ++i) {
          const int r = x.members[i];
          if (!alive_[static_cast<size_t>(r)]) continue;
          const int first = static_cast<int>(i % 2 == 0 ? a : b);
          run_.ranks[static_cast<size_t>(r)].push_back(
              RankCall{.act = Act::Destroy, .comm = first, .completed = false});
          alive_[static_cast<size_t>(r)] = false;
        }
        run_.story += "crossed destroys of " + std::to_string(a) + " and " + std::to_string(b) + "; ";
        return;
      }
  }

  // The members of one collective pass different counts: each sits in it.
  void mismatch() {
    const int comm = some_comm(true, 2);
    if (comm < 0) return;
    const int odd = run_.comms[static_cast<size_t>(comm)].members.back();
    for (int r : run_.comms[static_cast<size_t>(comm)].members) {
      if (!alive_[static_cast<size_t>(r)]) continue;
      run_.ranks[static_cast<size_t>(r)].push_back(RankCall{
          .act = Act::Collective, .comm = comm, .op = 0, .count = r == odd ? 2048u : 1024u, .completed = false});
      alive_[static_cast<size_t>(r)] = false;
    }
    run_.story += "mismatch on " + std::to_string(comm) + "; ";
  }

  std::mt19937_64 rng_;
  Sees sees_;
  Run run_;
  std::vector<bool> alive_;
  std::vector<std::vector<int>> allocated_;
  std::vector<std::vector<std::pair<int, int>>> registered_;  // (buffer, comm)
  int hang_ = 0;
  int skip_at_ = -1;
  bool may_diverge_ = false, may_free_unsynced_ = false;
};

// --- writers ------------------------------------------------------------------------------------------

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

uint64_t comm_ptr(int comm, int rank) {
  return 0x10000000ull + static_cast<uint64_t>(comm) * 0x1000 + static_cast<uint64_t>(rank) * 0x10;
}
uint64_t buffer_ptr(int buffer) {
  return buffer < 0 ? 0x40fa00000ull : 0x7f0000000000ull + static_cast<uint64_t>(buffer) * 0x200000ull;
}
constexpr uint64_t kBufferBytes = 0x200000;

// One process's JSON lines, as libcollmc_record.so (and the MPI recorder) write them.
class LineWriter {
 public:
  LineWriter(const char* format, int rank, int world) : pid_(1000 + rank) {
    text_ = std::string(R"({"ev":"process","format":")") + format + R"(","version":1,"pid":)" + std::to_string(pid_) +
            R"(,"ppid":1,"host":"h","exe":"/usr/bin/python3","t_mono_ns":1,"t_wall_ns":2,)" + R"("env_rank":)" +
            std::to_string(rank) + R"(,"env_local_rank":)" + std::to_string(rank) + R"(,"env_world_size":)" +
            std::to_string(world) + "}\n";
  }
  void call(const std::string& name, const std::string& in, bool returned, const std::string& out = "") {
    ++seq_;
    line("enter", name, in);
    if (returned) line("return", name, std::string(R"("result":0)") + (out.empty() ? "" : "," + out));
  }
  const std::string& text() const { return text_; }

 private:
  void line(const char* ev, const std::string& name, const std::string& fields) {
    t_ += 1000;
    text_ += std::string(R"({"ev":")") + ev + R"(","seq":)" + std::to_string(seq_) + R"(,"tid":)" +
             std::to_string(pid_) + R"(,"t_mono_ns":)" + std::to_string(t_) + R"(,"t_wall_ns":)" +
             std::to_string(t_ + 1000000) + R"(,"call":")" + name + "\"" + (fields.empty() ? "" : "," + fields) + "}\n";
  }
  std::string text_;
  int pid_;
  int seq_ = 0;
  uint64_t t_ = 1000000;
};

int comm_rank(const Run& run, int comm, int rank) {
  const auto& m = run.comms[static_cast<size_t>(comm)].members;
  return static_cast<int>(std::find(m.begin(), m.end(), rank) - m.begin());
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

std::vector<std::pair<std::string, std::string>> write_recorder(const Run& run) {
  std::vector<std::pair<std::string, std::string>> files;
  for (int r = 0; r < run.world; ++r) {
    LineWriter w("collmc-recorder", r, run.world);
    w.call("cudaMalloc", R"("size":2097152)", true, R"("ptr":)" + quoted(hex(buffer_ptr(-1))));
    int window = 0;
    std::vector<std::pair<std::pair<int, int>, int>> windows;  // ((comm, buffer), handle)
    for (const RankCall& c : run.ranks[static_cast<size_t>(r)]) {
      const std::string comm = c.comm >= 0 ? R"("comm":)" + quoted(hex(comm_ptr(c.comm, r))) : "";
      const size_t n = c.comm >= 0 ? run.comms[static_cast<size_t>(c.comm)].members.size() : 0;
      switch (c.act) {
        case Act::Init:
          w.call("ncclCommInitRankConfig",
                 R"("uid":"0x5eed","rank":)" + std::to_string(r) + R"(,"nranks":)" + std::to_string(n) +
                     R"(,"blocking":1)",
                 c.completed, comm);
          break;
        case Act::Split: {
          const auto& child = run.comms[static_cast<size_t>(c.child)];
          w.call(
              "ncclCommSplit",
              comm + R"(,"color":)" + std::to_string(c.color) + R"(,"key":)" + std::to_string(r) + R"(,"blocking":1)",
              c.completed,
              R"("newcomm":)" + quoted(hex(comm_ptr(c.child, r))) + R"(,"rank":)" +
                  std::to_string(comm_rank(run, c.child, r)) + R"(,"nranks":)" + std::to_string(child.members.size()));
          break;
        }
        case Act::Collective: {
          const OpName& op = kOps[c.op];
          std::string in = comm + R"(,"sendbuff":)" + quoted(hex(buffer_ptr(c.buffer))) + R"(,"recvbuff":)" +
                           quoted(hex(buffer_ptr(c.buffer))) + R"(,"count":)" + std::to_string(c.count) +
                           R"(,"dtype":"float32")";
          if (op.reduces) in += R"(,"op":"sum")";
          if (op.rooted) in += R"(,"root":0)";
          w.call(op.nccl, in + R"(,"stream":"0x0")", c.completed);
          break;
        }
        case Act::Alloc:
          w.call("ncclMemAlloc", R"("size":)" + std::to_string(kBufferBytes), c.completed,
                 R"("ptr":)" + quoted(hex(buffer_ptr(c.buffer))));
          break;
        case Act::Register: {
          const int handle = 0x9000 + window++;
          windows.push_back({{c.comm, c.buffer}, handle});
          w.call("ncclCommWindowRegister",
                 comm + R"(,"buff":)" + quoted(hex(buffer_ptr(c.buffer))) + R"(,"size":)" +
                     std::to_string(kBufferBytes) + R"(,"flags":)" + (c.symmetric ? "1" : "0"),
                 c.completed, R"("win":)" + quoted(hex(static_cast<uint64_t>(handle))));
          break;
        }
        case Act::Deregister: {
          int handle = 0;
          for (auto it = windows.rbegin(); it != windows.rend(); ++it)
            if (it->first == std::make_pair(c.comm, c.buffer)) {
              handle = it->second;
              windows.erase(std::next(it).base());
              break;
            }
          w.call("ncclCommWindowDeregister", comm + R"(,"win":)" + quoted(hex(static_cast<uint64_t>(handle))),
                 c.completed);
          break;
        }
        case Act::Free:
          w.call("ncclMemFree", R"("ptr":)" + quoted(hex(buffer_ptr(c.buffer))), c.completed);
          break;
        case Act::SyncDevice:
          w.call("cudaDeviceSynchronize", "", c.completed);
          break;
        case Act::Destroy:
          w.call("ncclCommDestroy", comm, c.completed);
          break;
        case Act::Abort:
          w.call("ncclCommAbort", comm, c.completed);
          break;
        case Act::Shrink:
          w.call("ncclCommShrink", comm + R"(,"exclude_count":1,"flags":0)", c.completed,
                 R"("newcomm":)" + quoted(hex(comm_ptr(c.comm, r) + 0x8)) + R"(,"rank":0,"nranks":1)");
          break;
      }
    }
    files.emplace_back("collmc-trace.h." + std::to_string(1000 + r) + ".jsonl", w.text());
  }
  return files;
}

std::vector<std::pair<std::string, std::string>> write_mpi(const Run& run) {
  std::vector<std::pair<std::string, std::string>> files;
  for (int r = 0; r < run.world; ++r) {
    LineWriter w("collmc-mpi-recorder", r, run.world);
    auto handle = [&](int comm) { return comm == 0 ? std::string("0x10") : hex(0x100 + static_cast<uint64_t>(comm)); };
    for (const RankCall& c : run.ranks[static_cast<size_t>(r)]) {
      const std::string comm = c.comm >= 0 ? R"("comm":)" + quoted(handle(c.comm)) : "";
      switch (c.act) {
        case Act::Init:
          w.call("MPI_Init", "", c.completed,
                 R"("world_rank":)" + std::to_string(r) + R"(,"world_size":)" + std::to_string(run.world) +
                     R"(,"world":"0x10","self":"0x20","comm_null":"0x30","tag_ub":32767)");
          break;
        case Act::Split:
          w.call("MPI_Comm_split",
                 comm + R"(,"color":)" + std::to_string(c.color) + R"(,"key":)" + std::to_string(r) +
                     R"(,"invalid_color":0)",
                 c.completed,
                 R"("newcomm":)" + quoted(handle(c.child)) + R"(,"rank":)" +
                     std::to_string(comm_rank(run, c.child, r)) + R"(,"size":)" +
                     std::to_string(run.comms[static_cast<size_t>(c.child)].members.size()));
          break;
        case Act::Collective: {
          const OpName& op = kOps[c.op];
          std::string in = comm + R"(,"count":)" + std::to_string(c.count) + R"(,"dtype":"MPI_INT")";
          if (op.reduces) in += R"(,"op":"sum")";
          if (op.rooted) in += R"(,"root":0)";
          w.call(op.mpi, in, c.completed);
          break;
        }
        default:
          break;
      }
    }
    if (std::all_of(run.ranks[static_cast<size_t>(r)].begin(), run.ranks[static_cast<size_t>(r)].end(),
                    [](const RankCall& c) { return c.completed; }))
      w.call("MPI_Finalize", "", true);
    files.emplace_back("collmc-trace.h." + std::to_string(1000 + r) + ".jsonl", w.text());
  }
  return files;
}

// The collectives a Flight Recorder dump holds: the torch process group of each comm (pg name = its index).
struct FrEntry {
  int comm, op, seq;
  uint64_t count;
  bool completed;
};

std::vector<FrEntry> fr_entries(const Run& run, int r) {
  std::vector<FrEntry> out;
  std::vector<int> seq(run.comms.size(), 0);
  for (const RankCall& c : run.ranks[static_cast<size_t>(r)])
    if (c.act == Act::Collective)
      out.push_back({c.comm, c.op, ++seq[static_cast<size_t>(c.comm)], c.count, c.completed});
  return out;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string s = "[";
  for (size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s + "]";
}

std::string pg_desc(int comm) { return comm == 0 ? "default_pg" : "g" + std::to_string(comm); }

std::vector<std::pair<std::string, std::string>> write_fr_json(const Run& run) {
  std::vector<std::pair<std::string, std::string>> files;
  for (int r = 0; r < run.world; ++r) {
    std::string out = R"({"version":"2.10","comm_lib_version":"2.27.3","pg_config":{)";
    for (size_t c = 0; c < run.comms.size(); ++c)
      out += (c ? ",\"" : "\"") + std::to_string(c) + R"(":{"name":")" + std::to_string(c) + R"(","desc":")" +
             pg_desc(static_cast<int>(c)) + R"(","ranks":")" + ranks_text(run.comms[c].members) + "\"}";
    out += R"(},"pg_status":{},"nccl_comm_state":{},"entries":[)";
    const auto entries = fr_entries(run, r);
    for (size_t i = 0; i < entries.size(); ++i) {
      const FrEntry& e = entries[i];
      const std::string pg = std::to_string(e.comm);
      out += (i ? "," : "") + std::string(R"({"record_id":)") + std::to_string(i) + R"(,"pg_id":)" + pg +
             R"(,"process_group":[")" + pg + R"(",")" + pg_desc(e.comm) + R"("],"collective_seq_id":)" +
             std::to_string(e.seq) + R"(,"p2p_seq_id":0,"op_id":)" + std::to_string(e.seq) +
             R"(,"profiling_name":"nccl:)" + kOps[e.op].fr + R"(","time_created_ns":)" +
             std::to_string(1000000 + i * 1000) + R"(,"input_sizes":[[)" + std::to_string(e.count) +
             R"(]],"input_dtypes":["Float"],"output_sizes":[[)" + std::to_string(e.count) +
             R"(]],"output_dtypes":["Float"],"state":")" + (e.completed ? "completed" : "started") +
             R"(","time_discovered_started_ns":0,"time_discovered_completed_ns":0,"retired":)" +
             (e.completed ? "true" : "false") +
             R"(,"timeout_ms":600000,"is_p2p":false,"thread_id":"1","thread_name":"python3"})";
    }
    out += "]}";
    files.emplace_back("rank_" + std::to_string(r) + ".json", out);
  }
  return files;
}

std::vector<std::pair<std::string, std::string>> write_fr_pickle(const Run& run) {
  std::vector<std::pair<std::string, std::string>> files;
  for (int r = 0; r < run.world; ++r) {
    std::string out;
    bench::Pickler p(out);
    p.dict_start();
    p.str("version");
    p.str("2.10");
    p.str("pg_config");
    p.dict_start();
    for (size_t c = 0; c < run.comms.size(); ++c) {
      p.str(std::to_string(c));
      p.dict_start();
      p.str("name");
      p.str(std::to_string(c));
      p.str("desc");
      p.str(pg_desc(static_cast<int>(c)));
      p.str("ranks");
      p.str(ranks_text(run.comms[c].members));
      p.dict_end();
    }
    p.dict_end();
    p.str("comm_lib_version");
    p.str("2.27.3");
    p.str("entries");
    p.list_start();
    const auto entries = fr_entries(run, r);
    for (size_t i = 0; i < entries.size(); ++i) {
      const FrEntry& e = entries[i];
      p.dict_start();
      p.str("record_id");
      p.integer(static_cast<int64_t>(i));
      p.str("pg_id");
      p.integer(e.comm);
      p.str("process_group");
      p.str(std::to_string(e.comm));
      p.str(pg_desc(e.comm));
      p.tuple2();
      p.str("thread_name");
      p.str("python3");
      p.str("thread_id");
      p.str("1");
      p.str("collective_seq_id");
      p.integer(e.seq);
      p.str("p2p_seq_id");
      p.integer(0);
      p.str("op_id");
      p.integer(e.seq);
      p.str("profiling_name");
      p.str(std::string("nccl:") + kOps[e.op].fr);
      p.str("time_created_ns");
      p.integer(static_cast<int64_t>(1000000 + i * 1000));
      for (const char* key : {"input_sizes", "input_dtypes", "output_sizes", "output_dtypes"}) {
        p.str(key);
        p.list_start();
        if (std::string(key).find("sizes") != std::string::npos) {
          p.list_start();
          p.integer(static_cast<int64_t>(e.count));
          p.list_end();
        } else {
          p.str("Float");
        }
        p.list_end();
      }
      p.str("state");
      p.str(e.completed ? "completed" : "started");
      p.str("retired");
      p.boolean(e.completed);
      p.str("timeout_ms");
      p.integer(600000);
      p.str("is_p2p");
      p.boolean(false);
      p.dict_end();
    }
    p.list_end();
    p.dict_end();
    p.memoise_top();
    p.stop();
    files.emplace_back("rank_" + std::to_string(r) + ".pkl", out);
  }
  return files;
}

std::vector<std::pair<std::string, std::string>> write_nccl_logs(const Run& run) {
  std::vector<std::pair<std::string, std::string>> files;
  for (int r = 0; r < run.world; ++r) {
    const std::string pre =
        "h:" + std::to_string(1000 + r) + ":" + std::to_string(1000 + r) + " [" + std::to_string(r) + "] NCCL INFO ";
    std::string out = pre + "NCCL version 2.27.3+cuda12.9\n";
    std::vector<uint64_t> op_count(run.comms.size(), 0);
    for (const RankCall& c : run.ranks[static_cast<size_t>(r)]) {
      const size_t n = c.comm >= 0 ? run.comms[static_cast<size_t>(c.comm)].members.size() : 0;
      const std::string dev = " cudaDev " + std::to_string(r) + " nvmlDev " + std::to_string(r) + " busId 1000";
      switch (c.act) {
        case Act::Init: {
          const std::string head = pre + "ncclCommInitRankConfig comm " + hex(comm_ptr(0, r)) + " rank " +
                                   std::to_string(r) + " nranks " + std::to_string(n) + dev + " commId 0x5eed";
          out += head + " - Init START\n";
          if (c.completed) out += head + " - Init COMPLETE\n";
          break;
        }
        case Act::Split: {
          const auto& child = run.comms[static_cast<size_t>(c.child)];
          const std::string head = pre + "ncclCommSplit comm " + hex(comm_ptr(c.child, r)) + " rank " +
                                   std::to_string(comm_rank(run, c.child, r)) + " nranks " +
                                   std::to_string(child.members.size()) + dev + " parent " + hex(comm_ptr(c.comm, r)) +
                                   " splitCount " + std::to_string(c.split_index + 1) + " color " +
                                   std::to_string(c.color) + " key " + std::to_string(r);
          out += head + " - Init START\n";
          if (c.completed) out += head + " - Init COMPLETE\n";
          break;
        }
        case Act::Collective: {
          const OpName& op = kOps[c.op];
          out += pre + op.log + ": opCount " + hex(op_count[static_cast<size_t>(c.comm)]++).substr(2) +
                 " sendbuff 0x7e0000000000 recvbuff 0x7e0000000000 count " + std::to_string(c.count) +
                 " datatype 7 op 0 root 0 comm " + hex(comm_ptr(c.comm, r)) + " [nranks=" + std::to_string(n) +
                 "] stream (nil)\n";
          break;
        }
        case Act::Destroy:
        case Act::Abort:
          if (c.completed)
            out += pre + "comm " + hex(comm_ptr(c.comm, r)) + " rank " + std::to_string(comm_rank(run, c.comm, r)) +
                   " nranks " + std::to_string(n) + dev +
                   (c.act == Act::Destroy ? " - Destroy COMPLETE\n" : " - Abort COMPLETE\n");
          break;
        default:
          break;
      }
    }
    files.emplace_back("nccl." + std::to_string(r) + ".log", out);
  }
  return files;
}

}  // namespace

const char* run_source_name(RunSource source) {
  switch (source) {
    case RunSource::Recorder:
      return "recorder";
    case RunSource::FlightRecorderJson:
      return "flight-recorder-json";
    case RunSource::FlightRecorderPickle:
      return "flight-recorder-pickle";
    case RunSource::NcclLog:
      return "nccl-log";
    case RunSource::MpiRecorder:
      return "mpi-recorder";
  }
  return "?";
}

RecordedRun generate_recorded_run(RunSource source, uint64_t seed) {
  const Run run = RunMaker(source, seed).make();
  RecordedRun out;
  out.story = std::to_string(run.world) + " ranks: " + run.story;
  switch (source) {
    case RunSource::Recorder:
      out.files = write_recorder(run);
      break;
    case RunSource::FlightRecorderJson:
      out.files = write_fr_json(run);
      break;
    case RunSource::FlightRecorderPickle:
      out.files = write_fr_pickle(run);
      break;
    case RunSource::NcclLog:
      out.files = write_nccl_logs(run);
      break;
    case RunSource::MpiRecorder:
      out.files = write_mpi(run);
      break;
  }
  return out;
}

// `s` without its references to scenario lines, " (FILE:LINE)" (the two scenarios number their lines apart).
// By hand, not std::regex: GCC 12's -O2 with the sanitizers warns inside <regex> (maybe-uninitialized), and
// warnings are errors.
static std::string without_line_refs(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const size_t open = s[i] == ' ' && i + 1 < s.size() && s[i + 1] == '(' ? i + 1
                        : s[i] == '('                                      ? i
                                                                           : std::string::npos;
    if (open != std::string::npos) {
      size_t k = open + 1;
      while (k < s.size() && s[k] != '(' && s[k] != ')' && !std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      // [open+1, k) is FILE:LINE when it ends in ':' and digits and a ')' closes it.
      size_t digits = k;
      while (digits > open + 1 && std::isdigit(static_cast<unsigned char>(s[digits - 1]))) --digits;
      if (k < s.size() && s[k] == ')' && digits < k && digits > open + 1 && s[digits - 1] == ':') {
        i = k + 1;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

std::string check_outcome(const std::string& scenario) {
  const model::World world = model::resolve(model::parse_string(scenario, "imported.cmc"));
  checker::SearchOptions options;
  options.max_states = 2'000'000;
  options.progress = checker::SearchOptions::Progress::Never;
  const checker::CheckResult r = checker::check(world, options);
  auto clean = [](const std::string& s) { return without_line_refs(s); };
  std::string out = std::string(model::verdict_name(r.verdict)) + "\n";
  // A violation is the same call and message; where the other ranks stand when the search first meets it
  // depends on the schedule it took there (in the full history, ops the trimmed one has not may still run).
  // A violation: its verdict. Which of several violations the search meets first, and which member it names,
  // is the order it took (the full history has steps the trimmed one has not), not what the scenario allows.
  if (r.violation) return out;
  // Streams by name: the two scenarios may number them in another order (a stream only history used).
  for (const auto& b : r.blocked)
    out += "rank " + std::to_string(b.rank) + " thread " + std::to_string(b.thread) + " stream " +
           (b.stream >= 0 ? world.streams[static_cast<size_t>(b.stream)] : std::string("-")) + ": " + clean(b.reason) +
           "\n";
  for (const auto& e : r.wait_for.edges) out += "edge: " + e.label + "\n";
  for (const auto& x : r.wait_for.explanations) out += "cycle: " + clean(x) + "\n";
  return out;
}

TrimComparison compare_trim(const RecordedRun& run, const std::string& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) fs::remove_all(entry.path());
  for (const auto& [name, bytes] : run.files) {
    std::ofstream f(dir + "/" + name, std::ios::binary);
    f << bytes;
    if (!f) throw std::runtime_error("cannot write " + dir + "/" + name);
  }
  traces::ImportOptions full;
  full.full_history = true;
  full.threads = 1;
  traces::ImportOptions cut;
  cut.threads = 1;
  TrimComparison c;
  // A run the importer refuses, or a scenario the checker refuses, is a failure of the generator or of the
  // import: said, never taken for agreement.
  try {
    const traces::Trace trimmed = traces::import_traces({dir}, traces::TraceFormat::Auto, cut);
    c.trimmed = !trimmed.dropped.empty();
    c.trimmed_scenario = traces::emit_scenario(trimmed);
    c.full_scenario = traces::emit_scenario(traces::import_traces({dir}, traces::TraceFormat::Auto, full));
  } catch (const traces::TraceInputError& e) {
    c.full_outcome = "import refused: " + e.file() + ":" + std::to_string(e.line()) + ": " + e.message();
    return c;
  }
  try {
    c.full_outcome = check_outcome(c.full_scenario);
    c.trimmed_outcome = check_outcome(c.trimmed_scenario);
  } catch (const model::InputError& e) {
    c.full_outcome += std::string("scenario refused: ") + e.what();
    return c;
  }
  c.agree = c.full_outcome == c.trimmed_outcome;
  return c;
}

}  // namespace collmc::testing
