// MPI usage errors found in MPI recorder traces (issue 26; traces/read/mpi_recorder/mpi_usage_rules.cpp): each rule in
// both outcomes, on traces written here line by line in the recorder's format (docs/TRACES.md), and the check of the
// imported scenario (usage_error where the rule fires, nothing added where the program is correct).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "../traces/read/mpi_recorder/mpi_calls.h"
#include "collmc/model/operations.h"
#include "collmc/traces/recorder_reader.h"
#include "test_support.h"

namespace {

using collmc::traces::emit_scenario;
using collmc::traces::read_recorder_buffers;

// One process's trace: its calls as (name, entry fields, return fields), numbered in order.
class Process {
 public:
  explicit Process(int rank, int size, int64_t tag_ub = 32767) {
    text_ = R"({"ev":"process","format":"collmc-mpi-recorder","version":1,"pid":)" + std::to_string(100 + rank) +
            R"(,"ppid":1,"host":"h","exe":"/bin/x","t_mono_ns":1,"t_wall_ns":2,"env_rank":-1,"env_local_rank":-1,)"
            R"("env_world_size":-1})"
            "\n";
    call("MPI_Init", "",
         R"("world_rank":)" + std::to_string(rank) + R"(,"world_size":)" + std::to_string(size) +
             R"(,"world":"0x10","self":"0x20","comm_null":"0x30","tag_ub":)" + std::to_string(tag_ub));
  }
  Process& call(const std::string& name, const std::string& in, const std::string& out = "") {
    ++seq_;
    const std::string entered = std::to_string(++clock_), returned = std::to_string(++clock_);
    const std::string head = R"({"ev":"enter","seq":)" + std::to_string(seq_) + R"(,"tid":1,"t_mono_ns":)" + entered +
                             R"(,"t_wall_ns":)" + entered + R"(,"call":")";
    text_ += head + name + "\"" + (in.empty() ? "" : "," + in) + "}\n";
    text_ += R"({"ev":"return","seq":)" + std::to_string(seq_) + R"(,"tid":1,"t_mono_ns":)" + returned +
             R"(,"t_wall_ns":)" + returned + R"(,"call":")" + name + R"(","result":0)" +
             (out.empty() ? "" : "," + out) + "}\n";
    return *this;
  }
  // An entry or a return of call `seq` on thread `tid` at `t` ns, written as it comes (threads interleave).
  Process& event(bool enter, int seq, int tid, int t, const std::string& name, const std::string& fields = "") {
    seq_ = std::max(seq_, seq);
    clock_ = std::max(clock_, static_cast<uint64_t>(t));
    text_ += std::string(R"({"ev":")") + (enter ? "enter" : "return") + R"(","seq":)" + std::to_string(seq) +
             R"(,"tid":)" + std::to_string(tid) + R"(,"t_mono_ns":)" + std::to_string(t) + R"(,"t_wall_ns":)" +
             std::to_string(t) + R"(,"call":")" + name + "\"" + (enter ? "" : R"(,"result":0)") +
             (fields.empty() ? "" : "," + fields) + "}\n";
    return *this;
  }
  // The program's own load or store (an "access" line, written before the thread's next MPI call).
  Process& access(bool store, const std::string& addr, int bytes) {
    text_ += R"({"ev":"access","seq":)" + std::to_string(++seq_) + R"(,"tid":1,"t_mono_ns":)" +
             std::to_string(++clock_) + R"(,"t_wall_ns":1,"call":")" + (store ? "store" : "load") + R"(","addr":")" +
             addr + R"(","bytes":)" + std::to_string(bytes) + "}\n";
    return *this;
  }
  // The next calls come at `t` ns and after (the processes of one run share a host's clock).
  Process& at(uint64_t t) {
    clock_ = std::max(clock_, t);
    return *this;
  }
  int seq() const { return seq_; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  int seq_ = 0;
  uint64_t clock_ = 0;  // the times call() writes: one after another, after any event() written
};

std::string scenario(const std::vector<Process>& ps) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t i = 0; i < ps.size(); ++i) files.emplace_back("rank" + std::to_string(i) + ".jsonl", ps[i].text());
  return emit_scenario(read_recorder_buffers(files));
}

collmc::model::Verdict verdict(const std::string& text) { return collmc::testing::verdict_of(text); }

const std::string kWin = R"("comm":"0x10","base":"0x1000","size":64,"disp_unit":4)";
std::string put(int target, int disp, const std::string& buf = "0x9000") {
  return R"("win":"0x40","target":)" + std::to_string(target) +
         R"(,"count":1,"dtype":"MPI_INT","target_dtype":"MPI_INT","buf":")" + buf + R"(","bytes":4,"target_disp":)" +
         std::to_string(disp) + R"(,"target_bytes":4)";
}

// Two ranks with a window; `body(rank, process)` adds what each does between the creation and the free.
template <class Body>
std::vector<Process> with_window(int ranks, Body body) {
  std::vector<Process> ps;
  for (int r = 0; r < ranks; ++r) {
    Process p(r, ranks);
    p.call("MPI_Win_create", kWin, R"("win":"0x40")");
    body(r, p);
    p.call("MPI_Win_free", R"("win":"0x40")").call("MPI_Finalize", "");
    ps.push_back(p);
  }
  return ps;
}

TEST(MpiUsageRules, FencedPutsToDisjointBytesAreCorrect) {
  const std::string s = scenario(with_window(2, [](int r, Process& p) {
    p.call("MPI_Win_fence", R"("win":"0x40","assert":0,"nosucceed":0)")
        .call("MPI_Put", put(1 - r, r))
        .call("MPI_Win_fence", R"("win":"0x40","assert":0,"nosucceed":0)");
  }));
  EXPECT_EQ(s.find("mpi_error"), std::string::npos) << s;
  EXPECT_EQ(verdict(s), collmc::model::Verdict::Safe) << s;
}

// The epochs are the semantics' (issue 32 item 3): the import writes the one-sided calls as made, and the
// check's message says what was wrong (tests/mpi_epochs_test.cpp has every rule on hand-written scenarios).
std::string check_message(const std::string& text) {
  const auto r = collmc::testing::check_text(text);
  return r.violation ? r.violation->message : std::string();
}

TEST(MpiUsageRules, PutOutsideAnyEpoch) {
  const std::string s = scenario(with_window(2, [](int r, Process& p) {
    if (r == 0) p.call("MPI_Put", put(1, 0));
  }));
  EXPECT_EQ(s.find("mpi_error"), std::string::npos) << s;
  EXPECT_NE(s.find("put world 1 win1"), std::string::npos) << s;
  EXPECT_NE(s.find("mpi_finalize"), std::string::npos) << s;
  EXPECT_EQ(verdict(s), collmc::model::Verdict::UsageError) << s;
  EXPECT_NE(check_message(s).find("put (MPI_Put) to rank 1 on 'win1' of world outside any access epoch"),
            std::string::npos)
      << check_message(s);
}

