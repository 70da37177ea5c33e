// Synthetic traces of a hung data-parallel job, for `collmc trace import` benchmarks (docs/PERFORMANCE.md,
// "Importing a hung job"). Written in C++ because 16,384 ranks x 2,000 entries is about 25 GB of JSON.
//
// The job: W ranks in tensor-parallel groups of 8 consecutive ranks (pg desc "tp") and data-parallel groups
// across them (ranks with the same r mod 8, desc "dp"), every process group in every rank's pg_config as
// torch writes it. Each training iteration is an all_reduce on the rank's tp group, then a reduce_scatter and
// an all_gather on its dp group. The last rank never enters its last reduce_scatter: its dp peers wait in it
// (started), their later work stays queued (scheduled); the other ranks finish that iteration and wait in
// the next all_reduce, which needs a member of the stuck dp group.
//
//   collmc_gen_hung_job --format json|pickle|nccl-log|recorder --world W --entries E --out DIR [--jobs N]
//
// json, pickle: one Flight Recorder dump per rank (rank_R.json, rank_R.pkl; a ring buffer of E entries,
//   version 2.10). The JSON is what torch's dump_json writes (pg_status values as strings); the pickle is
//   what its C++ Pickler writes (protocol 2, every string memoised once and fetched with BINGET after,
//   dicts as EMPTY_DICT MARK ... SETITEMS, process_group a TUPLE2, pg_status values as ints, the dump's
//   dict memoised last), as in the torch-written fixtures of tests/fixtures/traces/gpu.
// nccl-log: one NCCL_DEBUG=INFO log per rank (nccl.R.log): the comms' init lines, then about E collective
//   lines, from the first.
// recorder: one libcollmc_record.so trace per rank (collmc-trace.nodeN.PID.jsonl): the world comm's init, the
//   tp and dp comms split from it, a buffer, then about E collectives (from the first) entered and returned, and the
//   cudaStreamSynchronize the rank waits in, entered and never returned.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "fr_pickler.h"

