// The happens-before among a process's threads from its OpenMP synchronization (thread_order.h). Each thread's
// lines (MPI calls and "omp" lines, one shared seq counter) are its program order; the cross-thread edges are
// OpenMP's (OpenMP 5.1 sec. 1.4.4 "flush synchronization and happens before", 2.19): a fork orders the
// encountering thread's past before the team's implicit tasks, a join the tasks' ends before what follows the
// region, a barrier every team member's arrival before every member's departure (a member's explicit tasks run
// before it leaves: sec. 2.19.2), a mutex's release before its next acquisition (critical, omp locks,
// ordered), a task's creation before its start, its completion before the taskwait or taskgroup end that waits
// for it, a dependence's source before its sink. A vector clock per thread counts MPI calls; the threads are
// replayed until every line is taken, each one waiting where its edge's other end has not been reached.
#include "thread_order.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "mpi_calls.h"

namespace collmc::traces {
namespace {

enum class OmpWhat {
  Call,    // an MPI call of the thread
  Access,  // the program's own loads and stores since the thread's last line (an "access" line)
  ParallelBegin,
  ParallelEnd,
  ImplicitBegin,
  ImplicitEnd,
  BarrierBegin,
  BarrierEnd,
  TaskwaitBegin,
  TaskwaitEnd,
  TaskgroupBegin,
  TaskgroupEnd,
  MutexAcquired,
  MutexReleased,
  TaskCreate,
  TaskDependences,
  TaskSchedule,
  Unknown,  // a line of a newer tool: orders nothing
};

OmpWhat omp_what(const std::string& call) {
  static const std::map<std::string, OmpWhat> names = {
      {"parallel_begin", OmpWhat::ParallelBegin},
      {"parallel_end", OmpWhat::ParallelEnd},
      {"implicit_task_begin", OmpWhat::ImplicitBegin},
      {"implicit_task_end", OmpWhat::ImplicitEnd},
      {"barrier_begin", OmpWhat::BarrierBegin},
      {"barrier_end", OmpWhat::BarrierEnd},
      {"taskwait_begin", OmpWhat::TaskwaitBegin},
      {"taskwait_end", OmpWhat::TaskwaitEnd},
      {"taskgroup_begin", OmpWhat::TaskgroupBegin},
      {"taskgroup_end", OmpWhat::TaskgroupEnd},
      {"mutex_acquired", OmpWhat::MutexAcquired},
      {"mutex_released", OmpWhat::MutexReleased},
      {"task_create", OmpWhat::TaskCreate},
      {"task_dependences", OmpWhat::TaskDependences},
      {"task_schedule", OmpWhat::TaskSchedule},
  };
  auto it = names.find(call);
  return it == names.end() ? OmpWhat::Unknown : it->second;
}

// ompt_task_status_t values after which the prior task's body has ended (complete, cancel, detach).
bool task_body_ended(int64_t status) { return status == 1 || status == 3 || status == 4; }

using Clock = std::vector<uint32_t>;  // per thread: how many of its lines happened before
void join_into(Clock& a, const Clock& b) {
  for (size_t i = 0; i < a.size(); ++i) a[i] = std::max(a[i], b[i]);
}

struct Event {
  uint64_t seq = 0;
  OmpWhat what = OmpWhat::Call;
  size_t call = 0;                     // Call: the process's call index; Access: the access's index
  const RecorderLine* line = nullptr;  // an omp line
  uint64_t a = 0, b = 0;               // what the line names (region, task, wait_id, ...), by kind
  int64_t status = 0;                  // task_schedule's status
  uint32_t ordinal = 0;                // BarrierEnd: the n-th barrier of its region on this thread; mutex: rank
};

uint64_t number(const RecorderLine* l, const char* key) {
  const auto* f = recorder_field(l, key);
  if (f == nullptr) return 0;
  if (f->is_number_unsigned()) return f->get<uint64_t>();
  if (f->is_number_integer()) return static_cast<uint64_t>(f->get<int64_t>());
  if (f->is_string())
    if (auto v = parse_hex_field(f->get<std::string>())) return *v;
  return 0;
}

struct ThreadState {
  int64_t tid = 0;
  std::vector<Event> events;
  size_t at = 0;
  Clock clock;
  bool done = false;
  std::map<uint64_t, uint32_t> held;                      // wait_id -> the rank of its acquisition this thread holds
  std::vector<std::pair<uint64_t, uint64_t>> taskgroups;  // (task, seq of the taskgroup's begin)
  std::vector<size_t> calls;                              // its MPI calls, process indices in order
  std::vector<size_t> call_at;                            // where each of them is in `events`
  std::vector<uint32_t> calls_before;                     // [n]: how many of its first n events are calls
  bool omp = false;  // it is a thread of an OpenMP team (else its lines are no points: nothing orders them)
};

class Replay {
 public:
  explicit Replay(const RecordedProcess& p) : p_(p) {}