TEST(MpiUsageRules, LockInsideLockAllAndUnclosedLock) {
  const std::string doubled = scenario(with_window(2, [](int r, Process& p) {
    if (r != 0) return;
    p.call("MPI_Win_lock_all", R"("win":"0x40","assert":0)")
        .call("MPI_Win_lock", R"("win":"0x40","target":1,"lock":"shared")")
        .call("MPI_Win_unlock", R"("win":"0x40","target":1)")
        .call("MPI_Win_unlock_all", R"("win":"0x40")");
  }));
  EXPECT_NE(doubled.find("win_lock world 1 win1 mode=shared"), std::string::npos) << doubled;
  EXPECT_NE(check_message(doubled).find("two access epochs at once"), std::string::npos) << doubled;
  const std::string unclosed = scenario(with_window(2, [](int r, Process& p) {
    if (r == 0) p.call("MPI_Win_lock", R"("win":"0x40","target":1,"lock":"shared")").call("MPI_Put", put(1, 0));
  }));
  EXPECT_NE(check_message(unclosed).find("is still open"), std::string::npos) << unclosed;
  const std::string fine = scenario(with_window(2, [](int r, Process& p) {
    if (r != 0) return;
    p.call("MPI_Win_lock", R"("win":"0x40","target":1,"lock":"shared")")
        .call("MPI_Put", put(1, 0))
        .call("MPI_Win_flush", R"("win":"0x40","target":1)")
        .call("MPI_Win_unlock", R"("win":"0x40","target":1)");
  }));
  EXPECT_EQ(fine.find("mpi_error"), std::string::npos) << fine;
  EXPECT_EQ(verdict(fine), collmc::model::Verdict::Safe) << fine;
}

TEST(MpiUsageRules, TwoPutsToOneIntInOneEpochRaceUnlessExclusive) {
  auto run = [](const char* lock) {
    return scenario(with_window(3, [lock](int r, Process& p) {
      p.call("MPI_Win_lock", std::string(R"("win":"0x40","target":1,"lock":")") + lock + "\"");
      if (r != 1) p.call("MPI_Put", put(1, 2));
      p.call("MPI_Win_unlock", R"("win":"0x40","target":1)");
    }));
  };
  const std::string shared = run("shared");
  EXPECT_NE(shared.find("a data race"), std::string::npos) << shared;
  EXPECT_EQ(verdict(shared), collmc::model::Verdict::UsageError) << shared;
  EXPECT_EQ(run("exclusive").find("mpi_error"), std::string::npos);
}

TEST(MpiUsageRules, GetIntoABufferSentBeforeTheEpochCloses) {
  auto run = [](bool flush) {
    return scenario(with_window(2, [flush](int r, Process& p) {
      if (r == 1) {
        p.call("MPI_Recv", R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":0,"tag":0,"buf":"0x5000","bytes":4)",
               R"("source":0,"tag":0)");
        return;
      }
      p.call("MPI_Win_lock", R"("win":"0x40","target":1,"lock":"exclusive")").call("MPI_Get", put(1, 0, "0x9000"));
      if (flush) p.call("MPI_Win_flush", R"("win":"0x40","target":1)");
      p.call("MPI_Send", R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":1,"tag":0,"buf":"0x9000","bytes":4)")
          .call("MPI_Win_unlock", R"("win":"0x40","target":1)");
    }));
  };
  EXPECT_NE(run(false).find("is not yet completed"), std::string::npos) << run(false);
  EXPECT_EQ(run(true).find("mpi_error"), std::string::npos) << run(true);
}

TEST(MpiUsageRules, TheProgramsStoreToTheOriginOfAGetInFlight) {
  // MPI 4.1 sec. 12.7: the origin buffer of a get is not to be accessed until the get completes (the unlock).
  auto run = [](bool before_unlock, const std::string& addr) {
    return scenario(with_window(2, [&](int r, Process& p) {
      if (r != 0) return;
      p.call("MPI_Win_lock", R"("win":"0x40","target":1,"lock":"shared")").call("MPI_Get", put(1, 0, "0x9000"));
      if (before_unlock) p.access(true, addr, 4);
      p.call("MPI_Win_unlock", R"("win":"0x40","target":1)");
      if (!before_unlock) p.access(true, addr, 4);
    }));
  };
  const std::string racing = run(true, "0x9000");
  EXPECT_NE(racing.find("the program's store to 4 bytes at 0x9000 (rank0.jsonl:"), std::string::npos) << racing;
  EXPECT_NE(racing.find("MPI_Get to rank 1 writing its origin buffer is not yet completed"), std::string::npos);
  EXPECT_EQ(verdict(racing), collmc::model::Verdict::UsageError) << racing;
  // After the unlock, or to other bytes: allowed.
  EXPECT_EQ(run(false, "0x9000").find("mpi_error"), std::string::npos) << run(false, "0x9000");
  EXPECT_EQ(run(true, "0x9004").find("mpi_error"), std::string::npos) << run(true, "0x9004");
  EXPECT_NE(run(true, "0x9004").find("loads and stores of memory it gave MPI: 1 runs"), std::string::npos);
}

TEST(MpiUsageRules, TheOwnersLoadOfWindowMemoryAnotherRankPutsToInOneEpoch) {
  // Rank 1 reads its window's first int (base 0x1000) while rank 0's put writes it, between the same fences.
  auto run = [](bool same_epoch, bool store) {
    return scenario(with_window(2, [&](int r, Process& p) {
      p.call("MPI_Win_fence", R"("win":"0x40","assert":0,"nosucceed":0)");
      if (r == 0) p.call("MPI_Put", put(1, 0));
      if (r == 1 && same_epoch) p.access(store, "0x1000", 4);
      p.call("MPI_Win_fence", R"("win":"0x40","assert":0,"nosucceed":0)");
      if (r == 1 && !same_epoch) p.access(store, "0x1000", 4);
    }));
  };
  const std::string racing = run(true, false);
  EXPECT_NE(racing.find("the program's load of 4 bytes at 0x1000"), std::string::npos) << racing;
  EXPECT_NE(racing.find("a data race (MPI 4.1 sec. 12.7)"), std::string::npos) << racing;
  EXPECT_EQ(verdict(racing), collmc::model::Verdict::UsageError) << racing;
  EXPECT_EQ(verdict(run(true, true)), collmc::model::Verdict::UsageError);
  // After the closing fence the put is complete: the load sees it, no race.
  EXPECT_EQ(run(false, false).find("mpi_error"), std::string::npos) << run(false, false);
}