namespace {

using collmc::bench::Pickler;

constexpr int kTp = 8;
constexpr uint64_t kCount = 1u << 20;

struct Op {
  int record_id;
  const char* op;  // "all_reduce", ...
  bool on_tp;      // else dp
  int seq;         // the group's collective_seq_id
  const char* state;
};

// The rank's collectives: with `ring`, those its Flight Recorder ring buffer of `entries` holds (the oldest
// dropped); else all from the first (a log or a recorder trace keeps everything: the culprit's then begins
// with the same calls as its peers').
std::vector<Op> schedule(int world, int entries, int rank, bool ring = true) {
  const int culprit = world - 1;
  const bool stuck_dp = rank % kTp == culprit % kTp;
  const int h = std::max(1, (entries - 4 + 2) / 3);  // the iteration that hangs
  std::vector<Op> ops;
  for (int i = 0; i < h + 2; ++i) {
    ops.push_back({0, "all_reduce", true, i + 1, nullptr});
    ops.push_back({0, "reduce_scatter", false, 2 * i + 1, nullptr});
    ops.push_back({0, "all_gather", false, 2 * i + 2, nullptr});
  }
  ops.resize(3 * static_cast<size_t>(h) + 4);                       // iteration h, then the next all_reduce
  if (rank == culprit) ops.resize(3 * static_cast<size_t>(h) + 1);  // never enters the reduce_scatter of h
  for (size_t j = 0; j < ops.size(); ++j) {
    const auto k = static_cast<int>(j);
    ops[j].record_id = k;
    if (k < 3 * h + 1) {
      ops[j].state = "completed";
    } else if (stuck_dp) {
      ops[j].state = k == 3 * h + 1 ? "started" : "scheduled";
    } else {
      ops[j].state = k < 3 * h + 3 ? "completed" : "started";
    }
  }
  if (ring && ops.size() > static_cast<size_t>(entries)) ops.erase(ops.begin(), ops.end() - entries);
  return ops;
}

struct Group {
  std::string name, desc;
  std::vector<int> ranks;
  std::string ranks_text;  // "[0, 1, 2]", as torch writes it
};

// pg name -> group: 0 the default pg, then the tp groups, then the dp groups.
std::vector<Group> groups(int world) {
  std::vector<Group> pgs;
  auto add = [&](std::string desc, std::vector<int> ranks) {
    Group g;
    g.name = std::to_string(pgs.size());
    g.desc = std::move(desc);
    g.ranks = std::move(ranks);
    g.ranks_text = "[";
    for (size_t i = 0; i < g.ranks.size(); ++i) g.ranks_text += (i ? ", " : "") + std::to_string(g.ranks[i]);
    g.ranks_text += "]";
    pgs.push_back(std::move(g));
  };
  std::vector<int> all(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) all[static_cast<size_t>(r)] = r;
  add("default_pg", all);
  for (int t = 0; t < world / kTp; ++t) {
    std::vector<int> ranks;
    for (int r = t * kTp; r < t * kTp + kTp; ++r) ranks.push_back(r);
    add("tp", ranks);
  }
  for (int d = 0; d < kTp; ++d) {
    std::vector<int> ranks;
    for (int r = d; r < world; r += kTp) ranks.push_back(r);
    add("dp", ranks);
  }
  return pgs;
}

std::string tp_pg(int rank) { return std::to_string(1 + rank / kTp); }
std::string dp_pg(int world, int rank) { return std::to_string(1 + world / kTp + rank % kTp); }

// Appending numbers without iostreams (the generator writes gigabytes).
void num(std::string& out, int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
void unum(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
void hex(std::string& out, uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v, 16);
  out += "0x";
  out.append(buf, r.ptr);
}

struct Status {
  std::string pg;
  int enqueued = -1, started = -1, completed = -1;
};

// pg_status as torch fills it, in the order the groups first appear among the entries.
std::vector<Status> pg_status(const std::vector<Op>& ops, int world, int rank) {
  std::vector<Status> out;
  for (const Op& o : ops) {
    std::string pg = o.on_tp ? tp_pg(rank) : dp_pg(world, rank);
    auto it = std::find_if(out.begin(), out.end(), [&](const Status& s) { return s.pg == pg; });
    if (it == out.end()) {
      out.push_back({pg});
      it = out.end() - 1;
    }
    it->enqueued = o.seq;
    if (std::strcmp(o.state, "scheduled") != 0) it->started = o.seq;
    if (std::strcmp(o.state, "completed") == 0) it->completed = o.seq;
  }
  return out;
}

constexpr uint64_t kTime0 = 1795987858622245035ull;

// --- Flight Recorder JSON (torch's dump_json; the key order of gen_hung_job.py) ---------------------------

std::string json_pg_config(const std::vector<Group>& pgs) {
  std::string out = "{";
  for (size_t i = 0; i < pgs.size(); ++i) {
    const Group& g = pgs[i];
    out += (i ? ",\"" : "\"") + g.name + "\":{\"name\":\"" + g.name + "\",\"desc\":\"" + g.desc + "\",\"ranks\":\"" +
           g.ranks_text + "\"}";
  }
  return out + "}";
}

void write_json(std::string& out, int world, int entries, int rank, const std::string& pg_config) {
  const auto ops = schedule(world, entries, rank);
  out += "{\"version\":\"2.10\",\"comm_lib_version\":\"2.27.3\",\"pg_config\":";
  out += pg_config;
  out += ",\"pg_status\":{";
  bool first = true;
  for (const Status& s : pg_status(ops, world, rank)) {
    out += first ? "\"" : ",\"";
    first = false;
    out += s.pg + "\":{\"last_enqueued_collective\":\"" + std::to_string(s.enqueued) +
           "\",\"last_started_collective\":\"" + std::to_string(s.started) + "\",\"last_completed_collective\":\"" +
           std::to_string(s.completed) + "\"}";
  }
  out += "},\"nccl_comm_state\":{},\"entries\":[";
  const std::string tp = tp_pg(rank), dp = dp_pg(world, rank);
  for (size_t i = 0; i < ops.size(); ++i) {
    const Op& o = ops[i];
    const std::string& pg = o.on_tp ? tp : dp;
    out += i ? ",{\"record_id\":" : "{\"record_id\":";
    num(out, o.record_id);
    out += ",\"pg_id\":" + pg + ",\"process_group\":[\"" + pg + "\",\"" + (o.on_tp ? "tp" : "dp") +
           "\"],\"collective_seq_id\":";
    num(out, o.seq);
    out += ",\"p2p_seq_id\":0,\"op_id\":";
    num(out, o.seq);
    out += ",\"profiling_name\":\"nccl:";
    out += o.op;
    out += "\",\"time_created_ns\":";
    unum(out, kTime0 + static_cast<uint64_t>(o.record_id) * 1000);
    out += ",\"input_sizes\":[[";
    unum(out, kCount);
    out += "]],\"input_dtypes\":[\"BFloat16\"],\"output_sizes\":[[";
    unum(out, kCount);
    out += "]],\"output_dtypes\":[\"BFloat16\"],\"state\":\"";
    out += o.state;
    out += "\",\"time_discovered_started_ns\":0,\"time_discovered_completed_ns\":0,\"retired\":";
    out += std::strcmp(o.state, "completed") == 0 ? "true" : "false";
    out += ",\"timeout_ms\":600000,\"is_p2p\":false,\"thread_id\":\"139913800578880\",\"thread_name\":\"python3\"}";
  }
  out += "]}";
}

// --- Flight Recorder pickle (torch::jit::Pickler, protocol 2: fr_pickler.h) ------------------------------

void write_pickle(std::string& out, int world, int entries, int rank, const std::vector<Group>& pgs) {
  const auto ops = schedule(world, entries, rank);
  Pickler p(out);
  p.dict_start();
  p.str("version");
  p.str("2.10");
  p.str("pg_config");
  p.dict_start();
  for (const Group& g : pgs) {
    p.str(g.name);
    p.dict_start();
    p.str("name");
    p.str(g.name);
    p.str("desc");
    p.str(g.desc);
    p.str("ranks");
    p.str(g.ranks_text);
    p.dict_end();
  }
  p.dict_end();
  p.str("comm_lib_version");
  p.str("2.27.3");
  p.str("pg_status");
  p.dict_start();
  for (const Status& s : pg_status(ops, world, rank)) {
    p.str(s.pg);
    p.dict_start();
    p.str("last_enqueued_collective");
    p.integer(s.enqueued);
    p.str("last_started_collective");
    p.integer(s.started);
    p.str("last_completed_collective");
    p.integer(s.completed);
    p.dict_end();
  }
  p.dict_end();
  p.str("entries");
  p.list_start();
  const std::string tp = tp_pg(rank), dp = dp_pg(world, rank);
  for (const Op& o : ops) {
    const std::string& pg = o.on_tp ? tp : dp;
    const bool completed = std::strcmp(o.state, "completed") == 0;
    p.dict_start();
    p.str("record_id");
    p.integer(o.record_id);
    p.str("pg_id");
    p.integer(std::stoi(pg));
    p.str("process_group");
    p.str(pg);
    p.str(o.on_tp ? "tp" : "dp");
    p.tuple2();
    p.str("thread_name");
    p.str("python3");
    p.str("thread_id");
    p.str("139913800578880");
    p.str("collective_seq_id");
    p.integer(o.seq);
    p.str("p2p_seq_id");
    p.integer(0);
    p.str("op_id");
    p.integer(o.seq);
    p.str("profiling_name");
    p.str(std::string("nccl:") + o.op);
    p.str("time_created_ns");
    p.integer(static_cast<int64_t>(kTime0 + static_cast<uint64_t>(o.record_id) * 1000));
    for (const char* key : {"input_sizes", "input_dtypes", "output_sizes", "output_dtypes"}) {
      p.str(key);
      p.list_start();
      if (std::strstr(key, "sizes")) {
        p.list_start();
        p.integer(kCount);
        p.list_end();
      } else {
        p.str("BFloat16");
      }
      p.list_end();
    }
    p.str("state");
    p.str(o.state);
    p.str("time_discovered_started_ns");
    p.none();
    p.str("time_discovered_completed_ns");
    p.none();
    p.str("retired");
    p.boolean(completed);
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
}

// --- NCCL INFO logs ---------------------------------------------------------------------------------------

struct Comm {
  uint64_t ptr;
  int rank, nranks;
  uint64_t id;
};

void write_nccl_log(std::string& out, int world, int entries, int rank) {
  const std::string pre = "node" + std::to_string(rank / kTp) + ":" + std::to_string(1000 + rank) + ":" +
                          std::to_string(1000 + rank) + " [" + std::to_string(rank % kTp) + "] NCCL INFO ";
  out += pre + "NCCL version 2.27.3+cuda12.9\n";
  const int ntp = world / kTp;
  const uint64_t r = static_cast<uint64_t>(rank);
  const Comm world_c{0x7f2000000000ull + r, rank, world, 0x1};
  const Comm tp{0x7f0000000000ull + r, rank % kTp, kTp, 0x1000ull + r / kTp};
  const Comm dp{0x7f1000000000ull + r, rank / kTp, ntp, 0x9000ull + r % kTp};
  for (const Comm* c : {&world_c, &tp, &dp})
    for (const char* phase : {"START", "COMPLETE"}) {
      out += pre + "ncclCommInitRankConfig comm ";
      hex(out, c->ptr);
      out += " rank " + std::to_string(c->rank) + " nranks " + std::to_string(c->nranks) + " cudaDev " +
             std::to_string(rank % kTp) + " nvmlDev " + std::to_string(rank % kTp) + " busId 1000 commId ";
      hex(out, c->id);
      out += std::string(" - Init ") + phase + "\n";
    }
  for (const Op& o : schedule(world, entries, rank, false)) {
    const Comm& c = o.on_tp ? tp : dp;
    out += pre;
    out += std::strcmp(o.op, "all_reduce") == 0       ? "AllReduce"
           : std::strcmp(o.op, "reduce_scatter") == 0 ? "ReduceScatter"
                                                      : "AllGather";
    out += ": opCount ";
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, o.seq - 1, 16);
    out.append(buf, res.ptr);
    out += " sendbuff 0x7e0000000000 recvbuff 0x7e0000100000 count 1048576 datatype 9 op 0 root 0 comm ";
    hex(out, c.ptr);
    out += " [nranks=" + std::to_string(c.nranks) + "] stream 0x5a0000\n";
  }
}

// --- collmc recorder traces (libcollmc_record.so's JSON lines) ---------------------------------------------

void write_recorder(std::string& out, int world, int entries, int rank) {
  const int pid = 1000 + rank;
  uint64_t seq = 0, t = 1000000000ull;
  auto head = [&](const char* ev, const char* call) {
    out += "{\"ev\":\"";
    out += ev;
    out += "\",\"seq\":";
    unum(out, seq);
    out += ",\"tid\":";
    num(out, pid);
    out += ",\"t_mono_ns\":";
    unum(out, t);
    out += ",\"t_wall_ns\":";
    unum(out, kTime0 + t);
    out += ",\"call\":\"";
    out += call;
    out += "\"";
    t += 1000;
  };
  out += "{\"ev\":\"process\",\"format\":\"collmc-recorder\",\"version\":1,\"pid\":" + std::to_string(pid) +
         ",\"ppid\":1,\"host\":\"node" + std::to_string(rank / kTp) +
         "\",\"exe\":\"/usr/bin/python3\",\"t_mono_ns\":0,\"t_wall_ns\":" + std::to_string(kTime0) +
         ",\"env_rank\":" + std::to_string(rank) + ",\"env_local_rank\":" + std::to_string(rank % kTp) +
         ",\"env_world_size\":" + std::to_string(world) + "}\n";
  const std::string uid = "\"0x5eed000000000001\"";
  ++seq;
  head("enter", "ncclCommInitRankConfig");
  out += ",\"uid\":" + uid + ",\"rank\":" + std::to_string(rank) + ",\"nranks\":" + std::to_string(world) +
         ",\"blocking\":1}\n";
  head("return", "ncclCommInitRankConfig");
  out += ",\"result\":0,\"comm\":\"0x7f2000000000\"}\n";
  // tp: color rank / 8 (key: the rank); dp: color 1000000 + rank % 8.
  struct Split {
    const char* newcomm;
    int color, rank, nranks;
  };
  const Split splits[] = {{"0x7f0000000000", rank / kTp, rank % kTp, kTp},
                          {"0x7f1000000000", 1000000 + rank % kTp, rank / kTp, world / kTp}};
  for (const Split& s : splits) {
    ++seq;
    head("enter", "ncclCommSplit");
    out += ",\"comm\":\"0x7f2000000000\",\"color\":" + std::to_string(s.color) + ",\"key\":" + std::to_string(rank) +
           ",\"blocking\":1}\n";
    head("return", "ncclCommSplit");
    out += ",\"result\":0,\"newcomm\":\"" + std::string(s.newcomm) + "\",\"rank\":" + std::to_string(s.rank) +
           ",\"nranks\":" + std::to_string(s.nranks) + "}\n";
  }
  ++seq;
  head("enter", "cudaMalloc");
  out += ",\"size\":4194304}\n";
  head("return", "cudaMalloc");
  out += ",\"result\":0,\"ptr\":\"0x7e0000000000\"}\n";
  for (const Op& o : schedule(world, entries, rank, false)) {
    const char* call = std::strcmp(o.op, "all_reduce") == 0       ? "ncclAllReduce"
                       : std::strcmp(o.op, "reduce_scatter") == 0 ? "ncclReduceScatter"
                                                                  : "ncclAllGather";
    ++seq;
    head("enter", call);
    out += o.on_tp ? ",\"comm\":\"0x7f0000000000\"" : ",\"comm\":\"0x7f1000000000\"";
    out += ",\"sendbuff\":\"0x7e0000000000\",\"recvbuff\":\"0x7e0000000000\",\"count\":";
    // reduce_scatter's recvcount and all_gather's sendcount: a share of the tensor.
    unum(out, std::strcmp(o.op, "all_reduce") == 0 ? kCount : kCount / static_cast<uint64_t>(world / kTp));
    out += ",\"dtype\":\"bfloat16\"";
    if (std::strcmp(o.op, "all_gather") != 0) out += ",\"op\":\"sum\"";
    out += ",\"stream\":\"0x5a0000\"}\n";
    head("return", call);
    out += ",\"result\":0}\n";
  }
  ++seq;  // where the rank waits: the stream's work never finishes
  head("enter", "cudaStreamSynchronize");
  out += ",\"stream\":\"0x5a0000\"}\n";
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "collmc_gen_hung_job: %s\nusage: collmc_gen_hung_job --format json|pickle|nccl-log|recorder "
               "--world W --entries E --out DIR [--jobs N]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string format = "json", out_dir;
  int world = 1024, entries = 400;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage(("missing the value of " + a).c_str());
    std::string v = argv[++i];
    if (a == "--format") {
      format = v;
    } else if (a == "--world") {
      world = std::atoi(v.c_str());
    } else if (a == "--entries") {
      entries = std::atoi(v.c_str());
    } else if (a == "--out") {
      out_dir = v;
    } else if (a == "--jobs") {
      jobs = static_cast<unsigned>(std::max(1, std::atoi(v.c_str())));
    } else {
      usage(("unknown option " + a).c_str());
    }
  }
  if (format != "json" && format != "pickle" && format != "nccl-log" && format != "recorder")
    usage("--format must be json, pickle, nccl-log or recorder");
  if (world < 2 * kTp || world % kTp || world > 65536) usage("--world must be a multiple of 8, 16 to 65536");
  if (entries < 8) usage("--entries must be at least 8");
  if (out_dir.empty()) usage("--out is required");
  std::filesystem::create_directories(out_dir);
  const std::vector<Group> pgs = groups(world);
  const std::string pg_config = json_pg_config(pgs);
  std::atomic<int> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    std::string buf;
    for (int rank = next++; rank < world && !failed; rank = next++) {
      buf.clear();
      std::string name;
      if (format == "json") {
        write_json(buf, world, entries, rank, pg_config);
        name = "rank_" + std::to_string(rank) + ".json";
      } else if (format == "pickle") {
        write_pickle(buf, world, entries, rank, pgs);
        name = "rank_" + std::to_string(rank) + ".pkl";
      } else if (format == "nccl-log") {
        write_nccl_log(buf, world, entries, rank);
        name = "nccl." + std::to_string(rank) + ".log";
      } else {
        write_recorder(buf, world, entries, rank);
        name = "collmc-trace.node" + std::to_string(rank / kTp) + "." + std::to_string(1000 + rank) + ".jsonl";
      }
      const std::string path = out_dir + "/" + name;
      std::FILE* f = std::fopen(path.c_str(), "wb");
      if (!f || std::fwrite(buf.data(), 1, buf.size(), f) != buf.size() || std::fclose(f) != 0) {
        std::fprintf(stderr, "collmc_gen_hung_job: cannot write %s\n", path.c_str());
        failed = true;
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < jobs; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return failed ? 1 : 0;
}
