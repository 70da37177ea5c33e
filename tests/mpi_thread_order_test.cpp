// A rank's OpenMP threads in MPI imports (issue 32 item 4; traces/read/mpi_recorder/thread_order.cpp): with the
// OMPT tool's "omp" lines the threads become threads of the rank ordered by that synchronization only, without
// them one body in entry order. Traces written here line by line in the recorder's format (docs/TRACES.md), each
// checked in both outcomes.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "collmc/model/operations.h"
#include "collmc/traces/recorder_reader.h"
#include "test_support.h"

namespace {

using collmc::model::Verdict;
using collmc::traces::emit_scenario;
using collmc::traces::read_recorder_buffers;

// One process's lines, in the order written (one seq counter for calls and omp lines, as the recorder has).
class Lines {
 public:
  Lines(int rank, int size) {
    text_ = R"({"ev":"process","format":"collmc-mpi-recorder","version":1,"pid":)" + std::to_string(100 + rank) +
            R"(,"ppid":1,"host":"h","exe":"/bin/x","t_mono_ns":1,"t_wall_ns":2,"env_rank":-1,"env_local_rank":-1,)"
            R"("env_world_size":-1})"
            "\n";
    call(1, "MPI_Init", "",
         R"("world_rank":)" + std::to_string(rank) + R"(,"world_size":)" + std::to_string(size) +
             R"(,"world":"0x10","self":"0x20","comm_null":"0x30","tag_ub":32767)");
  }
  // A call of thread `tid` that returned before the next line.
  Lines& call(int tid, const std::string& name, const std::string& in, const std::string& out = "") {
    const int s = ++seq_;
    text_ += head("enter", s, tid) + name + "\"" + (in.empty() ? "" : "," + in) + "}\n";
    text_ += head("return", s, tid) + name + R"(","result":0)" + (out.empty() ? "" : "," + out) + "}\n";
    return *this;
  }
  // The program's own load or store of thread `tid` since its last line (written before its next one).
  Lines& access(int tid, bool store, const std::string& addr, int bytes) {
    text_ += head("access", ++seq_, tid) + (store ? "store" : "load") + R"(","addr":")" + addr + R"(","bytes":)" +
             std::to_string(bytes) + "}\n";
    return *this;
  }
  Lines& omp(int tid, const std::string& what, const std::string& fields = "") {
    text_ += head("omp", ++seq_, tid) + what + "\"" + (fields.empty() ? "" : "," + fields) + "}\n";
    return *this;
  }
  // Thread 1 forks region 2 with threads 1 and 2.
  Lines& fork() {
    return omp(1, "parallel_begin", R"("region":2,"task":1,"requested":2)")
        .omp(1, "implicit_task_begin", R"("region":2,"index":0,"team":2,"initial":0)")
        .omp(2, "implicit_task_begin", R"("region":2,"index":1,"team":2,"initial":0)");
  }
  Lines& barrier(int tid, const char* edge) {
    return omp(tid, std::string("barrier_") + edge, R"("region":2,"kind":2)");
  }
  // Both threads end region 2 (its last barrier, as LLVM reports it: the worker's end comes last) and it joins.
  Lines& join() {
    return barrier(1, "begin")
        .barrier(2, "begin")
        .barrier(1, "end")
        .omp(1, "implicit_task_end", R"("region":2)")
        .omp(1, "parallel_end", R"("region":2)")
        .barrier(2, "end")
        .omp(2, "implicit_task_end", R"("region":2)");
  }
  const std::string& text() const { return text_; }

 private:
  std::string head(const char* ev, int seq, int tid) {
    const std::string t = std::to_string(++clock_);
    return std::string(R"({"ev":")") + ev + R"(","seq":)" + std::to_string(seq) + R"(,"tid":)" + std::to_string(tid) +
           R"(,"t_mono_ns":)" + t + R"(,"t_wall_ns":)" + t + R"(,"call":")";
  }
  std::string text_;
  int seq_ = 0;
  int clock_ = 0;
};

const collmc::traces::Trace import(const std::vector<Lines>& ps) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < ps.size(); ++i) files.emplace_back("rank" + std::to_string(i) + ".jsonl", ps[i].text());
  return read_recorder_buffers(files);
}
std::string notes(const collmc::traces::Trace& t) {
  std::string out;
  for (const auto& n : t.notes) out += n + "\n";
  return out;
}