TEST(MpiUsageRules, AStartEpochsTransferIsInFlightAtItsTargetUntilTheMatchingWait) {
  // Rank 0 puts to rank 1's first int in a start/complete epoch; rank 1 exposes its window with post/wait and
  // stores to those bytes inside the exposure epoch or after its wait (MPI 4.1 sec. 12.5.2, 12.7).
  auto run = [](bool inside, bool groups) {
    return scenario(with_window(2, [&](int r, Process& p) {
      const std::string group = groups ? (r == 0 ? R"(,"group":"1")" : R"(,"group":"0")") : "";
      if (r == 0)
        p.call("MPI_Win_start", R"("win":"0x40","assert":0)" + group)
            .call("MPI_Put", put(1, 0))
            .call("MPI_Win_complete", R"("win":"0x40")");
      if (r == 1) {
        p.call("MPI_Win_post", R"("win":"0x40","assert":0)" + group);
        if (inside) p.access(true, "0x1000", 4);
        p.call("MPI_Win_wait", R"("win":"0x40")");
        if (!inside) p.access(true, "0x1000", 4);
      }
    }));
  };
  const std::string racing = run(true, true);
  EXPECT_NE(racing.find("the program's store to 4 bytes at 0x1000"), std::string::npos) << racing;
  EXPECT_NE(racing.find("a data race"), std::string::npos) << racing;
  EXPECT_EQ(run(false, true).find("mpi_error"), std::string::npos) << run(false, true);
  // Without the groups (an older trace) the pairing is not known: the program's accesses are not judged.
  EXPECT_EQ(run(true, false).find("mpi_error"), std::string::npos) << run(true, false);
}

TEST(MpiUsageRules, AMessageAfterTheUnlockOrdersThePutBeforeTheOwnersLoad) {
  // Rank 0 puts to rank 1's first int under a lock, passes a barrier with rank 1, unlocks and sends rank 1 a token;
  // rank 1, holding no epoch, loads the int after the barrier (the put is under way and not complete: a race,
  // MPI 4.1 sec. 12.7) or after receiving the token (ordered by the run's happens-before order, sec. 3.5).
  auto run = [](bool load_after_token) {
    return scenario(with_window(2, [&](int r, Process& p) {
      const std::string token = R"("comm":"0x10","count":1,"dtype":"MPI_INT","tag":7,"buf":"0x8000","bytes":4)";
      const std::string barrier = R"("comm":"0x10","count":0,"dtype":"MPI_DATATYPE_NULL")";
      if (r == 0)
        p.call("MPI_Win_lock", R"("win":"0x40","target":1,"lock":"shared")")
            .call("MPI_Put", put(1, 0))
            .at(50)
            .call("MPI_Barrier", barrier)
            .call("MPI_Win_unlock", R"("win":"0x40","target":1)")
            .call("MPI_Send", token + R"(,"peer":1)");
      if (r == 1) {
        p.at(50).call("MPI_Barrier", barrier);
        if (!load_after_token) p.access(false, "0x1000", 4);
        p.at(100).call("MPI_Recv", token + R"(,"peer":0)", R"("source":0,"tag":7)");
        if (load_after_token) p.access(false, "0x1000", 4);
      }
    }));
  };
  const std::string racing = run(false);
  EXPECT_NE(racing.find("the program's load of 4 bytes at 0x1000"), std::string::npos) << racing;
  EXPECT_NE(racing.find("a data race"), std::string::npos) << racing;
  const std::string ordered = run(true);
  EXPECT_EQ(ordered.find("mpi_error"), std::string::npos) << ordered;
}

TEST(MpiUsageRules, TwoPutsOfOneOriginToOneIntRaceUntilAFlushOrdersThem) {
  // MPI 4.1 sec. 12.7: two puts of rank 0 to rank 1's first int under one lock; a flush between them completes the
  // first at the target, a flush_local only at the origin.
  auto run = [](const char* between) {
    return scenario(with_window(2, [&](int r, Process& p) {
      if (r != 0) return;
      p.call("MPI_Win_lock", R"("win":"0x40","target":1,"lock":"shared")").call("MPI_Put", put(1, 0));
      if (*between != '\0') p.call(between, R"("win":"0x40","target":1)");
      p.call("MPI_Put", put(1, 0, "0x9100")).call("MPI_Win_unlock", R"("win":"0x40","target":1)");
    }));
  };
  const std::string racing = run("");
  EXPECT_NE(racing.find("while its MPI_Put to rank 1 writing its window is not yet completed"), std::string::npos)
      << racing;
  EXPECT_EQ(verdict(racing), collmc::model::Verdict::UsageError) << racing;
  EXPECT_NE(run("MPI_Win_flush_local").find("is not yet completed"), std::string::npos);
  EXPECT_EQ(run("MPI_Win_flush").find("mpi_error"), std::string::npos) << run("MPI_Win_flush");
}

TEST(MpiUsageRules, TheBufferOfANonblockingCallIsInUseUntilItsWait) {
  // MPI 4.1 sec. 3.7.2: a receive buffer is not accessed, a send buffer not modified, until the request completes.
  const std::string irecv = R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":0,"tag":0,"buf":"0x5000","bytes":4)";
  const std::string isend = R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":1,"tag":0,"buf":"0x6000","bytes":4)";
  // `between(p)` adds what rank `r` does between posting its request and waiting for it.
  auto run = [&](auto between) {
    std::vector<Process> ps;
    for (int r = 0; r < 2; ++r) {
      Process p(r, 2);
      if (r == 0) p.call("MPI_Isend", isend, R"("req":"0x70")");
      if (r == 1) p.call("MPI_Irecv", irecv, R"("req":"0x71")");
      between(r, p);
      p.call("MPI_Wait", r == 0 ? R"("req":"0x70")" : R"("req":"0x71")", R"("source":0,"tag":0)");
      p.call("MPI_Finalize", "");
      ps.push_back(p);
    }
    return scenario(ps);
  };
  const std::string stored = run([](int r, Process& p) {
    if (r == 1) p.access(false, "0x5000", 4);  // reads the receive buffer: erroneous
  });
  EXPECT_NE(stored.find("the program's load of 4 bytes at 0x5000"), std::string::npos) << stored;
  EXPECT_NE(stored.find("MPI_Irecv writing its receive buffer is not yet completed by a wait or test"),
            std::string::npos)
      << stored;
  EXPECT_NE(stored.find("(MPI 4.1 sec. 3.7.2)"), std::string::npos) << stored;
  EXPECT_EQ(verdict(stored), collmc::model::Verdict::UsageError) << stored;
  const std::string modified = run([](int r, Process& p) {
    if (r == 0) p.access(true, "0x6000", 4);  // modifies the send buffer: erroneous
  });
  EXPECT_NE(modified.find("MPI_Isend reading its send buffer is not yet completed"), std::string::npos) << modified;
  // Reading a send buffer is allowed (since MPI 3.0); other bytes, or after the wait, too.
  EXPECT_EQ(run([](int r, Process& p) {
              if (r == 0) p.access(false, "0x6000", 4);
            }).find("mpi_error"),
            std::string::npos);
  EXPECT_EQ(run([](int r, Process& p) {
              if (r == 1) p.access(true, "0x5004", 4);
            }).find("mpi_error"),
            std::string::npos);
  const std::string sent = run([](int r, Process& p) {
    if (r == 1)
      p.call("MPI_Send", R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":-2,"tag":0,"buf":"0x5000","bytes":4)");
  });
  EXPECT_EQ(sent.find("mpi_error"), std::string::npos) << "MPI_PROC_NULL moves no data: " << sent;
  const std::string self = run([](int r, Process& p) {
    if (r == 1)
      p.call("MPI_Send", R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":1,"tag":5,"buf":"0x5000","bytes":4)");
  });
  // Another point-to-point call on those bytes is not judged (MPICH's tests post receives into one buffer).
  EXPECT_EQ(self.find("is not yet completed"), std::string::npos) << self;
}

