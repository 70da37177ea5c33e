// The OpenMP threads' own synchronization (issue 32): an OMPT tool (OpenMP 5.x, "Tool Interface", omp-tools.h)
// that writes what orders the threads of a process, so the reader can order a rank's threads by it and by
// nothing else (docs/TRACES.md, "OpenMP threads"). The recorder sees each thread's MPI calls with its "tid";
// without these lines it cannot tell calls that an `omp barrier`, a `critical` or a join ordered from calls
// that merely happened in that order in this run (an eager MPI_Send returns at once, so the run's timing
// re-creates the orders that make false deadlocks).
//
// An OpenMP runtime with OMPT (LLVM's libomp; gcc's libgomp has none) looks up `ompt_start_tool` at its
// start (OpenMP 5.1 sec. 4.2.1): this library exports it. Outside `collmc record` (no COLLMC_TRACE_DIR) it
// declines, and the runtime runs with no tool. Lines are "ev":"omp" with the shared event counter's "seq"
// and the MPI lines' "tid" (gettid), written with one write(2) each like every recorder line:
//   parallel_begin region=R task=T      the encountering thread forks region R (the team's threads start it)
//   parallel_end region=R               the region joined: every implicit task of R has ended
//   implicit_task_begin region=R index=I team=N / implicit_task_end region=R
//   barrier_begin/_end region=R kind=K  a barrier of R's team (explicit, implicit at a worksharing construct's
//                                       end, implicit at the region's end); every thread of the team meets the
//                                       same barriers in the same order (OpenMP 5.1 sec. 2.19.2)
//   taskwait_begin/_end task=T, taskgroup_begin/_end task=T
//   mutex_acquired/_released kind=K wait_id=0x..   critical, omp locks, ordered
//   task_create task=X parent=T deps=D, task_dependences task=X deps="out:0x..,in:0x.."
//   task_schedule prior=X status=S next=Y          a thread switches from task X to task Y (S: 1 completed)
//   tool_start runtime="LLVM OMP version: ..."      the runtime started the tool (what recorded the threads)
// Implicit tasks carry their region's id in their task data (explicit tasks a fresh id from the same counter),
// so a barrier's end, which LLVM reports for a worker without its parallel data (the worker leaves the
// region's last barrier only at the next fork), still names its region.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include COLLMC_OMP_TOOLS_HEADER  // omp-tools.h, the path found by CMake (clang's or Debian's libomp-dev)

#include "json_line.h"
#include "mpi_hook_args.h"
#include "trace_file.h"

namespace collmc::recorder::omp_tool {
namespace {

std::atomic<uint64_t> g_next_id{0};
uint64_t fresh_id() { return g_next_id.fetch_add(1, std::memory_order_relaxed) + 1; }

// The id a parallel region or a task carries (given once: the runtime keeps the data for the region's life).
uint64_t id_of(ompt_data_t* data) {
  if (data == nullptr) return 0;
  if (data->value == 0) data->value = fresh_id();
  return data->value;
}

// An "omp" line: the common fields, then `fill` adds the event's own.
// The thread's own loads and stores since its last line are written first (mpi_memory_hooks.cpp): they came
// before this synchronization, which the race rules need to know (a thread that makes no MPI call writes them
// only here).
template <typename Fill>
void write_omp(const char* what, Fill fill) {
  mpi_hooks::write_memory_accesses();
  if (!recording()) return;
  JsonLine line;
  begin_event(line, "omp", next_seq(), what);
  fill(line);
  write_line(line);
}

void on_parallel_begin(ompt_data_t* encountering_task, const ompt_frame_t* /*frame*/, ompt_data_t* parallel,
                       unsigned int requested, int /*flags*/, const void* /*codeptr*/) {
  const uint64_t region = id_of(parallel);
  const uint64_t task = id_of(encountering_task);
  write_omp("parallel_begin",
            [&](JsonLine& l) { l.u64("region", region).u64("task", task).u64("requested", requested); });
}

void on_parallel_end(ompt_data_t* parallel, ompt_data_t* /*encountering_task*/, int /*flags*/,
                     const void* /*codeptr*/) {
  const uint64_t region = id_of(parallel);
  write_omp("parallel_end", [&](JsonLine& l) { l.u64("region", region); });
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task, unsigned int team,
                      unsigned int index, int flags) {
  if (endpoint == ompt_scope_begin) {
    // The implicit task carries its region's id: later events of the task name the region through it.
    const uint64_t region = (flags & ompt_task_initial) != 0 ? fresh_id() : id_of(parallel);
    if (task != nullptr) task->value = region;
    write_omp("implicit_task_begin", [&](JsonLine& l) {
      l.u64("region", region).u64("index", index).u64("team", team).i64("initial", (flags & ompt_task_initial) != 0);
    });
    return;
  }
  const uint64_t region = task != nullptr ? task->value : 0;
  write_omp("implicit_task_end", [&](JsonLine& l) { l.u64("region", region); });
}

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t* /*parallel*/,
                    ompt_data_t* task, const void* /*codeptr*/) {
  const bool begin = endpoint == ompt_scope_begin;
  const char* what = nullptr;
  switch (kind) {
    case ompt_sync_region_taskwait:
      what = begin ? "taskwait_begin" : "taskwait_end";
      break;
    case ompt_sync_region_taskgroup:
      what = begin ? "taskgroup_begin" : "taskgroup_end";
      break;
    case ompt_sync_region_reduction:  // inside a barrier or a taskgroup that is reported itself
      return;
    default:  // every barrier kind: explicit, implicit (workshare, parallel), implementation, teams
      what = begin ? "barrier_begin" : "barrier_end";
      break;
  }
  const uint64_t id = task != nullptr ? task->value : 0;  // an implicit task's value is its region
  write_omp(what, [&](JsonLine& l) {
    l.u64(kind == ompt_sync_region_taskwait || kind == ompt_sync_region_taskgroup ? "task" : "region", id)
        .i64("kind", static_cast<int64_t>(kind));
  });
}

void on_mutex(const char* what, ompt_mutex_t kind, ompt_wait_id_t wait_id) {
  if (kind == ompt_mutex_atomic) return;  // an atomic orders one memory word, no MPI call
  write_omp(what, [&](JsonLine& l) { l.i64("kind", static_cast<int64_t>(kind)).hex("wait_id", wait_id, 0); });
}
void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* /*codeptr*/) {
  on_mutex("mutex_acquired", kind, wait_id);
}
void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* /*codeptr*/) {
  on_mutex("mutex_released", kind, wait_id);
}