std::string p2p(const char* comm, int peer) {
  return std::string(R"("comm":")") + comm + R"(","peer":)" + std::to_string(peer) +
         R"(,"tag":7,"count":1,"dtype":"MPI_INT","buf":"0x9000","bytes":4)";
}

// CorrBench's openmp/threading/correct/finalize: one section sends (synchronous mode), the other receives. In the
// entry order both ranks' sends come first: one body stands the two sends head to head (a false deadlock).
TEST(MpiThreadOrder, SectionsThatSendAndReceiveAreConcurrent) {
  auto rank = [](int r, bool omp) {
    Lines l(r, 2);
    if (omp) l.fork();
    l.call(1, "MPI_Ssend", p2p("0x10", 1 - r));
    l.call(2, "MPI_Recv", p2p("0x10", 1 - r), R"("source":)" + std::to_string(1 - r) + R"(,"tag":7)");
    if (omp) l.join();
    return l.call(1, "MPI_Finalize", "");
  };
  const auto ordered = import({rank(0, true), rank(1, true)});
  const std::string text = emit_scenario(ordered);
  EXPECT_NE(text.find("thread t_omp1"), std::string::npos) << text;
  EXPECT_NE(notes(ordered).find("threads of rank 0 (2) ordered by their recorded OpenMP synchronization only"),
            std::string::npos)
      << notes(ordered);
  EXPECT_EQ(collmc::testing::verdict_of(text), Verdict::Safe) << text;
  // The same calls without the omp lines: one body, said so.
  const auto unordered = import({rank(0, false), rank(1, false)});
  EXPECT_NE(notes(unordered).find(
                "threads of rank 0 taken in the order their calls were entered: no thread synchronization recorded"),
            std::string::npos)
      << notes(unordered);
  EXPECT_EQ(collmc::testing::verdict_of(emit_scenario(unordered)), Verdict::Deadlock);
}

// CorrBench's openmp/ordering/correct/dependant/comm_free: thread 1 frees a communicator after a barrier that
// thread 2's use of it came before. Safe with the barrier; without it (the same run's order) a use after free.
TEST(MpiThreadOrder, ABarrierOrdersAFreeAfterTheOtherThreadsUse) {
  auto rank = [](int r, bool barrier) {
    Lines l(r, 2);
    l.call(1, "MPI_Comm_dup", R"("comm":"0x10")", R"("newcomm":"0x50","rank":)" + std::to_string(r) + R"(,"size":2)");
    l.fork();
    if (r == 0)
      l.call(2, "MPI_Send", p2p("0x50", 1));
    else
      l.call(2, "MPI_Recv", p2p("0x50", 0), R"("source":0,"tag":7)");
    if (barrier) l.barrier(1, "begin").barrier(2, "begin").barrier(2, "end").barrier(1, "end");
    l.call(1, "MPI_Comm_free", R"("comm":"0x50")");
    return l.join().call(1, "MPI_Finalize", "");
  };
  const std::string safe = emit_scenario(import({rank(0, true), rank(1, true)}));
  EXPECT_NE(safe.find("store_wait"), std::string::npos) << safe;
  EXPECT_EQ(collmc::testing::verdict_of(safe), Verdict::Safe) << safe;
  const std::string racy = emit_scenario(import({rank(0, false), rank(1, false)}));
  EXPECT_EQ(collmc::testing::verdict_of(racy), Verdict::UsageError) << racy;
}

// A critical section (a mutex: its release before its next acquisition) orders two threads' collectives on one
// communicator; a key only where no other edge implies the order.
TEST(MpiThreadOrder, ACriticalSectionOrdersTheNextHolderAfterTheLast) {
  auto rank = [](int r) {
    Lines l(r, 2);
    l.fork();
    for (int tid : {2, 1}) {
      l.omp(tid, "mutex_acquired", R"("kind":5,"wait_id":"0x77")");
      l.call(tid, "MPI_Barrier", R"("comm":"0x10")");
      l.omp(tid, "mutex_released", R"("kind":5,"wait_id":"0x77")");
    }
    return l.join().call(1, "MPI_Finalize", "");
  };
  const auto trace = import({rank(0), rank(1)});
  const std::string text = emit_scenario(trace);
  EXPECT_EQ(collmc::testing::verdict_of(text), Verdict::Safe) << text;
  // rank 0: the fork (main's MPI_Init before omp1's barrier) and the mutex (omp1's barrier before main's); the join
  // adds nothing the mutex did not give.
  EXPECT_NE(notes(trace).find("threads of rank 0 (2) ordered by their recorded OpenMP synchronization only: 2 "),
            std::string::npos)
      << notes(trace);
}

// A request one thread started and another completed: one group spans both threads, so the process is read as
// one body (and says why).
TEST(MpiThreadOrder, ARequestWaitedByAnotherThreadKeepsOneBody) {
  auto rank = [](int r) {
    Lines l(r, 2);
    l.fork();
    l.call(2, r == 0 ? "MPI_Isend" : "MPI_Irecv", p2p("0x10", 1 - r), R"("req":"0x900")");
    l.barrier(1, "begin").barrier(2, "begin").barrier(2, "end").barrier(1, "end");
    l.call(1, "MPI_Wait", R"("req":"0x900")");
    return l.join().call(1, "MPI_Finalize", "");
  };
  const auto trace = import({rank(0), rank(1)});
  EXPECT_NE(notes(trace).find("taken in the order their calls were entered: a request started by one thread was "
                              "completed by another"),
            std::string::npos)
      << notes(trace);
  const std::string text = emit_scenario(trace);
  EXPECT_EQ(text.find("thread t_"), std::string::npos) << text;
  EXPECT_EQ(collmc::testing::verdict_of(text), Verdict::Safe) << text;
}

// Two tasks of one parent, each a barrier on MPI_COMM_WORLD, run by the team's two threads: a dependence (out, then
// in, on one address) orders them, so every rank issues its barriers in one order (safe); without it the threads'
// two collectives on one communicator are unordered, erroneous (MPI 4.1 sec. 11.6.2: usage_error). The parent's
// taskwait orders both before its MPI_Finalize.
TEST(MpiThreadOrder, ATaskDependenceOrdersTwoThreadsCollectives) {
  auto rank = [](int r, bool dependence) {
    Lines l(r, 2);
    l.fork();
    l.omp(1, "task_create", R"("task":10,"parent":2,"flags":4,"deps":1)");
    if (dependence) l.omp(1, "task_dependences", R"("task":10,"deps":"out:0x4000")");
    l.omp(1, "task_create", R"("task":11,"parent":2,"flags":4,"deps":1)");
    if (dependence) l.omp(1, "task_dependences", R"("task":11,"deps":"in:0x4000")");
    l.omp(2, "task_schedule", R"("prior":2,"status":7,"next":10)");
    l.call(2, "MPI_Barrier", R"("comm":"0x10")");
    l.omp(2, "task_schedule", R"("prior":10,"status":1,"next":2)");
    l.omp(1, "task_schedule", R"("prior":2,"status":7,"next":11)");
    l.call(1, "MPI_Barrier", R"("comm":"0x10")");
    l.omp(1, "task_schedule", R"("prior":11,"status":1,"next":2)");
    l.omp(1, "taskwait_begin", R"("task":2,"kind":5)").omp(1, "taskwait_end", R"("task":2,"kind":5)");
    l.call(1, "MPI_Finalize", "");
    return l.join();
  };
  const auto ordered = import({rank(0, true), rank(1, true)});
  const std::string text = emit_scenario(ordered);
  EXPECT_NE(notes(ordered).find("threads of rank 0 (2) ordered by their recorded OpenMP synchronization only"),
            std::string::npos)
      << notes(ordered);
  EXPECT_EQ(collmc::testing::verdict_of(text), Verdict::Safe) << text;
  const std::string unordered = emit_scenario(import({rank(0, false), rank(1, false)}));
  EXPECT_EQ(collmc::testing::verdict_of(unordered), Verdict::UsageError) << unordered;
}

// RMARaceBench's MPIRMA/hybrid/001 and 002: the master thread gets into window memory under a lock while the
// other thread of its team loads it. Without a barrier between (001, `omp master` has none) the load races with
// the transfer in flight (MPI 4.1 sec. 12.7), found although in the run the load came after the unlock; with a
// barrier after the unlock (002) it is ordered. Only one thread makes MPI calls: the rank stays one body.
TEST(MpiThreadOrder, AnotherThreadsLoadRacesWithAGetNothingOrdersItWith) {
  auto rank0 = [](bool barrier) {
    Lines l(0, 2);
    l.call(1, "MPI_Win_allocate", R"("comm":"0x10","size":40,"disp_unit":4)", R"("win":"0x60","base":"0x5000")");
    l.fork();
    l.call(1, "MPI_Win_lock", R"("win":"0x60","target":1,"lock":"exclusive")");
    l.call(1, "MPI_Get",
           R"("win":"0x60","target":1,"count":1,"dtype":"MPI_INT","target_dtype":"MPI_INT","buf":"0x5000",)"
           R"("bytes":4,"target_disp":0,"target_bytes":4)");
    l.call(1, "MPI_Win_unlock", R"("win":"0x60","target":1)");
    if (barrier) l.barrier(1, "begin").barrier(2, "begin").barrier(1, "end").barrier(2, "end");
    l.access(2, false, "0x5000", 4);
    l.join();
    return l.call(1, "MPI_Win_free", R"("win":"0x60")").call(1, "MPI_Finalize", "");
  };
  Lines rank1(1, 2);
  rank1.call(1, "MPI_Win_allocate", R"("comm":"0x10","size":40,"disp_unit":4)", R"("win":"0x60","base":"0x7000")")
      .call(1, "MPI_Win_free", R"("win":"0x60")")
      .call(1, "MPI_Finalize", "");
  const std::string racy = emit_scenario(import({rank0(false), rank1}));
  EXPECT_NE(racy.find("nothing in the threads' recorded OpenMP synchronization orders the two"), std::string::npos)
      << racy;
  EXPECT_EQ(collmc::testing::verdict_of(racy), Verdict::UsageError) << racy;
  const std::string ordered = emit_scenario(import({rank0(true), rank1}));
  EXPECT_EQ(ordered.find("mpi_error"), std::string::npos) << ordered;
  EXPECT_EQ(collmc::testing::verdict_of(ordered), Verdict::Safe) << ordered;
}

}  // namespace