TEST(MpiImport, AnAccessLineOfAnotherShapeIsAnErrorWithItsLine) {
  Process p(0, 1);
  p.access(true, "0x9000", 4);
  std::string text = p.text();
  text.replace(text.find(R"("call":"store")"), 14, R"("call":"write")");
  try {
    emit_scenario(read_recorder_buffers({{"rank0.jsonl", text}}));
    FAIL() << "no error";
  } catch (const collmc::traces::TraceInputError& e) {
    EXPECT_EQ(e.line(), 4);
    EXPECT_NE(e.message().find(R"(expected "call" to be "load" or "store")"), std::string::npos) << e.message();
  }
}

TEST(MpiUsageRules, ArgumentsAndRequests) {
  std::vector<Process> ps;
  for (int r = 0; r < 2; ++r) {
    Process p(r, 2);
    p.call("MPI_Bcast", R"("comm":"0x10","count":1,"dtype":"MPI_INT","root":)" + std::string(r == 0 ? "2" : "0"));
    p.call("MPI_Allreduce", R"("comm":"0x30","count":1,"dtype":"MPI_INT","op":"sum")");
    p.call("MPI_Isend", R"("comm":"0x10","count":1,"dtype":"MPI_DATATYPE_NULL","peer":-2,"tag":-1)", R"("req":"0x77")");
    p.call("MPI_Finalize", "");
    ps.push_back(p);
  }
  const std::string s = scenario(ps);
  EXPECT_NE(s.find("MPI_Bcast with root 2 on a communicator of 2 ranks"), std::string::npos) << s;
  // A collective on MPI_COMM_NULL is written as the program made it; the semantics reports it (mpi_rules_test.cpp).
  EXPECT_EQ(s.find("MPI_Allreduce on MPI_COMM_NULL"), std::string::npos) << s;
  EXPECT_NE(s.find("all_reduce null "), std::string::npos) << s;
  EXPECT_NE(s.find("MPI_Isend with MPI_DATATYPE_NULL"), std::string::npos) << s;
  EXPECT_NE(s.find("MPI_Isend with tag -1"), std::string::npos) << s;
  // The request left at MPI_Finalize: `mpi_finalize` inside the group of what is not waited for, which the
  // semantics judges (request_not_completed, mpi_rules_test.cpp); the comment names the handle.
  EXPECT_NE(s.find("group {\n    # not expressible: the request handles MPI_Finalize leaves never completed by a "
                   "wait or test, nor freed: MPI_Isend (0x77)  # rank0.jsonl:10\n    mpi_finalize"),
            std::string::npos)
      << s;
  // The same calls, correct: a root in range, the world, a named type, a tag, a wait.
  std::vector<Process> good;
  for (int r = 0; r < 2; ++r) {
    Process p(r, 2);
    p.call("MPI_Bcast", R"("comm":"0x10","count":1,"dtype":"MPI_INT","root":1)");
    p.call("MPI_Isend", R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":-2,"tag":5)", R"("req":"0x77")");
    p.call("MPI_Wait", R"("req":"0x77")", R"("source":-1,"tag":-1)");
    p.call("MPI_Finalize", "");
    good.push_back(p);
  }
  const std::string g = scenario(good);
  EXPECT_EQ(g.find("mpi_error"), std::string::npos) << g;
  EXPECT_EQ(verdict(g), collmc::model::Verdict::Safe) << g;
}

// Issue 32 item 3: the arguments of a call the import writes as a statement (its communicator, datatype, op,
// tag) are written as the program passed them, and the semantics judges them (model/mpi_rules.def): the
// imported scenario says `dtype=null`, not an mpi_error, and the check gives the hand-written verdict.
TEST(MpiUsageRules, ArgumentsAStatementCarriesAreJudgedByTheSemantics) {
  auto run = [](const std::string& bcast_dtype, const std::string& op, int tag, int64_t tag_ub = 32767) {
    std::vector<Process> ps;
    for (int r = 0; r < 2; ++r) {
      Process p(r, 2, tag_ub);
      p.call("MPI_Bcast", R"("comm":"0x10","count":1,"dtype":")" + bcast_dtype + R"(","root":0)");
      p.call("MPI_Allreduce", R"("comm":"0x10","count":1,"dtype":"MPI_INT","op":")" + op + "\"");
      if (r == 0)
        p.call("MPI_Send", R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":1,"tag":)" + std::to_string(tag));
      if (r == 1)
        p.call("MPI_Recv", R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":0,"tag":-1)", R"("source":0,"tag":0)");
      p.call("MPI_Finalize", "");
      ps.push_back(p);
    }
    return scenario(ps);
  };
  const std::string null_type = run("MPI_DATATYPE_NULL", "sum", 1);
  EXPECT_NE(null_type.find("broadcast world"), std::string::npos) << null_type;
  EXPECT_NE(null_type.find("dtype=null"), std::string::npos) << null_type;
  EXPECT_EQ(null_type.find("mpi_error"), std::string::npos) << null_type;
  const auto checked = collmc::testing::check_text(null_type);
  EXPECT_EQ(checked.verdict, collmc::model::Verdict::UsageError) << null_type;
  ASSERT_TRUE(checked.violation);
  EXPECT_NE(checked.violation->message.find("a null handle is no valid datatype (MPI 4.1 sec. 2.5.4, 3.2.2)"),
            std::string::npos)
      << checked.violation->message;

  const std::string null_op = run("MPI_INT", "null", 1);
  EXPECT_NE(null_op.find("op=null"), std::string::npos) << null_op;
  EXPECT_EQ(verdict(null_op), collmc::model::Verdict::UsageError) << null_op;

  const std::string negative = run("MPI_INT", "sum", -7);
  EXPECT_NE(negative.find("tag=-7"), std::string::npos) << negative;
  EXPECT_EQ(negative.find("mpi_error"), std::string::npos) << negative;
  EXPECT_EQ(verdict(negative), collmc::model::Verdict::UsageError) << negative;

  // The library's MPI_TAG_UB as the run reported it: 40000 is above the trace's 32767.
  const std::string above = run("MPI_INT", "sum", 40000);
  EXPECT_NE(above.find("tag=40000"), std::string::npos) << above;
  EXPECT_EQ(above.find("set mpi_tag_ub"), std::string::npos) << above;  // 32767: the default
  EXPECT_EQ(verdict(above), collmc::model::Verdict::UsageError) << above;

  const std::string larger_bound = run("MPI_INT", "sum", 40000, 65535);
  EXPECT_NE(larger_bound.find("set mpi_tag_ub = 65535"), std::string::npos) << larger_bound;
  EXPECT_EQ(verdict(larger_bound), collmc::model::Verdict::Safe) << larger_bound;

  const std::string fine = run("MPI_INT", "sum", 3);
  EXPECT_EQ(fine.find("mpi_error"), std::string::npos) << fine;
  EXPECT_EQ(verdict(fine), collmc::model::Verdict::Safe) << fine;
}