  ThreadOrder run() {
    ThreadOrder out;
    collect();
    for (const auto& t : threads_)
      if (!t.calls.empty()) out.threads.push_back(t.tid);
    // One thread, or no omp line: nothing to order (several threads that call MPI: said why). A team whose
    // other threads make no MPI call is still replayed: their loads and stores are judged by it (race rules).
    if (threads_.size() < 2) return out;
    if (p_.omp_events.empty()) {
      if (out.threads.size() > 1) out.why_not = "no thread synchronization recorded";
      return out;
    }
    for (const auto& t : threads_) {
      if (!t.calls.empty() && !t.omp) {
        out.why_not = "thread " + std::to_string(t.tid) +
                      " made MPI calls outside the OpenMP runtime (a thread of its own, whose synchronization "
                      "is not recorded)";
        return out;
      }
    }
    if (!why_not_.empty()) {
      out.why_not = why_not_;
      return out;
    }
    bool progress = true;
    while (progress) {
      progress = false;
      for (size_t t = 0; t < threads_.size() && why_not_.empty(); ++t)
        while (!threads_[t].done && why_not_.empty() && step(t)) progress = true;
    }
    for (const auto& t : threads_)
      if (!t.done && why_not_.empty())
        why_not_ = "the recorded synchronization does not close (thread " + std::to_string(t.tid) +
                   " waits for a barrier, a lock or a task that the trace does not show)";
    if (!why_not_.empty()) {
      out.why_not = why_not_;
      return out;
    }
    out.recorded = true;
    out.edges = reduce();
    out.points = std::move(points_);
    return out;
  }

 private:
  size_t thread_index(int64_t tid) {
    auto [it, fresh] = index_.try_emplace(tid, threads_.size());
    if (fresh) {
      threads_.emplace_back();
      threads_.back().tid = tid;
    }
    return it->second;
  }