void on_task_create(ompt_data_t* encountering_task, const ompt_frame_t* /*frame*/, ompt_data_t* new_task, int flags,
                    int has_dependences, const void* /*codeptr*/) {
  if ((flags & ompt_task_initial) != 0) return;  // the initial task: reported as its implicit task
  const uint64_t parent = id_of(encountering_task);
  const uint64_t task = id_of(new_task);
  write_omp("task_create", [&](JsonLine& l) {
    l.u64("task", task).u64("parent", parent).i64("flags", flags).i64("deps", has_dependences);
  });
}

void on_dependences(ompt_data_t* task, const ompt_dependence_t* deps, int ndeps) {
  // At most kShown dependences fit one line's string; more are counted, and the reader then orders nothing.
  constexpr int kShown = 8;
  char text[JsonLine::kMaxString] = {};
  size_t at = 0;
  static const char* const kTypes[] = {"?", "in", "out", "inout", "mutexinoutset", "source", "sink", "inoutset"};
  for (int i = 0; i < ndeps && i < kShown; ++i) {
    const int type = static_cast<int>(deps[i].dependence_type);
    const char* name = type >= 1 && type <= 7 ? kTypes[type] : kTypes[0];
    const int n = std::snprintf(text + at, sizeof text - at, "%s%s:0x%llx", i == 0 ? "" : ",", name,
                                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(deps[i].variable.ptr)));
    if (n < 0 || static_cast<size_t>(n) >= sizeof text - at) break;
    at += static_cast<size_t>(n);
  }
  const uint64_t id = id_of(task);
  write_omp("task_dependences", [&](JsonLine& l) {
    l.u64("task", id).str("deps", text);
    if (ndeps > kShown) l.i64("deps_left_out", ndeps - kShown);
  });
}

void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  const uint64_t from = prior != nullptr ? prior->value : 0;
  const uint64_t to = next != nullptr ? next->value : 0;
  write_omp("task_schedule",
            [&](JsonLine& l) { l.u64("prior", from).i64("status", static_cast<int64_t>(status)).u64("next", to); });
}

// The runtime's own name of itself (ompt_start_tool's runtime_version, "LLVM OMP version: ..."), kept for the
// "tool_start" line: the import summary says which runtime recorded the threads.
char g_runtime[128] = {};

int initialize(ompt_function_lookup_t lookup, int /*initial_device*/, ompt_data_t* /*tool_data*/) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (set_callback == nullptr) return 0;
  write_omp("tool_start", [&](JsonLine& l) { l.str("runtime", g_runtime); });
  auto set = [&](ompt_callbacks_t which, auto* fn) { set_callback(which, reinterpret_cast<ompt_callback_t>(fn)); };
  set(ompt_callback_parallel_begin, &on_parallel_begin);
  set(ompt_callback_parallel_end, &on_parallel_end);
  set(ompt_callback_implicit_task, &on_implicit_task);
  set(ompt_callback_sync_region, &on_sync_region);
  set(ompt_callback_mutex_acquired, &on_mutex_acquired);
  set(ompt_callback_mutex_released, &on_mutex_released);
  set(ompt_callback_task_create, &on_task_create);
  set(ompt_callback_dependences, &on_dependences);
  set(ompt_callback_task_schedule, &on_task_schedule);
  return 1;  // non-zero: keep the tool
}

void finalize(ompt_data_t* /*tool_data*/) {}

ompt_start_tool_result_t g_tool = {&initialize, &finalize, {0}};

}  // namespace
}  // namespace collmc::recorder::omp_tool

#pragma GCC visibility push(default)
extern "C" {
// The OMPT entry point (OpenMP 5.1 sec. 4.2.1): only a recorded run gets the tool.
ompt_start_tool_result_t* ompt_start_tool(unsigned int /*omp_version*/, const char* runtime_version) {
  const char* dir = std::getenv("COLLMC_TRACE_DIR");
  if (dir == nullptr || *dir == '\0') return nullptr;
  if (runtime_version != nullptr)
    std::snprintf(collmc::recorder::omp_tool::g_runtime, sizeof collmc::recorder::omp_tool::g_runtime, "%s",
                  runtime_version);
  return &collmc::recorder::omp_tool::g_tool;
}
}
#pragma GCC visibility pop