// A v-collective records no single count (-1): its MPI_DATATYPE_NULL is still written, and judged (MBI's
// InvalidParam_DataNull_Allgatherv_nok was missed while the import wrote `dtype=any` for it).
TEST(MpiUsageRules, ANullTypeOfAVCollectiveIsWrittenWhateverItsCount) {
  auto run = [](const std::string& dtype) {
    std::vector<Process> ps;
    for (int r = 0; r < 2; ++r) {
      Process p(r, 2);
      p.call("MPI_Allgatherv", R"("comm":"0x10","count":-1,"dtype":")" + dtype + "\"");
      p.call("MPI_Finalize", "");
      ps.push_back(p);
    }
    return scenario(ps);
  };
  const std::string null_type = run("MPI_DATATYPE_NULL");
  EXPECT_NE(null_type.find("dtype=null"), std::string::npos) << null_type;
  EXPECT_EQ(verdict(null_type), collmc::model::Verdict::UsageError) << null_type;
  const std::string named = run("MPI_INT");
  EXPECT_EQ(named.find("dtype=null"), std::string::npos) << named;
  EXPECT_EQ(verdict(named), collmc::model::Verdict::Safe) << named;
}

// A v-collective's sides as the recorder writes them (count -1; `v_send_*` and `v_recv_*`: each side's type and
// its least and greatest count). MPI matches each pair's send and receive signatures (MPI 4.1 sec. 6.7, 6.8),
// not one count across the ranks.
std::string v_sides(const std::string& send_type, int send_min, int send_max, const std::string& recv_type,
                    int recv_min, int recv_max) {
  return R"("comm":"0x10","count":-1,"dtype":")" + send_type + R"(","v_send_dtype":")" + send_type +
         R"(","v_send_min":)" + std::to_string(send_min) + R"(,"v_send_max":)" + std::to_string(send_max) +
         R"(,"v_recv_dtype":")" + recv_type + R"(","v_recv_min":)" + std::to_string(recv_min) + R"(,"v_recv_max":)" +
         std::to_string(recv_max);
}

// MBI's ParamMatching_Data_Allgatherv_nok: odd ranks pass MPI_FLOAT, even ranks MPI_INT, one element each: rank
// 0's int is received as a float. Found again (the import wrote `dtype=any` for any count of -1); the same
// types with counts that differ by rank (rank r sends r + 1 elements, every rank receives 1 and 2) are legal.
TEST(MpiUsageRules, AVCollectivesTypesAreComparedAcrossRanksNotItsCounts) {
  auto run = [](const std::string& call, bool float_on_odd, bool counts_differ) {
    std::vector<Process> ps;
    for (int r = 0; r < 2; ++r) {
      Process p(r, 2);
      const std::string type = float_on_odd && r % 2 == 1 ? "MPI_FLOAT" : "MPI_INT";
      const int send = counts_differ ? r + 1 : 1;
      const std::string in = call == "MPI_Allgatherv" ? v_sides(type, send, send, type, 1, counts_differ ? 2 : 1)
                                                      : v_sides(type, 1, counts_differ ? 2 : 1, type, 1, 2);
      p.call(call, in);
      p.call("MPI_Finalize", "");
      ps.push_back(p);
    }
    return scenario(ps);
  };
  for (const std::string call : {"MPI_Allgatherv", "MPI_Alltoallv"}) {
    const std::string wrong = run(call, true, false);
    EXPECT_NE(wrong.find("dtype=float32"), std::string::npos) << wrong;
    EXPECT_EQ(verdict(wrong), collmc::model::Verdict::Mismatch) << wrong;
    const std::string fine = run(call, false, true);
    EXPECT_NE(fine.find("dtype=int32"), std::string::npos) << fine;
    EXPECT_EQ(fine.find("count="), std::string::npos) << fine;  // a v-collective has no one count
    EXPECT_EQ(verdict(fine), collmc::model::Verdict::Safe) << fine;
  }
}

// A pair with a zero count exchanges nothing, so its types are not matched: an MPI_Alltoallv where rank 0
// sends floats and receives ints and rank 1 the reverse is legal when neither sends to itself (a zero count
// there). With every count above zero the same types break each rank's pair with itself.
TEST(MpiUsageRules, AVCollectiveWithAZeroCountLeavesItsTypesUncompared) {
  auto run = [](int self_count) {
    std::vector<Process> ps;
    for (int r = 0; r < 2; ++r) {
      Process p(r, 2);
      const std::string send = r == 0 ? "MPI_FLOAT" : "MPI_INT", recv = r == 0 ? "MPI_INT" : "MPI_FLOAT";
      p.call("MPI_Alltoallv", v_sides(send, self_count, 2, recv, self_count, 2));
      p.call("MPI_Finalize", "");
      ps.push_back(p);
    }
    return scenario(ps);
  };
  const std::string legal = run(0);
  EXPECT_NE(legal.find("dtype=any"), std::string::npos) << legal;
  EXPECT_EQ(verdict(legal), collmc::model::Verdict::Safe) << legal;
  const std::string wrong = run(2);
  EXPECT_EQ(verdict(wrong), collmc::model::Verdict::Mismatch) << wrong;
  // A trace of a recorder that wrote no sides (older traces): nothing compared, as before.
  std::vector<Process> old;
  for (int r = 0; r < 2; ++r) {
    Process p(r, 2);
    p.call("MPI_Allgatherv",
           std::string(R"("comm":"0x10","count":-1,"dtype":")") + (r == 0 ? "MPI_INT" : "MPI_FLOAT") + "\"");
    p.call("MPI_Finalize", "");
    old.push_back(p);
  }
  EXPECT_EQ(verdict(scenario(old)), collmc::model::Verdict::Safe) << scenario(old);
}

TEST(MpiUsageRules, BlockingAndNonblockingCollectivesOfOneKindMismatch) {
  std::vector<Process> ps;
  for (int r = 0; r < 2; ++r) {
    Process p(r, 2);
    if (r == 0) {
      p.call("MPI_Iallreduce", R"("comm":"0x10","count":1,"dtype":"MPI_INT","op":"sum")", R"("req":"0x77")");
      p.call("MPI_Wait", R"("req":"0x77")", R"("source":-1,"tag":-1)");
    } else {
      p.call("MPI_Allreduce", R"("comm":"0x10","count":1,"dtype":"MPI_INT","op":"sum")");
    }
    p.call("MPI_Finalize", "");
    ps.push_back(p);
  }
  const std::string s = scenario(ps);
  EXPECT_NE(s.find("call=Iallreduce"), std::string::npos) << s;
  EXPECT_EQ(verdict(s), collmc::model::Verdict::Mismatch) << s;
}