  void collect() {
    enum class Source { Call, Access, Omp };
    std::vector<std::pair<uint64_t, std::pair<Source, size_t>>> all;  // seq -> (its kind, index)
    for (size_t i = 0; i < p_.calls.size(); ++i)
      all.push_back({p_.calls[i].enter->event["seq"].get<uint64_t>(), {Source::Call, i}});
    for (size_t i = 0; i < p_.accesses.size(); ++i)
      all.push_back({p_.accesses[i].line->event["seq"].get<uint64_t>(), {Source::Access, i}});
    for (size_t i = 0; i < p_.omp_events.size(); ++i)
      all.push_back({p_.omp_events[i].line->event["seq"].get<uint64_t>(), {Source::Omp, i}});
    std::sort(all.begin(), all.end());
    std::map<std::pair<size_t, uint64_t>, uint32_t> barriers;  // (thread, region) -> barrier ends so far
    std::map<uint64_t, uint32_t> acquisitions;                 // wait_id -> acquisitions so far
    for (const auto& [seq, which] : all) {
      Event e;
      e.seq = seq;
      if (which.first == Source::Call) {
        const RecordedCall& rc = p_.calls[which.second];
        const size_t t = thread_index(rc.enter->event["tid"].get<int64_t>());
        e.call = which.second;
        threads_[t].calls.push_back(which.second);
        threads_[t].call_at.push_back(threads_[t].events.size());
        threads_[t].events.push_back(e);
        continue;
      }
      if (which.first == Source::Access) {
        const RecorderLine* l = p_.accesses[which.second].line;
        e.what = OmpWhat::Access;
        e.call = which.second;
        threads_[thread_index(l->event["tid"].get<int64_t>())].events.push_back(e);
        continue;
      }
      const RecorderLine* l = p_.omp_events[which.second].line;
      const size_t t = thread_index(l->event["tid"].get<int64_t>());
      e.line = l;
      e.what = omp_what(l->event["call"].get<std::string>());
      switch (e.what) {
        case OmpWhat::ParallelBegin:
        case OmpWhat::ParallelEnd:
        case OmpWhat::ImplicitEnd:
        case OmpWhat::BarrierBegin:
          e.a = number(l, "region");
          break;
        case OmpWhat::ImplicitBegin:
          e.a = number(l, "region");
          if (number(l, "initial") == 0) {
            team_[e.a] = static_cast<uint32_t>(number(l, "team"));
            members_[e.a].insert(t);
            threads_[t].omp = true;
          } else {
            e.what = OmpWhat::Unknown;  // the initial task: no team, no fork
          }
          break;
        case OmpWhat::BarrierEnd:
          e.a = number(l, "region");
          e.ordinal = ++barriers[{t, e.a}];
          break;
        case OmpWhat::TaskwaitBegin:
        case OmpWhat::TaskwaitEnd:
        case OmpWhat::TaskgroupBegin:
        case OmpWhat::TaskgroupEnd:
          e.a = number(l, "task");
          break;
        case OmpWhat::MutexAcquired:
          e.a = number(l, "wait_id");
          e.ordinal = acquisitions[e.a]++;
          break;
        case OmpWhat::MutexReleased:
          e.a = number(l, "wait_id");
          break;
        case OmpWhat::TaskCreate:
          e.a = number(l, "task");
          e.b = number(l, "parent");
          parent_[e.a] = e.b;
          created_seq_[e.a] = seq;
          children_[e.b].push_back(e.a);
          break;
        case OmpWhat::TaskDependences:
          e.a = number(l, "task");
          dependences(e.a, l);
          break;
        case OmpWhat::TaskSchedule:
          e.a = number(l, "prior");
          e.b = number(l, "next");
          e.status = static_cast<int64_t>(number(l, "status"));
          break;
        case OmpWhat::Call:
        case OmpWhat::Access:
        case OmpWhat::Unknown:
          break;
      }
      threads_[t].events.push_back(e);
    }
    for (auto& t : threads_) {
      t.clock.assign(threads_.size(), 0);
      t.calls_before.assign(t.events.size() + 1, 0);
      for (size_t n = 0; n < t.events.size(); ++n)
        t.calls_before[n + 1] = t.calls_before[n] + (t.events[n].what == OmpWhat::Call ? 1 : 0);
    }
  }

