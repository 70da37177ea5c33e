// The rank side of the replay engine, shared by every backend: turns, progress, threads, timings.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "rank_body.h"

namespace collmc::replay {

namespace {

using Clock = std::chrono::steady_clock;

std::atomic<void (*)()> exit_hook{nullptr};

class Runner {
 public:
  Runner(const ReplayPlan& plan, int rank, SharedBlock* shared, bool free_running, RankCalls& calls)
      : plan_(plan), rank_(rank), shared_(shared), slot_(shared->ranks[rank]), free_(free_running), calls_(calls) {}

  int run() {
    try {
      const auto t0 = Clock::now();
      calls_.setup();
      slot_.setup_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      shared_->progress.fetch_add(1);  // setup is progress: a slow start is not a hang
      if (calls_.can_abort()) std::thread([this] { watch(); }).detach();
      run_thread(0);
      for (auto& t : threads_) t.join();
      threads_.clear();
      const std::string note = calls_.finish();
      std::snprintf(slot_.note, sizeof slot_.note, "%s", note.c_str());
      slot_.status.store(kFinishedOk);
      shared_->progress.fetch_add(1);
      // A finished rank stays (its communicators alive) until every rank is done, as a training
      // process does: peers blocked on it then hang, as observed, instead of failing on a closed socket.
      while (!shared_->release.load() && !shared_->abort.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return 0;
    } catch (const std::exception& e) {
      for (auto& t : threads_) t.detach();  // they may be blocked in a call; the process exits anyway
      if (shared_->abort.load()) {
        slot_.status.store(kAborted);
        return 3;
      }
      fail(e.what());
      return 2;
    }
  }

 private:
  void fail(const char* what) {
    std::snprintf(slot_.error, sizeof slot_.error, "%s", what);
    slot_.status.store(kError);
    shared_->progress.fetch_add(1);
  }

  // On the launcher's word: the backend aborts its communicators, then this process exits, at the
  // latest kAbortExitSeconds later (an abort that does not return must not keep the process).
  void watch() {
    while (!shared_->abort.load()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    slot_.status.store(kAborted);
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::duration<double>(kAbortExitSeconds));
      rank_exit(3);
    }).detach();
    calls_.abort();
    rank_exit(3);
  }

  void wait_turn(int turn) {
    while (shared_->turn.load() != turn) {
      if (shared_->abort.load()) throw RankFailure("aborted");
      calls_.waiting();
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void run_thread(int thread) {
    auto& ts = slot_.threads[thread];
    const auto& steps = plan_.ranks[static_cast<size_t>(rank_)][static_cast<size_t>(thread)].steps;
    for (const auto& step : steps) {
      if (step.turn >= 0 && !free_) wait_turn(step.turn);
      if (step.spawn_thread >= 0) {
        if (step.turn >= 0) shared_->turn.store(step.turn + 1);
        threads_.emplace_back([this, t = step.spawn_thread] {
          try {
            run_thread(t);
          } catch (const std::exception& e) {
            if (!shared_->abort.load()) fail(e.what());
          }
        });
        continue;
      }
      ts.call.store(step.calls.front());
      ts.phase.store(kPhaseEntered);
      shared_->progress.fetch_add(1);
      if (step.turn >= 0) shared_->turn.store(step.turn + 1);  // the call may block: the next turn may go
      const auto t0 = Clock::now();
      if (!host_store(step)) calls_.step(step);
      record(step.calls.front(), std::chrono::duration<double>(Clock::now() - t0).count());
      ts.phase.store(kPhaseReturned);
      shared_->progress.fetch_add(1);
    }
    ts.phase.store(kPhaseDone);
    shared_->progress.fetch_add(1);
  }

  // The host store's statements run here, for every backend, on the shared block: a real rendezvous
  // between the rank processes (as a TCPStore is), not a library call. False for any other step.
  bool host_store(const PlanStep& step) {
    if (step.group || step.calls.size() != 1) return false;
    const model::Call& c = plan_.world->calls[static_cast<size_t>(step.calls.front())];
    const model::OpForm form = model::op_form(c.kind);
    if ((form != model::OpForm::Key && form != model::OpForm::KeyRanks) || c.kind == model::OpKind::MpiError)
      return false;
    std::atomic<uint32_t>& value = shared_->store[c.key];
    uint32_t needed = 1;
    switch (c.kind) {
      case model::OpKind::StoreSet:
        value.fetch_add(1);  // counted like an arrival, as the model does
        return true;
      case model::OpKind::HostBarrier:
        value.fetch_add(1);
        needed = static_cast<uint32_t>(c.members_view.size());
        break;
      default:  // store_wait
        break;
    }
    while (value.load() < needed) {
      if (shared_->abort.load()) throw RankFailure("aborted");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
  }

  // The entry is written before the count that publishes it (a store client reads them as they come).
  void record(int call, double seconds) {
    std::lock_guard<std::mutex> lock(timing_mutex_);
    const int i = slot_.timings.load();
    if (i >= kMaxTimings) return;
    slot_.timing_call[i] = call;
    slot_.timing_seconds[i] = seconds;
    slot_.timings.store(i + 1);
  }

  const ReplayPlan& plan_;
  int rank_;
  SharedBlock* shared_;
  RankSlot& slot_;
  bool free_;
  RankCalls& calls_;
  std::vector<std::thread> threads_;
  std::mutex timing_mutex_;
};

}  // namespace

void rank_exit(int code) {
  if (auto hook = exit_hook.load()) hook();
  _exit(code);
}

void set_rank_exit_hook(void (*hook)()) { exit_hook.store(hook); }

void rank_give_up(SharedBlock* shared, int rank, const std::string& why) {
  RankSlot& slot = shared->ranks[rank];
  std::snprintf(slot.error, sizeof slot.error, "%s", why.c_str());
  slot.pid.store(static_cast<int32_t>(getpid()));
  slot.attached.store(1);
  slot.status.store(kError);
  shared->progress.fetch_add(1);
  rank_exit(2);
}

int run_rank(const ReplayPlan& plan, int rank, SharedBlock* shared, bool free_running, RankCalls& calls) {
  shared->ranks[rank].pid.store(static_cast<int32_t>(getpid()));
  shared->ranks[rank].attached.store(1);
  return Runner(plan, rank, shared, free_running, calls).run();
}

}  // namespace collmc::replay