// Issue 26: tags, probes and persistent requests as the import writes them, each in both outcomes.
std::string p2p(int peer, int tag) {
  return R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":)" + std::to_string(peer) + R"(,"tag":)" +
         std::to_string(tag);
}

TEST(MpiImport, TagsAndAnyTag) {
  auto run = [](int recv_tag) {
    Process a(0, 2), b(1, 2);
    a.call("MPI_Send", p2p(1, 3)).call("MPI_Finalize", "");
    b.call("MPI_Recv", p2p(0, recv_tag), R"("source":0,"tag":3)").call("MPI_Finalize", "");
    return scenario({a, b});
  };
  const std::string same = run(3);
  EXPECT_NE(same.find("send world 1 buf count=1 dtype=int32 tag=3"), std::string::npos) << same;
  EXPECT_EQ(verdict(same), collmc::model::Verdict::Safe) << same;
  const std::string any = run(-1);  // the recorder writes MPI_ANY_TAG as -1
  EXPECT_NE(any.find("tag=any"), std::string::npos) << any;
  EXPECT_EQ(verdict(any), collmc::model::Verdict::Safe) << any;
  EXPECT_EQ(verdict(run(4)), collmc::model::Verdict::Deadlock);
}

TEST(MpiImport, ProbeWaitsForAMessage) {
  auto run = [](bool probe_first) {
    Process a(0, 2), b(1, 2);
    if (probe_first) a.call("MPI_Probe", R"("comm":"0x10","peer":1,"tag":0)", R"("source":1,"tag":0)");
    a.call("MPI_Send", p2p(1, 0)).call("MPI_Recv", p2p(1, 0), R"("source":1,"tag":0)").call("MPI_Finalize", "");
    b.call("MPI_Probe", R"("comm":"0x10","peer":0,"tag":0)", R"("source":0,"tag":0)")
        .call("MPI_Recv", p2p(0, 0), R"("source":0,"tag":0)")
        .call("MPI_Send", p2p(0, 0))
        .call("MPI_Finalize", "");
    return scenario({a, b});
  };
  const std::string ok = run(false);
  EXPECT_NE(ok.find("probe world 0"), std::string::npos) << ok;
  EXPECT_EQ(verdict(ok), collmc::model::Verdict::Safe) << ok;
  EXPECT_EQ(verdict(run(true)), collmc::model::Verdict::Deadlock);
}

TEST(MpiImport, PersistentRequestsBecomeTheOperationsTheyStart) {
  // Rank 0 sends through a persistent request started twice; rank 1 receives through one, started twice
  // (or, MBI's MissingStart, once: its second wait is on an inactive request and returns at once).
  auto run = [](int receiver_starts, bool sender_waits) {
    Process a(0, 2), b(1, 2);
    a.call("MPI_Send_init", p2p(1, 5), R"("req":"0x70")");
    for (int k = 0; k < 2; ++k) {
      a.call("MPI_Start", R"("req":"0x70")");
      if (sender_waits) a.call("MPI_Wait", R"("req":"0x70")", R"("source":-1,"tag":-1)");
    }
    a.call("MPI_Request_free", R"("req":"0x70")").call("MPI_Finalize", "");
    b.call("MPI_Recv_init", p2p(0, 5), R"("req":"0x80")");
    for (int k = 0; k < 2; ++k) {
      if (k < receiver_starts) b.call("MPI_Startall", R"("n":1,"reqs":"0x80")");
      b.call("MPI_Wait", R"("req":"0x80")", R"("source":0,"tag":5)");
    }
    b.call("MPI_Request_free", R"("req":"0x80")").call("MPI_Finalize", "");
    return scenario({a, b});
  };
  const std::string ok = run(2, true);
  size_t sends = 0;
  for (size_t at = ok.find("send world 1 buf count=1 dtype=int32 tag=5"); at != std::string::npos;
       at = ok.find("send world 1 buf count=1 dtype=int32 tag=5", at + 1))
    ++sends;
  EXPECT_EQ(sends, 2u) << ok;
  EXPECT_EQ(ok.find("observed hung"), std::string::npos) << ok;
  EXPECT_EQ(verdict(ok), collmc::model::Verdict::Safe) << ok;
  const std::string missing_start = run(1, true);
  EXPECT_EQ(verdict(missing_start), collmc::model::Verdict::Deadlock) << missing_start;
  // Started and freed, never waited for: not a hang of a run whose calls all returned (MPI 4.1 sec. 3.7.3).
  const std::string freed = run(2, false);
  EXPECT_EQ(freed.find("observed hung"), std::string::npos) << freed;
  // Freed while active is no error: their group ends at MPI_Finalize, before it (not inside: that would be
  // request_not_completed).
  EXPECT_NE(freed.find("freed while active, waited for at MPI_Finalize"), std::string::npos) << freed;
  EXPECT_NE(freed.find("  }\n  mpi_finalize"), std::string::npos) << freed;
  EXPECT_EQ(verdict(freed), collmc::model::Verdict::Safe) << freed;
}

TEST(MpiImport, AStartedRequestNeverCompletedIsAUsageError) {
  Process a(0, 2), b(1, 2);
  a.call("MPI_Send_init", p2p(1, 0), R"("req":"0x70")").call("MPI_Start", R"("req":"0x70")").call("MPI_Finalize", "");
  b.call("MPI_Recv", p2p(0, 0), R"("source":0,"tag":0)").call("MPI_Finalize", "");
  const std::string s = scenario({a, b});
  EXPECT_NE(s.find("never completed"), std::string::npos) << s;
  EXPECT_EQ(verdict(s), collmc::model::Verdict::UsageError) << s;
}

// ---- issue 32: MPI as the standard says ------------------------------------------------------------------

// The call table (mpi_calls.def) names each operations.def row's MPI function with that row's own kind.
TEST(MpiCallTable, AgreesWithTheOperationTable) {
  size_t named = 0;
  for (const auto& op : collmc::model::kOperations) {
    if (op.mpi_name.empty()) continue;
    ++named;
    const auto row = collmc::traces::mpi_call_of(op.mpi_name);
    ASSERT_TRUE(row.has_value()) << op.mpi_name;
    EXPECT_EQ(row->kind, collmc::traces::call_kind_of(op.kind)) << op.mpi_name;
  }
  EXPECT_GE(named, 10u);
  for (const auto& row : collmc::traces::mpi_calls()) {
    EXPECT_EQ(&collmc::traces::mpi_call_info(row.call) - collmc::traces::mpi_calls().data(),
              static_cast<std::ptrdiff_t>(row.call));
    EXPECT_EQ(collmc::traces::mpi_call_of(row.name)->call, row.call) << row.name;
  }
  EXPECT_FALSE(collmc::traces::mpi_call_of("MPI_Not_a_call").has_value());
}