  // A task's dependences (OpenMP 5.1 sec. 2.19.11): among the sibling tasks of one parent, in their creation
  // order, an `in` follows the last `out`/`inout` of the address, an `out`/`inout` every `in` since then (or
  // that last one). The other kinds (mutexinoutset, inoutset, doacross) order tasks in ways the lines do not
  // show: the threads are then not ordered at all.
  void dependences(uint64_t task, const RecorderLine* l) {
    if (recorder_field(l, "deps_left_out") != nullptr) {
      why_not_ = "a task with more dependences than the recorder writes";
      return;
    }
    const auto* f = recorder_field(l, "deps");
    const std::string text = f != nullptr && f->is_string() ? f->get<std::string>() : std::string();
    auto& state = deps_by_parent_[parent_[task]];
    size_t start = 0;
    while (start < text.size()) {
      size_t comma = text.find(',', start);
      const std::string dep = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      const size_t colon = dep.find(':');
      const std::string type = dep.substr(0, colon);
      const uint64_t address = colon == std::string::npos ? 0 : std::strtoull(dep.c_str() + colon + 3, nullptr, 16);
      auto& [last_out, ins] = state[address];
      if (type == "in") {
        if (last_out != 0) preds_[task].push_back(last_out);
        ins.push_back(task);
      } else if (type == "out" || type == "inout") {
        for (uint64_t x : ins) preds_[task].push_back(x);
        if (ins.empty() && last_out != 0) preds_[task].push_back(last_out);
        last_out = task;
        ins.clear();
      } else {
        why_not_ = "a task dependence of kind " + type + " (only in, out and inout are followed)";
        return;
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }

  // The clock of `m` for an edge out of region `region`: its contribution, else where its lines end (a worker
  // leaves a region's last barrier only at the next fork: a trace that ends first has no end line for it).
  const Clock* contribution(const std::map<size_t, Clock>& given, size_t m) const {
    auto it = given.find(m);
    if (it != given.end()) return &it->second;
    if (threads_[m].done) return &threads_[m].clock;
    return nullptr;
  }
  // Every member of `region` (all of its team seen) gave a clock: their join, else null.
  bool all_members(uint64_t region, const std::map<size_t, Clock>& given, size_t self, Clock& into) const {
    auto team = team_.find(region);
    auto members = members_.find(region);
    if (team == team_.end() || members == members_.end() || members->second.size() < team->second) return false;
    for (size_t m : members->second) {
      if (m == self) continue;
      const Clock* c = contribution(given, m);
      if (c == nullptr) return false;
    }
    for (size_t m : members->second)
      if (m != self) join_into(into, *contribution(given, m));
    return true;
  }

  bool completed(uint64_t task) const { return completed_.count(task) > 0; }

  // One line of thread t; false when it must wait for another thread.
  bool step(size_t t) {
    ThreadState& th = threads_[t];
    if (th.at == th.events.size()) {
      th.done = true;
      return true;
    }
    const Event& e = th.events[th.at];
    switch (e.what) {
      case OmpWhat::Access:
        if (!th.omp) break;
        [[fallthrough]];
      case OmpWhat::Call:
        points_[e.seq] = ThreadOrder::LinePoint{static_cast<uint32_t>(t), static_cast<uint32_t>(th.at), th.clock};
        break;
      case OmpWhat::ParallelBegin:
        fork_[e.a] = th.clock;
        break;
      case OmpWhat::ImplicitBegin: {
        auto it = fork_.find(e.a);
        if (it == fork_.end()) return false;
        join_into(th.clock, it->second);
        break;
      }
      case OmpWhat::ImplicitEnd:
        ends_[e.a][t] = th.clock;
        break;
      case OmpWhat::ParallelEnd: {
        Clock joined = th.clock;
        if (!all_members(e.a, ends_[e.a], t, joined)) return false;
        th.clock = joined;
        break;
      }
      case OmpWhat::BarrierEnd: {
        auto& given = barrier_[{e.a, e.ordinal}];
        given[t] = th.clock;
        Clock joined = th.clock;
        if (team_.count(e.a) == 0) break;  // a barrier outside any team this trace shows: binds this thread only
        if (!all_members(e.a, given, t, joined)) return false;
        th.clock = joined;
        break;
      }
      case OmpWhat::MutexAcquired:
        if (e.ordinal > 0) {
          auto it = released_.find({e.a, e.ordinal - 1});
          if (it == released_.end()) return false;
          join_into(th.clock, it->second);
        }
        th.held[e.a] = e.ordinal;
        break;
      case OmpWhat::MutexReleased: {
        auto it = th.held.find(e.a);
        if (it == th.held.end()) {
          why_not_ = "a mutex released by a thread that the trace does not show acquiring it";
          return false;
        }
        released_[{e.a, it->second}] = th.clock;
        th.held.erase(it);
        break;
      }
      case OmpWhat::TaskCreate:
        created_[e.a] = th.clock;
        break;
      case OmpWhat::TaskSchedule: {
        if (task_body_ended(e.status)) completed_[e.a] = th.clock;
        if (created_seq_.count(e.b) > 0 && started_.count(e.b) == 0) {
          auto c = created_.find(e.b);
          if (c == created_.end()) return false;
          for (uint64_t pred : preds_[e.b])
            if (!completed(pred)) return false;
          join_into(th.clock, c->second);
          for (uint64_t pred : preds_[e.b]) join_into(th.clock, completed_[pred]);
          started_.insert(e.b);
        }
        break;
      }
      case OmpWhat::TaskwaitEnd: {
        std::vector<uint64_t> waited;
        for (uint64_t child : children_[e.a])
          if (created_seq_[child] < e.seq) waited.push_back(child);
        if (!all_completed(waited, th.clock)) return false;
        break;
      }
      case OmpWhat::TaskgroupBegin:
        th.taskgroups.emplace_back(e.a, e.seq);
        break;
      case OmpWhat::TaskgroupEnd: {
        if (th.taskgroups.empty()) break;
        const auto [task, since] = th.taskgroups.back();
        std::vector<uint64_t> waited;
        for (uint64_t child : children_[task])
          if (created_seq_[child] > since && created_seq_[child] < e.seq) descendants(child, waited);
        if (!all_completed(waited, th.clock)) return false;
        th.taskgroups.pop_back();
        break;
      }
      case OmpWhat::BarrierBegin:
      case OmpWhat::TaskwaitBegin:
      case OmpWhat::TaskDependences:
      case OmpWhat::Unknown:
        break;
    }
    ++th.at;
    ++th.clock[t];  // each line counts: a later line of another thread knows it through an edge
    return true;
  }

  void descendants(uint64_t task, std::vector<uint64_t>& out) {
    out.push_back(task);
    for (uint64_t child : children_[task]) descendants(child, out);
  }
  bool all_completed(const std::vector<uint64_t>& tasks, Clock& clock) {
    for (uint64_t x : tasks)
      if (!completed(x)) return false;
    for (uint64_t x : tasks) join_into(clock, completed_[x]);
    return true;
  }

  // The edges between MPI calls of different threads that no other edge (or the thread's own order) implies:
  // for call j of thread U, the last call k of each other thread T before it, unless U's previous call already
  // followed it or another such predecessor (V, m) did. Clocks count lines; `calls_before` makes them calls.
  std::vector<ThreadOrderEdge> reduce() const {
    std::vector<ThreadOrderEdge> edges;
    auto clock_at = [&](size_t v, size_t event) -> const Clock& {
      return points_.at(threads_[v].events[event].seq).clock;
    };
    auto calls_known = [&](const Clock& c, size_t t) { return threads_[t].calls_before[c[t]]; };
    for (size_t u = 0; u < threads_.size(); ++u) {
      const auto& at = threads_[u].call_at;
      for (size_t q = 0; q < at.size(); ++q) {
        const Clock& vc = clock_at(u, at[q]);
        std::vector<std::pair<size_t, uint32_t>> candidates;  // (thread, its last call before, 1-based)
        for (size_t t = 0; t < threads_.size(); ++t) {
          if (t == u) continue;
          const uint32_t k = calls_known(vc, t);
          const uint32_t before = q == 0 ? 0 : calls_known(clock_at(u, at[q - 1]), t);
          if (k > before) candidates.emplace_back(t, k);
        }
        for (const auto& [t, k] : candidates) {
          bool implied = false;
          for (const auto& [v, m] : candidates)
            if (v != t && calls_known(clock_at(v, threads_[v].call_at[m - 1]), t) >= k) implied = true;
          if (!implied)
            edges.push_back(
                ThreadOrderEdge{threads_[t].tid, threads_[t].calls[k - 1], threads_[u].tid, threads_[u].calls[q]});
        }
      }
    }
    return edges;
  }

  const RecordedProcess& p_;
  std::vector<ThreadState> threads_;
  std::map<int64_t, size_t> index_;
  std::string why_not_;
  std::map<uint64_t, uint32_t> team_;
  std::map<uint64_t, std::set<size_t>> members_;
  std::map<uint64_t, Clock> fork_;
  std::map<uint64_t, std::map<size_t, Clock>> ends_;
  std::map<std::pair<uint64_t, uint32_t>, std::map<size_t, Clock>> barrier_;
  std::map<std::pair<uint64_t, uint32_t>, Clock> released_;
  std::map<uint64_t, uint64_t> parent_, created_seq_;
  std::map<uint64_t, std::vector<uint64_t>> children_, preds_;
  std::map<uint64_t, std::map<uint64_t, std::pair<uint64_t, std::vector<uint64_t>>>> deps_by_parent_;
  std::map<uint64_t, Clock> created_, completed_;
  std::set<uint64_t> started_;
  std::map<uint64_t, ThreadOrder::LinePoint> points_;  // calls' entries and access lines, by seq
};

}  // namespace

ThreadOrder order_threads(const RecordedProcess& process) { return Replay(process).run(); }

std::optional<bool> ThreadOrder::happens_before(uint64_t earlier, uint64_t later) const {
  auto a = points.find(earlier), b = points.find(later);
  if (a == points.end() || b == points.end()) return std::nullopt;
  if (a->second.thread == b->second.thread) return a->second.position < b->second.position;
  return b->second.clock[a->second.thread] > a->second.position;
}

std::optional<std::vector<ThreadTrace>> threads_with_keys(const ThreadOrder& order, int world_rank,
                                                          std::vector<std::vector<ThreadEntry>> lists) {
  std::map<int64_t, size_t> slot;
  std::vector<ThreadTrace> threads;
  for (int64_t tid : order.threads) {
    slot[tid] = threads.size();
    threads.emplace_back();
    threads.back().name = threads.size() == 1 ? "main" : "omp" + std::to_string(threads.size() - 1);
    threads.back().starts_with_rank = threads.size() > 1;
  }
  // Per thread, its keys by where they stand: 2i+1 set just after process call i, 2j-1 waited for just before
  // call j (a call's own statements stand at 2j), so that a key set after a call carries what was waited for
  // before it and nothing waited for later.
  std::vector<std::map<size_t, std::vector<std::pair<CallKind, std::string>>>> keys(threads.size());
  const std::string rank = std::to_string(world_rank);
  for (const auto& e : order.edges) {
    const size_t from = slot.at(e.from_thread), to = slot.at(e.to_thread);
    const std::string key = "r" + rank + "_" + threads[from].name + "_" + std::to_string(e.after_call);
    auto& s = keys[from][2 * e.after_call + 1];
    if (std::find(s.begin(), s.end(), std::make_pair(CallKind::StoreSet, key)) == s.end())
      s.emplace_back(CallKind::StoreSet, key);
    keys[to][e.before_call == 0 ? 0 : 2 * e.before_call - 1].emplace_back(CallKind::StoreWait, key);
  }
  bool in_group = false, fits = true;
  for (size_t t = 0; t < threads.size() && t < lists.size(); ++t) {
    auto& out = threads[t].calls;
    in_group = false;
    auto store = [&](CallKind kind, const std::string& key) {
      if (in_group) fits = false;
      Call c;
      c.kind = kind;
      c.key = key;
      c.detail = kind == CallKind::StoreSet ? "OpenMP synchronization: released for another thread"
                                            : "OpenMP synchronization: waits for another thread";
      out.push_back(std::move(c));
    };
    auto next = keys[t].begin();
    for (auto& entry : lists[t]) {
      if (entry.source != SIZE_MAX)
        for (; next != keys[t].end() && next->first < 2 * entry.source; ++next)
          for (const auto& [kind, key] : next->second) store(kind, key);
      if (entry.call.kind == CallKind::GroupStart) in_group = true;
      if (entry.call.kind == CallKind::GroupEnd) in_group = false;
      out.push_back(std::move(entry.call));
    }
    for (; next != keys[t].end(); ++next)  // after its last statement
      for (const auto& [kind, key] : next->second) store(kind, key);
  }
  if (!fits) return std::nullopt;
  return threads;
}

}  // namespace collmc::traces