TEST(MpiImport, BufferedSendsCompleteLocally) {
  // A head-to-head exchange: with MPI_Bsend both sends return and both receives take them (MPI 4.1 sec.
  // 3.4); with MPI_Ssend both wait for the other's receive.
  auto run = [](const char* send) {
    Process a(0, 2), b(1, 2);
    a.call(send, p2p(1, 1)).call("MPI_Recv", p2p(1, 1), R"("source":1,"tag":1)").call("MPI_Finalize", "");
    b.call(send, p2p(0, 1)).call("MPI_Recv", p2p(0, 1), R"("source":0,"tag":1)").call("MPI_Finalize", "");
    return scenario({a, b});
  };
  const std::string buffered = run("MPI_Bsend");
  EXPECT_NE(buffered.find("mode=buffered"), std::string::npos) << buffered;
  EXPECT_EQ(verdict(buffered), collmc::model::Verdict::Safe) << buffered;
  EXPECT_EQ(verdict(run("MPI_Ssend")), collmc::model::Verdict::Deadlock);
}

TEST(MpiImport, DerivedTypesAreComparedByTheirFlattenedSignatures) {
  // Rank 0 sends COUNT of a derived type whose signature the recorder flattened; rank 1 receives MPI_INT.
  auto run = [](const std::string& sig, int count, int recv_count) {
    Process a(0, 2), b(1, 2);
    a.call("MPI_Send", R"("comm":"0x10","count":)" + std::to_string(count) + R"(,"dtype":"","dtype_sig":")" + sig +
                           R"(","peer":1,"tag":0)")
        .call("MPI_Finalize", "");
    b.call("MPI_Recv",
           R"("comm":"0x10","count":)" + std::to_string(recv_count) + R"(,"dtype":"MPI_INT","peer":0,"tag":0)",
           R"("source":0,"tag":0)")
        .call("MPI_Finalize", "");
    return scenario({a, b});
  };
  const std::string four = run("MPI_INT*4", 1, 4);  // contiguous(4, MPI_INT) against 4 MPI_INT
  EXPECT_NE(four.find("send world 1 buf count=4 dtype=int32"), std::string::npos) << four;
  EXPECT_EQ(verdict(four), collmc::model::Verdict::Safe) << four;
  EXPECT_EQ(verdict(run("MPI_INT*4", 2, 100)), collmc::model::Verdict::Safe);    // a larger receive (sec. 3.2.4)
  EXPECT_EQ(verdict(run("MPI_INT*4", 2, 4)), collmc::model::Verdict::Mismatch);  // 8 ints into 4: truncated
  EXPECT_EQ(verdict(run("MPI_INT*2,MPI_DOUBLE*1", 1, 4)), collmc::model::Verdict::Mismatch);
  EXPECT_EQ(verdict(run("", 1, 4)), collmc::model::Verdict::Safe);  // a signature the recorder could not say
  // One unit repeated is one form, however the types were built: {int, double} x 2 == {int, double, int, double}.
  Process a(0, 2), b(1, 2);
  a.call("MPI_Bcast", R"("comm":"0x10","count":2,"dtype":"","dtype_sig":"MPI_INT*1,MPI_DOUBLE*1","root":0)");
  b.call("MPI_Bcast",
         R"("comm":"0x10","count":1,"dtype":"","dtype_sig":"MPI_INT*1,MPI_DOUBLE*1,MPI_INT*1,MPI_DOUBLE*1","root":0)");
  const std::string bcast = scenario({a, b});
  EXPECT_NE(bcast.find("dtype=mpi_sig_"), std::string::npos) << bcast;
  EXPECT_EQ(verdict(bcast), collmc::model::Verdict::Safe) << bcast;
}

TEST(MpiImport, CommunicatorsOfEveryConstructorAndHandlesReusedAfterAFree) {
  // MPI_Comm_create_group (its group only), MPI_Intercomm_create (both groups; peers are remote ranks),
  // MPI_Intercomm_merge, each freed; the handle value 0x50 comes back for the next communicator.
  auto run = [](bool merge_on_both) {
    std::vector<Process> ps;
    for (int r = 0; r < 2; ++r) {
      Process p(r, 2);
      p.call("MPI_Comm_create_group", R"("comm":"0x10","tag":7,"group_size":2)",
             R"("newcomm":"0x50","rank":)" + std::to_string(r) + R"(,"size":2,"members":"0,1")");
      p.call("MPI_Barrier", R"("comm":"0x50","count":0,"dtype":"MPI_DATATYPE_NULL")");
      p.call("MPI_Comm_free", R"("comm":"0x50")");
      p.call("MPI_Comm_split", R"("comm":"0x10","color":)" + std::to_string(r) + R"(,"key":0)",
             R"("newcomm":"0x60","rank":0,"size":1,"members":")" + std::to_string(r) + "\"");
      p.call("MPI_Intercomm_create", R"("comm":"0x60","local_leader":0,"remote_leader":1,"peer_comm":"0x10","tag":9)",
             R"("newcomm":"0x50","rank":0,"size":1,"members":")" + std::to_string(r) + R"(","inter":1,"remote":")" +
                 std::to_string(1 - r) + "\"");
      const std::string send = R"("comm":"0x50","count":1,"dtype":"MPI_INT","peer":0,"tag":3)";
      if (r == 1) p.call("MPI_Recv", send, R"("source":0,"tag":3)");  // peer 0 of the remote group
      p.call("MPI_Send", send);
      if (r == 0) p.call("MPI_Recv", send, R"("source":0,"tag":3)");
      if (merge_on_both || r == 0)
        p.call("MPI_Intercomm_merge", R"("comm":"0x50","high":0)",
               R"("newcomm":"0x70","rank":)" + std::to_string(r) + R"(,"size":2,"members":"0,1")");
      p.call("MPI_Comm_free", R"("comm":"0x50")").call("MPI_Finalize", "");
      ps.push_back(p);
    }
    return scenario(ps);
  };
  const std::string ok = run(true);
  EXPECT_EQ(ok.find("already destroyed"), std::string::npos) << ok;
  EXPECT_EQ(ok.find("never created"), std::string::npos) << ok;
  EXPECT_NE(ok.find("send inter_0_1_t9_0 1 buf"), std::string::npos) << ok;
  EXPECT_EQ(verdict(ok), collmc::model::Verdict::Safe) << ok;
  EXPECT_EQ(verdict(run(false)), collmc::model::Verdict::Deadlock);
}

TEST(MpiImport, CancelledReceivesAndMatchedProbes) {
  // A wildcard receive that nothing will match, cancelled (the wait's status says so): it moved no message.
  auto run = [](bool cancelled) {
    Process a(0, 2), b(1, 2);
    a.call("MPI_Irecv", R"("comm":"0x10","count":1,"dtype":"MPI_INT","peer":-1,"tag":99)", R"("req":"0x90")")
        .call("MPI_Cancel", R"("req":"0x90")")
        .call("MPI_Wait", R"("req":"0x90")",
              std::string(R"("source":-1,"tag":-1)") + (cancelled ? R"(,"cancelled":1)" : ""))
        .call("MPI_Finalize", "");
    // Rank 1: a matched probe takes rank 0's... nothing here; it only finalizes.
    b.call("MPI_Finalize", "");
    return scenario({a, b});
  };
  EXPECT_EQ(verdict(run(true)), collmc::model::Verdict::Safe) << run(true);
  EXPECT_EQ(verdict(run(false)), collmc::model::Verdict::Deadlock);
  // MPI_Mprobe is the receive (it dequeues the message); MPI_Mrecv only copies it.
  auto probe = [](bool sent) {
    Process a(0, 2), b(1, 2);
    if (sent) a.call("MPI_Send", p2p(1, 5));
    a.call("MPI_Finalize", "");
    b.call("MPI_Mprobe", R"("comm":"0x10","peer":-1,"tag":5)", R"("message":"0xa0","source":0,"tag":5)")
        .call("MPI_Mrecv", R"("message":"0xa0","count":1,"dtype":"MPI_INT")", R"("source":0,"tag":5)")
        .call("MPI_Finalize", "");
    return scenario({a, b});
  };
  EXPECT_EQ(verdict(probe(true)), collmc::model::Verdict::Safe) << probe(true);
  EXPECT_EQ(verdict(probe(false)), collmc::model::Verdict::Deadlock);
}

TEST(MpiImport, AWindowOutlivesItsCommunicatorAndALockEpochMayStandBetweenFences) {
  auto run = [](bool fence_lock) {
    std::vector<Process> ps;
    for (int r = 0; r < 2; ++r) {
      Process p(r, 2);
      p.call("MPI_Comm_dup", R"("comm":"0x10")",
             R"("newcomm":"0x50","rank":)" + std::to_string(r) + R"(,"size":2,"members":"0,1")");
      p.call("MPI_Win_create", R"("comm":"0x50","base":"0x1000","size":64,"disp_unit":4)", R"("win":"0x40")");
      p.call("MPI_Comm_free", R"("comm":"0x50")");
      p.call("MPI_Win_fence", R"("win":"0x40","assert":0,"nosucceed":0)");
      if (fence_lock)
        p.call("MPI_Win_lock", R"("win":"0x40","target":1,"lock":"exclusive")")
            .call("MPI_Put", put(1, r))
            .call("MPI_Win_unlock", R"("win":"0x40","target":1)");
      else
        p.call("MPI_Put", put(1, r));  // an epoch of the fence, closed by nothing before the free
      if (fence_lock) p.call("MPI_Win_fence", R"("win":"0x40","assert":0,"nosucceed":0)");
      p.call("MPI_Win_free", R"("win":"0x40")").call("MPI_Finalize", "");
      ps.push_back(p);
    }
    return scenario(ps);
  };
  const std::string ok = run(true);
  EXPECT_EQ(ok.find("mpi_error"), std::string::npos) << ok;
  EXPECT_EQ(verdict(ok), collmc::model::Verdict::Safe) << ok;
  EXPECT_EQ(verdict(run(false)), collmc::model::Verdict::UsageError);
}

TEST(MpiImport, CallsTheTableDoesNotHoldAreNamedAndJudgeNothing) {
  Process a(0, 2), b(1, 2);
  a.call("MPI_Sendrecv_replace", R"("comm":"0x10")").call("MPI_Finalize", "");
  b.call("MPI_Finalize", "");
  std::vector<std::pair<std::string, std::string>> files = {{"rank0.jsonl", a.text()}, {"rank1.jsonl", b.text()}};
  const auto trace = read_recorder_buffers(files);
  bool named = false;
  for (const auto& n : trace.notes)
    named |= n.find("not modelled") != std::string::npos && n.find("MPI_Sendrecv_replace") != std::string::npos;
  EXPECT_TRUE(named);
  EXPECT_EQ(verdict(emit_scenario(trace)), collmc::model::Verdict::Safe);
}

// MPI 4.1 sec. 11.6.2: a thread that enters a collective on a communicator while another thread of the process
// is inside one on it issued the two in no order; one that enters after the other returned, or a
// point-to-point call beside a collective, is correct.
TEST(MpiUsageRules, TwoThreadsInCollectivesOnOneCommunicatorAtOnce) {
  const std::string bcast = R"("comm":"0x10","root":0,"count":1,"dtype":"MPI_INT","buf":"0x9000","bytes":4)";
  const std::string barrier = R"("comm":"0x10")";
  // Rank 0: thread 2 is inside MPI_Barrier (entered at 10) when thread 1 enters MPI_Bcast at 11, or (ordered)
  // after the barrier returned at 20.
  auto rank0 = [&](bool overlap) {
    Process p(0, 2);
    const int s = p.seq();
    p.event(true, s + 1, 2, 110, "MPI_Barrier", barrier);
    if (overlap) p.event(true, s + 2, 1, 111, "MPI_Bcast", bcast);
    p.event(false, s + 1, 2, 120, "MPI_Barrier");
    if (!overlap) p.event(true, s + 2, 1, 121, "MPI_Bcast", bcast);
    p.event(false, s + 2, 1, 130, "MPI_Bcast").call("MPI_Finalize", "");
    return p;
  };
  Process rank1(1, 2);
  rank1.call("MPI_Barrier", barrier).call("MPI_Bcast", bcast).call("MPI_Finalize", "");
  const std::string unordered = scenario({rank0(true), rank1});
  EXPECT_NE(unordered.find("mpi_error"), std::string::npos) << unordered;
  EXPECT_NE(unordered.find("MPI 4.1 sec. 11.6.2"), std::string::npos) << unordered;
  EXPECT_EQ(verdict(unordered), collmc::model::Verdict::UsageError) << unordered;
  const std::string ordered = scenario({rank0(false), rank1});
  EXPECT_EQ(ordered.find("mpi_error"), std::string::npos) << ordered;
  EXPECT_EQ(verdict(ordered), collmc::model::Verdict::Safe) << ordered;
  // A receive on thread 1 while thread 2 is inside the barrier: MPI_THREAD_MULTIPLE allows it.
  Process p2p(0, 2);
  const int s = p2p.seq();
  p2p.event(true, s + 1, 2, 110, "MPI_Barrier", barrier)
      .event(true, s + 2, 1, 111, "MPI_Recv",
             R"("comm":"0x10","peer":1,"tag":0,"count":1,"dtype":"MPI_INT","buf":"0x9000","bytes":4)")
      .event(false, s + 1, 2, 120, "MPI_Barrier")
      .event(false, s + 2, 1, 130, "MPI_Recv", R"("source":1,"tag":0)")
      .call("MPI_Finalize", "");
  Process sender(1, 2);
  sender.call("MPI_Barrier", barrier)
      .call("MPI_Send", R"("comm":"0x10","peer":0,"tag":0,"count":1,"dtype":"MPI_INT","buf":"0x9000","bytes":4)")
      .call("MPI_Finalize", "");
  const std::string concurrent_p2p = scenario({p2p, sender});
  EXPECT_EQ(concurrent_p2p.find("mpi_error"), std::string::npos) << concurrent_p2p;
}

}  // namespace
