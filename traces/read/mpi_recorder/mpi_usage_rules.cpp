// MPI usage errors found in the recorded calls (mpi_usage_rules.h; docs/SEMANTICS_NOTES.md, "MPI usage
// errors"). Every rule names the MPI 4.1 section that makes the call erroneous.
#include "mpi_usage_rules.h"

#include <algorithm>
#include <deque>
#include <sstream>
#include <tuple>

namespace collmc::traces {
namespace {

using Json = nlohmann::ordered_json;

int64_t number(const RecorderLine* l, const char* key, int64_t fallback) {
  const Json* f = recorder_field(l, key);
  return f != nullptr && f->is_number_integer() ? f->get<int64_t>() : fallback;
}
std::string text(const RecorderLine* l, const char* key) {
  const Json* f = recorder_field(l, key);
  return f != nullptr && f->is_string() ? f->get<std::string>() : std::string();
}
uint64_t address(const RecorderLine* l, const char* key) {
  const std::string s = text(l, key);
  auto v = parse_hex_field(s);
  return v ? *v : 0;
}
std::vector<std::string> list(const RecorderLine* l, const char* key) {
  std::vector<std::string> out;
  const std::string s = text(l, key);
  size_t start = 0;
  while (start < s.size()) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// The basic type an accumulate works on, element by element (MPI 4.1 sec. 12.7.1): the target type's name, or the
// one type of its flattened signature ("MPI_INT*4"); its size where MPI fixes it, else 0.
MpiUsageRulesUnit accumulate_unit(const RecorderLine* in) {
  std::string name = text(in, "target_dtype");
  const std::string sig = text(in, "target_dtype_sig");
  if (!sig.empty() && sig.find(',') == std::string::npos) name = sig.substr(0, sig.find('*'));
  static const std::map<std::string, int64_t> sizes = {
      {"MPI_CHAR", 1},   {"MPI_SIGNED_CHAR", 1}, {"MPI_UNSIGNED_CHAR", 1}, {"MPI_BYTE", 1},         {"MPI_SHORT", 2},
      {"MPI_INT", 4},    {"MPI_UNSIGNED", 4},    {"MPI_FLOAT", 4},         {"MPI_INT32_T", 4},      {"MPI_LONG", 8},
      {"MPI_DOUBLE", 8}, {"MPI_LONG_LONG", 8},   {"MPI_INT64_T", 8},       {"MPI_UNSIGNED_LONG", 8}};
  auto it = sizes.find(name);
  return MpiUsageRulesUnit{name, it == sizes.end() ? 0 : it->second};
}

// A list of world ranks ("0,2,3") as a set; empty when absent.
std::set<int64_t> world_rank_set(const RecorderLine* l, const char* key) {
  std::set<int64_t> out;
  for (const auto& r : list(l, key))
    if (!r.empty() && r != "...") out.insert(std::atoll(r.c_str()));
  return out;
}

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

}  // namespace

// MPI 4.1 sec. 11.6.2 ("Collective calls"): collectives on a communicator or window match in the order each
// process issues them, and threads that issue them on one handle must order them themselves. The run shows a
// breach when a thread enters a collective on a handle while another thread's collective on it has not
// returned: the two were issued at once, in no order (the checker's rule for scenarios is in
// checker/src/call_effects.cpp, check_threads_in_comm; an import takes a process's threads as one body).
void MpiUsageRules::threads_in_collectives(size_t p, size_t i, const RecordedCall& rc, const MpiCallInfo& info) {
  switch (info.family) {
    case MpiFamily::Collective:
    case MpiFamily::CommCreate:
    case MpiFamily::CommFree:
    case MpiFamily::WinCreate:
    case MpiFamily::WinFree:
    case MpiFamily::WinFence:
      break;
    default:
      return;
  }
  const bool window = info.family == MpiFamily::WinFree || info.family == MpiFamily::WinFence;
  const std::string on = text(rc.enter, window ? "win" : "comm");
  if (on.empty()) return;
  ProcessRules& pr = processes_[p];
  const int64_t tid = number(rc.enter, "tid", 0);
  const auto entered = static_cast<uint64_t>(number(rc.enter, "t_mono_ns", 0));
  auto& running = pr.collectives_running;
  running.erase(std::remove_if(running.begin(), running.end(),
                               [&](const CollectiveCall& c) { return c.returned != 0 && c.returned <= entered; }),
                running.end());
  const std::string what =
      std::string(info.name) + " (thread " + std::to_string(tid) + ", line " + std::to_string(rc.enter->line) + ")";
  for (const CollectiveCall& c : running)
    if (c.tid != tid && c.on == on)
      error(p, i, model::MpiRule::ThreadsInCollectives,
            what + " entered a collective on " + (window ? "window " : "communicator ") + on + " while " + c.what +
                " was still inside one on it: threads must order their collective calls on one communicator or "
                "window (MPI 4.1 sec. 11.6.2)");
  const uint64_t returned = rc.ret != nullptr ? static_cast<uint64_t>(number(rc.ret, "t_mono_ns", 0)) : 0;
  running.push_back(CollectiveCall{tid, on, rc.ret != nullptr ? std::max<uint64_t>(returned, 1) : 0, what});
}

std::optional<int64_t> MpiUsageRules::tag_upper_bound() const {
  std::optional<int64_t> least;
  for (const auto& [p, pr] : processes_)
    if (pr.tag_ub >= 0 && (!least || pr.tag_ub < *least)) least = pr.tag_ub;
  return least;
}

void MpiUsageRules::error(size_t p, size_t i, model::MpiRule rule, const std::string& message) {
  auto& list = errors_[{p, i}];
  const MpiUsageError e{rule, message};
  if (std::find(list.begin(), list.end(), e) == list.end()) list.push_back(e);
}

void MpiUsageRules::observe(size_t p, size_t i, const RecordedCall& rc, const MpiCallContext& ctx) {
  auto& seqs = call_seqs_[p];
  if (seqs.size() <= i) seqs.resize(i + 1, 0);
  seqs[i] = rc.enter->event["seq"].get<uint64_t>();
  const int syncs_before = processes_[p].syncs;
  observe_call(p, i, rc, ctx);
  auto& syncs = syncs_after_[p];
  if (syncs.size() <= i) syncs.resize(i + 1, 0);
  syncs[i] = processes_[p].syncs;
  sync_point(p, i, rc, ctx, processes_[p].syncs != syncs_before);
}

void MpiUsageRules::sync_point(size_t p, size_t i, const RecordedCall& rc, const MpiCallContext& ctx,
                               bool synchronised) {
  auto& points = sync_points_[p];
  if (points.size() <= i) points.resize(i + 1);
  SyncPoint& sp = points[i];
  const RecorderLine* in = rc.enter;
  const RecorderLine* ret = rc.ret;
  sp.entered = static_cast<uint64_t>(std::max<int64_t>(1, number(in, "t_mono_ns", 0)));
  sp.returned = ret != nullptr ? static_cast<uint64_t>(std::max<int64_t>(1, number(ret, "t_mono_ns", 0))) : 0;
  if (synchronised) sp.barrier = ctx.window.empty() ? "world" : ctx.window;
  if (!ctx.world_comm || ret == nullptr || number(ret, "result", 0) != 0) return;  // world ranks only
  const MpiCallInfo& info = *ctx.info;
  const MpiFamily f = info.family;
  if ((f == MpiFamily::Send && !info.has(kPersistent)) || f == MpiFamily::Sendrecv)
    if (const int64_t peer = number(in, "peer", -2); peer >= 0)
      sp.sends.emplace_back(static_cast<int>(peer), number(in, "tag", -1));
  if ((f == MpiFamily::Recv && !info.has(kNonblocking) && !info.has(kPersistent)) || f == MpiFamily::Sendrecv)
    if (const int64_t source = number(ret, "source", -1); source >= 0)
      sp.receives.emplace_back(static_cast<int>(source), number(ret, "tag", -1));
  auto& posted = posted_receives_[p];
  if (f == MpiFamily::Recv && info.has(kNonblocking) && !info.has(kPersistent))
    if (const uint64_t r = address(ret, "req"); r != 0) posted[r] = number(in, "tag", -1);
  auto completed = [&](const std::string& handle, int64_t source, int64_t tag) {
    auto v = parse_hex_field(handle);
    if (!v) return;
    auto it = posted.find(*v);
    if (it == posted.end()) return;
    if (tag < 0) tag = it->second;
    if (source >= 0 && tag >= 0) sp.receives.emplace_back(static_cast<int>(source), tag);
    posted.erase(it);
  };
  if (info.call == MpiCall::Wait || (info.call == MpiCall::Test && number(ret, "flag", 0) != 0))
    completed(text(in, "req"), number(ret, "source", -1), number(ret, "tag", -1));
  if (info.call == MpiCall::Waitall || (info.call == MpiCall::Testall && number(ret, "flag", 0) != 0)) {
    const auto reqs = list(in, "reqs");
    const auto sources = list(ret, "sources");
    for (size_t k = 0; k < reqs.size() && k < sources.size(); ++k)
      completed(reqs[k], std::atoll(sources[k].c_str()), -1);
  }
}

// Vector clocks over world ranks, from the run's own times: every entry and return of every process in time
// order (one host: CLOCK_MONOTONIC is the machine's), a receive's return learning what its matched send's
// sender knew at the send's entry, a synchronisation's return what every member knew at its entry (the member's
// own call counted as done). A component says how far that rank had come: 2n + 1 that it had entered its call n,
// 2n + 2 that call n had returned.
void MpiUsageRules::compute_clocks() {
  std::map<int, size_t> process_of;
  for (const auto& [p, pr] : processes_)
    if (pr.rank >= 0) process_of[pr.rank] = p;
  if (!one_host_ || process_of.empty()) return;
  const size_t ranks = static_cast<size_t>(process_of.rbegin()->first) + 1;
  size_t calls = 0;
  for (const auto& [p, points] : sync_points_) calls += points.size();
  if (calls * ranks > 8'000'000) return;  // too large a run: the synchronisation count alone orders accesses
  auto rank_of = [&](size_t p) { return processes_.count(p) > 0 ? processes_.at(p).rank : -1; };
  for (auto it = sync_points_.begin(); it != sync_points_.end();)  // a process without a world rank: not ordered
    it = rank_of(it->first) < 0 ? sync_points_.erase(it) : std::next(it);
  // Each receive's send: in order per (sender, receiver, tag), as MPI matches them (MPI 4.1 sec. 3.5).
  std::map<std::tuple<int, int, int64_t>, std::deque<std::pair<size_t, size_t>>> sends;
  for (const auto& [p, points] : sync_points_)
    for (size_t j = 0; j < points.size(); ++j)
      for (const auto& [to, tag] : points[j].sends) sends[{rank_of(p), to, tag}].emplace_back(p, j);
  std::map<std::pair<size_t, size_t>, std::vector<std::pair<size_t, size_t>>> learns;  // call -> calls it learns from
  for (const auto& [p, points] : sync_points_)
    for (size_t j = 0; j < points.size(); ++j)
      for (const auto& [from, tag] : points[j].receives) {
        auto& q = sends[{from, rank_of(p), tag}];
        if (q.empty()) continue;
        learns[{p, j}].push_back(q.front());
        q.pop_front();
      }
  // The k-th synchronisation of each member on one key (the world, a window) is one barrier.
  std::map<std::pair<std::string, size_t>, std::vector<std::pair<size_t, size_t>>> barriers;
  std::map<std::pair<size_t, size_t>, std::pair<std::string, size_t>> barrier_of;
  for (const auto& [p, points] : sync_points_) {
    std::map<std::string, size_t> seen;
    for (size_t j = 0; j < points.size(); ++j) {
      if (points[j].barrier.empty()) continue;
      const std::pair<std::string, size_t> key{points[j].barrier, seen[points[j].barrier]++};
      barriers[key].emplace_back(p, j);
      barrier_of[{p, j}] = key;
    }
  }
  struct Event {
    uint64_t t;
    bool returned;
    size_t p, j;
  };
  std::vector<Event> events;
  for (const auto& [p, points] : sync_points_)
    for (size_t j = 0; j < points.size(); ++j) {
      if (points[j].entered == 0) continue;  // a call the rules did not see (not modelled)
      events.push_back(Event{points[j].entered, false, p, j});
      if (points[j].returned != 0) events.push_back(Event{points[j].returned, true, p, j});
    }
  std::stable_sort(events.begin(), events.end(),
                   [](const Event& a, const Event& b) { return a.t != b.t ? a.t < b.t : !a.returned && b.returned; });
  std::map<size_t, std::vector<int32_t>> now;
  for (const auto& [p, points] : sync_points_) {
    now[p].assign(ranks, 0);
    entry_clocks_[p].assign(points.size(), {});
  }
  auto merge = [](std::vector<int32_t>& into, const std::vector<int32_t>& from) {
    for (size_t k = 0; k < into.size() && k < from.size(); ++k) into[k] = std::max(into[k], from[k]);
  };
  for (const Event& e : events) {
    auto& clock = now[e.p];
    const auto me = static_cast<size_t>(rank_of(e.p));
    if (!e.returned) {
      clock[me] = std::max(clock[me], static_cast<int32_t>(2 * e.j + 1));
      entry_clocks_[e.p][e.j] = clock;
      continue;
    }
    if (auto l = learns.find({e.p, e.j}); l != learns.end())
      for (const auto& [ps, s] : l->second) merge(clock, entry_clocks_[ps][s]);
    if (auto b = barrier_of.find({e.p, e.j}); b != barrier_of.end())
      for (const auto& [pm, m] : barriers[b->second]) {
        std::vector<int32_t> member = entry_clocks_[pm][m];
        if (member.empty()) continue;  // not entered yet: it does not precede this return
        const auto them = static_cast<size_t>(rank_of(pm));
        member[them] = static_cast<int32_t>(2 * m + 2);  // the member's call is done when the barrier is
        merge(clock, member);
      }
    clock[me] = std::max(clock[me], static_cast<int32_t>(2 * e.j + 2));
  }
  clocks_known_ = true;
}

// x happens before y: y's rank, when y began, knew that x's rank had come past the end of x (a program access
// before call i: entered call i; an MPI call's: returned from it; an RMA transfer's: returned from the call that
// completed it).
bool MpiUsageRules::happens_before(const Access& x, const Access& y) const {
  if (!x.program && x.rma && x.done == SIZE_MAX) return false;  // never completed
  const auto end = static_cast<int64_t>(x.program ? 2 * x.index + 1 : 2 * (x.rma ? x.done : x.index) + 2);
  return known_of(y, x.rank) >= end;
}

// How far y's rank knew `rank` had come when y began (a clock component; -1: not known).
int64_t MpiUsageRules::known_of(const Access& y, int rank) const {
  if (!clocks_known_ || rank < 0) return -1;
  auto it = entry_clocks_.find(y.p);
  const size_t at = y.knows_index == SIZE_MAX ? y.index : y.knows_index;
  if (it == entry_clocks_.end() || at >= it->second.size()) return -1;
  const std::vector<int32_t>& clock = it->second[at];
  return static_cast<size_t>(rank) < clock.size() ? clock[static_cast<size_t>(rank)] : -1;
}

// The synchronisation count of process p just after it created `window` (INT32_MAX: not known).
int MpiUsageRules::created_syncs(size_t p, const std::string& window) const {
  auto pr = processes_.find(p);
  if (pr == processes_.end()) return INT32_MAX;
  auto w = pr->second.windows.find(window);
  return w == pr->second.windows.end() ? INT32_MAX : w->second.created_syncs;
}

// x's issue happens before y: y's rank, when y began, knew that x's rank had entered the call that issued x.
bool MpiUsageRules::issued_before(const Access& x, const Access& y) const {
  return known_of(y, x.rank) >= static_cast<int64_t>(2 * x.index + 1);
}

void MpiUsageRules::observe_call(size_t p, size_t i, const RecordedCall& rc, const MpiCallContext& ctx) {
  ProcessRules& pr = processes_[p];
  pr.rank = ctx.world_rank;
  const MpiCallInfo& info = *ctx.info;
  const RecorderLine* in = rc.enter;
  const RecorderLine* ret = rc.ret;
  const std::string name(info.name);
  const bool ok = ret != nullptr && number(ret, "result", 0) == 0;
  const MpiFamily family = info.family;

  if (family == MpiFamily::Init) {
    if (ret != nullptr) pr.tag_ub = number(ret, "tag_ub", -1);
    return;
  }
  threads_in_collectives(p, i, rc, info);

  // ---- arguments MPI makes erroneous whatever the other ranks do ----
  // Only the arguments MPI reads: the recorder writes the send or the receive side's count and type as MPI
  // takes them (MPI_IN_PLACE, a gather's non-root receive side: MPI 4.1 sec. 6.5-6.8), and nothing of an
  // ignored one.
  // A call the reader writes as a statement carries its communicator, datatype, op and tag: the semantics
  // judges them there (model/mpi_rules.def). The rules below judge them for the calls the language has no
  // statement for (RMA transfers, window and communicator constructors, a send to MPI_PROC_NULL, ...).
  const bool judged_by_semantics = ctx.arguments_in_statement;
  if (recorder_field(in, "comm") != nullptr && ctx.comm_null && !judged_by_semantics)
    error(p, i, model::MpiRule::NullCommunicator,
          name + " on MPI_COMM_NULL: a null handle is no valid communicator (MPI 4.1 sec. 2.5.4)");
  if (info.call != MpiCall::Barrier && info.call != MpiCall::Ibarrier && !judged_by_semantics)
    for (const char* key : {"dtype", "recv_dtype", "target_dtype"})
      if (text(in, key) == "MPI_DATATYPE_NULL")
        error(p, i, model::MpiRule::NullDatatype,
              name + " with MPI_DATATYPE_NULL: a null handle is no valid datatype (MPI 4.1 sec. 2.5.4, 3.2.2)");
  if (text(in, "op") == "null" && !judged_by_semantics)
    error(p, i, model::MpiRule::NullOperation,
          name + " with MPI_OP_NULL: a null handle is no valid operation (MPI 4.1 sec. 2.5.4, 6.9)");
  if (info.has(kRooted) && !ctx.inter && recorder_field(in, "root") != nullptr && ctx.comm_size > 0) {
    const int64_t root = number(in, "root", 0);
    if (root < 0 || root >= ctx.comm_size)
      error(p, i, model::MpiRule::RootOutsideComm,
            name + " with root " + std::to_string(root) + " on a communicator of " + std::to_string(ctx.comm_size) +
                " ranks: the root must be a rank of the group (MPI 4.1 sec. 6.1, 6.4)");
  }
  auto check_tag = [&](const char* key, bool send) {
    if (recorder_field(in, key) == nullptr || judged_by_semantics) return;
    const int64_t tag = number(in, key, 0);
    if (send && tag < 0)
      error(p, i, model::MpiRule::SendTagNegative,
            name + " with tag " + std::to_string(tag) +
                ": a send's tag is 0 to MPI_TAG_UB, never negative nor MPI_ANY_TAG (MPI 4.1 sec. 3.2.3)");
    else if (!send && tag < -1)
      error(p, i, model::MpiRule::ReceiveTagInvalid,
            name + " with tag " + std::to_string(tag) +
                ": a receive's tag is 0 to MPI_TAG_UB or MPI_ANY_TAG (MPI 4.1 sec. 3.2.3)");
    else if (pr.tag_ub >= 0 && tag > pr.tag_ub)
      error(p, i, model::MpiRule::TagAboveUpperBound,
            name + " with tag " + std::to_string(tag) + " above MPI_TAG_UB " + std::to_string(pr.tag_ub) +
                " (MPI 4.1 sec. 3.2.3)");
  };
  const bool sends = family == MpiFamily::Send;
  if (sends) check_tag("tag", true);
  if (family == MpiFamily::Recv || family == MpiFamily::Probe || family == MpiFamily::Iprobe ||
      family == MpiFamily::Mprobe)
    check_tag("tag", false);
  if (family == MpiFamily::Sendrecv) {
    check_tag("tag", true);
    check_tag("recv_tag", false);
    const uint64_t s = address(in, "buf"), r = address(in, "recv_buf");
    const int64_t sb = number(in, "bytes", 0), rb = number(in, "recv_bytes", 0);
    if (s != 0 && r != 0 && sb > 0 && rb > 0 && s < r + static_cast<uint64_t>(rb) && r < s + static_cast<uint64_t>(sb))
      error(p, i, model::MpiRule::BuffersOverlap,
            "MPI_Sendrecv whose send and receive buffers overlap: they must be disjoint (MPI 4.1 sec. 3.10)");
  }
  if (recorder_field(in, "invalid_color") != nullptr)
    error(p, i, model::MpiRule::InvalidColor,
          name + " with color " + std::to_string(number(in, "invalid_color", 0)) +
              ": a color is non-negative or MPI_UNDEFINED (MPI 4.1 sec. 7.4.2)");
  if (recorder_field(in, "invalid_dim") != nullptr)
    error(p, i, model::MpiRule::InvalidDimension,
          name + " with dimension " + std::to_string(number(in, "invalid_dim", 0)) +
              ": every dimension is at least one (MPI 4.1 sec. 8.5.1)");
  if (recorder_field(in, "not_cartesian") != nullptr)
    error(p, i, model::MpiRule::NotCartesian,
          name + " on a communicator without a Cartesian topology (MPI 4.1 sec. 8.5.5)");
  if (info.call == MpiCall::Win_create && address(in, "base") == 0 && number(in, "size", 0) > 0)
    error(p, i, model::MpiRule::RmaArgument,
          "MPI_Win_create of " + std::to_string(number(in, "size", 0)) +
              " bytes at a null base: the window memory is no valid buffer (MPI 4.1 sec. 12.2.1)");

  // ---- requests: each nonblocking operation is completed by a wait, a successful test or a free ----
  // (MPI_Comm_idup, the R-transfers and every nonblocking send, receive and collective alike.)
  const bool posts = info.has(kNonblocking) && !info.has(kPersistent) && ret != nullptr &&
                     recorder_field(ret, "req") != nullptr &&
                     (family == MpiFamily::Send || family == MpiFamily::Recv || family == MpiFamily::Collective ||
                      family == MpiFamily::CommCreate || family == MpiFamily::Mrecv);
  if (ok && (posts || (family == MpiFamily::Rma && info.has(kRequest)))) {
    const uint64_t r = address(ret, "req");
    if (r != 0) pr.requests[r] = name;
    // A nonblocking send's or receive's buffer is in use until the request completes (MPI 4.1 sec. 3.7.2):
    // the local-races rule holds it like an RMA origin buffer in flight.
    const bool p2p = family == MpiFamily::Send || family == MpiFamily::Recv;
    if (r != 0 && p2p && number(in, "peer", 0) != -2 && address(in, "buf") != 0 && number(in, "bytes", 0) > 0) {
      Access a;
      a.p = p;
      a.index = i;
      a.order = 2 * i;
      a.rank = a.owner = pr.rank;
      a.lo = address(in, "buf");
      a.hi = a.lo + static_cast<uint64_t>(number(in, "bytes", 0));
      a.write = family == MpiFamily::Recv;
      a.rma = a.nonblocking = true;  // in flight until `done`
      a.tid = number(in, "tid", 0);
      a.done = SIZE_MAX;
      a.sync_from = a.sync_to = pr.syncs;
      a.in_epoch = in_epoch(pr);
      a.what = name + (a.write ? " writing its receive buffer" : " reading its send buffer");
      pr.request_buffers[r].push_back(accesses_.size());
      accesses_.push_back(a);
    }
  }
  // A persistent request is active from its MPI_Start until a wait or test completes it (MPI 4.1 sec. 3.9).
  if (ok && info.call == MpiCall::Start) {
    if (auto v = parse_hex_field(text(in, "req")); v && *v != 0) pr.requests[*v] = name;
  }
  if (ok && info.call == MpiCall::Startall)
    for (const auto& h : list(in, "reqs"))
      if (auto v = parse_hex_field(h); v && *v != 0) pr.requests[*v] = name;
  auto done = [&](const std::string& handle) {
    if (auto v = parse_hex_field(handle)) {
      pr.requests.erase(*v);
      if (auto b = pr.request_buffers.find(*v); b != pr.request_buffers.end()) {
        for (size_t k : b->second) complete(accesses_[k], i, pr);
        pr.request_buffers.erase(b);
      }
    }
    if (handle.find("...") != std::string::npos) {
      // A list cut short: the requests past the cut may complete here; their buffers are taken as completed.
      pr.requests_unknown = true;
      for (const auto& [r, ks] : pr.request_buffers)
        for (size_t k : ks) complete(accesses_[k], i, pr);
      pr.request_buffers.clear();
    }
  };
  if (info.call == MpiCall::Wait || family == MpiFamily::RequestFree ||
      (info.call == MpiCall::Test && ok && number(ret, "flag", 0) != 0))
    done(text(in, "req"));
  if ((info.call == MpiCall::Waitall && ret != nullptr) ||
      (info.call == MpiCall::Testall && ok && number(ret, "flag", 0) != 0))
    for (const auto& h : list(in, "reqs")) done(h);
  if (family == MpiFamily::WaitSome) {
    const auto reqs = list(in, "reqs");
    std::vector<int64_t> picked;
    if (ok && info.call == MpiCall::Waitany) picked.push_back(number(ret, "index", -1));
    if (ok && info.call != MpiCall::Waitany)
      for (const auto& s : list(ret, "indices")) picked.push_back(std::atoll(s.c_str()));
    for (int64_t k : picked)
      if (k >= 0 && static_cast<size_t>(k) < reqs.size()) done(reqs[static_cast<size_t>(k)]);
    for (const auto& h : reqs)
      if (h.find("...") != std::string::npos) done(h);  // cut short: see `done`
  }

  // ---- RMA: epochs (MPI 4.1 sec. 12.5) and the bytes each transfer touches (sec. 12.7) ----
  if (!ctx.window.empty()) {
    Epochs& e = pr.windows[ctx.window];
    if (family == MpiFamily::WinCreate) {
      e = Epochs{};
      e.comm_size = ctx.comm_size;
      e.world_comm = ctx.world_comm;
      WindowMemory m;
      m.base = info.call == MpiCall::Win_create ? address(in, "base") : (ret != nullptr ? address(ret, "base") : 0);
      m.size = number(in, "size", 0);
      m.disp_unit = std::max<int64_t>(1, number(in, "disp_unit", 1));
      if (ok) memory_[{ctx.window, pr.rank}] = m;
      ++pr.syncs;
      e.created_syncs = pr.syncs;
      return;
    }
    if (e.freed) return;
    const int64_t target = number(in, "target", -1);
    switch (family) {
      case MpiFamily::Rma:
        rma_call(p, i, in, ret, ctx, e);
        break;
      case MpiFamily::WinFence:
        complete_pending(e, i, pr, -1);
        e.fence_open = number(in, "nosucceed", 0) == 0;
        ++pr.syncs;
        break;
      // The epoch rules are the semantics' (the reader writes these calls as statements: win_lock, win_unlock,
      // ...; checker/src/call_effects.cpp window_call): here only what the race rules need of the epochs.
      case MpiFamily::WinLock:
        if (!info.has(kAll))
          e.locks[target] = text(in, "lock") == "exclusive";
        else
          e.lock_all = true;
        break;
      case MpiFamily::WinUnlock:
        complete_pending(e, i, pr, info.has(kAll) ? -1 : target);
        if (!info.has(kAll))
          e.locks.erase(target);
        else
          e.lock_all = false;
        break;
      case MpiFamily::WinFlush:
        // MPI_Win_flush_local(_all) completes the transfers at the origin only (MPI 4.1 sec. 12.5.4).
        complete_pending(e, i, pr, info.has(kAll) ? -1 : target, info.has(kLocalOnly));
        break;
      case MpiFamily::WinStart:
        e.access = true;
        e.starts.push_back(world_rank_set(in, "group"));
        break;
      case MpiFamily::WinComplete:
        complete_pending(e, i, pr, -1);
        e.access = false;
        break;
      case MpiFamily::WinPost:
        e.exposure = true;
        e.exposures.push_back(Epochs::Exposure{world_rank_set(in, "group"), 2 * i, SIZE_MAX});
        break;
      case MpiFamily::WinWait:
        // MPI_Win_test that returned false leaves the exposure epoch open (MPI 4.1 sec. 12.5.2).
        if (info.has(kNonblocking) && (!ok || number(ret, "flag", 0) == 0)) break;
        if (e.exposure && !e.exposures.empty()) e.exposures.back().wait_order = 2 * i;
        e.exposure = false;
        break;
      case MpiFamily::WinFree:
        complete_pending(e, i, pr, -1);
        e.freed = true;
        ++pr.syncs;
        break;
      default:
        break;
    }
    return;
  }

  if (family == MpiFamily::Finalize) return;  // requests left: pending_requests(), judged by the semantics
  if (family == MpiFamily::Collective && !info.has(kNonblocking) && ctx.world_comm) ++pr.syncs;

  // ---- buffers of point-to-point calls: local accesses an RMA transfer in flight may race with ----
  const bool p2p_data = (family == MpiFamily::Send && !info.has(kPersistent)) ||
                        (family == MpiFamily::Recv && !info.has(kPersistent)) || family == MpiFamily::Sendrecv;
  if (p2p_data) {
    const bool recv = family == MpiFamily::Recv;
    // MPI_PROC_NULL (-2): no data moves, the buffer is not touched (MPI 4.1 sec. 3.11).
    if (number(in, "peer", 0) != -2) local_access(p, i, in, "buf", "bytes", recv, name);
    if (family == MpiFamily::Sendrecv && number(in, "recv_peer", 0) != -2)
      local_access(p, i, in, "recv_buf", "recv_bytes", true, name);
  }
}

std::vector<std::string> MpiUsageRules::pending_requests(size_t p) const {
  std::vector<std::string> out;
  auto it = processes_.find(p);
  if (it == processes_.end() || it->second.requests_unknown) return out;
  for (const auto& [handle, what] : it->second.requests) out.push_back(what + " (" + hex(handle) + ")");
  return out;
}

void MpiUsageRules::rma_call(size_t p, size_t i, const RecorderLine* in, const RecorderLine* ret,
                             const MpiCallContext& ctx, Epochs& e) {
  ProcessRules& pr = processes_[p];
  const std::string name(ctx.info->name);
  const int64_t target = number(in, "target", -1);
  const std::string what = name + " to rank " + std::to_string(target);
  if (target == -2) return;  // MPI_PROC_NULL: no transfer
  if (e.comm_size > 0 && (target < 0 || target >= e.comm_size)) {
    error(p, i, model::MpiRule::RmaArgument,
          what + " on " + ctx.window + ": no such rank in the window's group (MPI 4.1 sec. 12.3)");
    return;
  }
  // A transfer outside every access epoch is the semantics' rule (rma_epoch, call_effects.cpp); it is no
  // access in flight for the race rules.
  const bool passive = e.lock_all || e.locks.count(target) > 0 || e.access;
  if (!e.fence_open && !passive) return;
  // Request-based transfers (MPI_Rput, MPI_Rget, ...) complete locally at their wait and remotely at a flush
  // or the epoch's end (MPI 4.1 sec. 12.3.5): the origin side is in flight until whichever comes first.
  const uint64_t request = ctx.info->has(kRequest) && ret != nullptr ? address(ret, "req") : 0;
  const bool exclusive = !e.lock_all && e.locks.count(target) > 0 && e.locks[target];
  const bool atomic = ctx.info->has(kAtomic);
  const bool no_op = text(in, "op") == "no_op";  // MPI_NO_OP: a get-accumulate that only reads (sec. 12.3.4)
  const bool get = ctx.info->has(kGet) && (!atomic || no_op);
  Access origin;
  origin.p = p;
  origin.index = i;
  origin.rank = origin.owner = pr.rank;
  origin.lo = address(in, "buf");
  origin.hi = origin.lo + static_cast<uint64_t>(std::max<int64_t>(0, number(in, "bytes", 0)));
  origin.write = get;
  origin.rma = true;
  origin.in_epoch = true;
  origin.sync_from = origin.sync_to = pr.syncs;
  origin.done = SIZE_MAX;
  origin.order = 2 * i;
  origin.tid = number(in, "tid", 0);
  origin.pscw = e.access && !e.lock_all && e.locks.count(target) == 0;
  if (origin.pscw && e.world_comm && !e.starts.empty() && e.starts.back().count(target) > 0) {
    origin.pscw_nth = 0;  // the earlier start epochs that held this target
    for (size_t k = 0; k + 1 < e.starts.size(); ++k) origin.pscw_nth += e.starts[k].count(target) > 0 ? 1 : 0;
  }
  origin.what = what + (get ? " writing its origin buffer" : " reading its origin buffer");
  Access remote = origin;
  remote.owner = e.world_comm ? static_cast<int>(target) : -1;  // ranks of another comm: not followed
  remote.window = ctx.window;
  remote.disp = number(in, "target_disp", 0);
  remote.bytes = std::max<int64_t>(0, number(in, "target_bytes", 0));
  remote.lo = remote.hi = 0;
  remote.write = !get;
  remote.accumulate = atomic;
  remote.unit = accumulate_unit(in);
  remote.exclusive = exclusive;
  remote.what = what + (get ? " reading its window" : " writing its window");
  if (origin.hi > origin.lo) {
    if (request != 0) pr.request_buffers[request].push_back(accesses_.size());
    e.pending.push_back(accesses_.size());
    accesses_.push_back(origin);
  }
  // A fetching atomic call (MPI_Fetch_and_op, MPI_Compare_and_swap, MPI_Get_accumulate) writes its result
  // buffer as a get writes its origin (with MPI_NO_OP the recorder wrote the result buffer as `buf`, above).
  if (Access result = origin; atomic && ctx.info->has(kGet) && !no_op) {
    result.lo = address(in, "result_buf");
    result.hi = result.lo + static_cast<uint64_t>(std::max<int64_t>(0, number(in, "result_bytes", 0)));
    result.write = true;
    result.what = what + " writing its result buffer";
    if (result.lo != 0 && result.hi > result.lo) {
      if (request != 0) pr.request_buffers[request].push_back(accesses_.size());
      e.pending.push_back(accesses_.size());
      accesses_.push_back(result);
    }
  }
  if (remote.owner >= 0 && remote.bytes > 0) {
    // A request-based get has read its target once its request completes (the data is at the origin).
    if (request != 0 && get) pr.request_buffers[request].push_back(accesses_.size());
    e.pending.push_back(accesses_.size());
    accesses_.push_back(remote);
  }
}

void MpiUsageRules::complete_pending(Epochs& e, size_t i, const ProcessRules& pr, int64_t target, bool local_only) {
  std::vector<size_t> still;
  for (size_t k : e.pending) {
    Access& a = accesses_[k];
    const bool hit =
        (target < 0 || (a.window.empty() ? true : a.owner == target)) && !(local_only && !a.window.empty());
    if (!hit) {
      still.push_back(k);
      continue;
    }
    complete(a, i, pr);  // a request-based transfer's wait may have completed its origin side before
  }
  e.pending = std::move(still);
}

// Call i of its rank completes `a`, unless an earlier call did (a request's wait, then the epoch's end).
void MpiUsageRules::complete(Access& a, size_t i, const ProcessRules& pr) {
  if (a.done != SIZE_MAX) return;
  a.done = i;
  a.sync_to = pr.syncs;
}

void MpiUsageRules::local_access(size_t p, size_t i, const RecorderLine* in, const char* addr, const char* bytes,
                                 bool write, const std::string& what) {
  ProcessRules& pr = processes_[p];
  const uint64_t lo = address(in, addr);
  const int64_t n = number(in, bytes, 0);
  if (lo == 0 || n <= 0) return;
  Access a;
  a.p = p;
  a.index = a.done = i;
  a.rank = a.owner = pr.rank;
  a.lo = lo;
  a.hi = lo + static_cast<uint64_t>(n);
  a.write = write;
  a.order = 2 * i;
  a.tid = number(in, "tid", 0);
  a.sync_from = a.sync_to = pr.syncs;
  a.in_epoch = in_epoch(pr);
  self_lock(pr, a);
  a.what = what + (write ? " writing its buffer" : " reading its buffer");
  accesses_.push_back(a);
}

// The program's own loads and stores (clang's SanitizerCoverage, docs/TRACES.md "Loads and stores") are local
// accesses like an MPI call's buffer: between two calls of the rank, so an RMA transfer issued before and
// completed by the next call is in flight there (MPI 4.1 sec. 12.7: "a store to the origin buffer of a get
// before the get completes", a load or store of window memory that another rank's transfer reaches in the
// same epoch).
void MpiUsageRules::program_access(size_t p, const RecordedAccess& ra, const std::string& file) {
  ProcessRules& pr = processes_[p];
  const RecorderLine* l = ra.line;
  const uint64_t lo = address(l, "addr");
  const int64_t n = number(l, "bytes", 0);
  if (pr.rank < 0 || ra.before_call == 0 || lo == 0 || n <= 0) return;  // before MPI_Init: no rank, no window
  Access a;
  a.p = p;
  a.index = a.done = ra.before_call;
  a.order = 2 * ra.before_call - 1;
  a.rank = a.owner = pr.rank;
  a.lo = lo;
  a.hi = lo + static_cast<uint64_t>(n);
  a.write = text(l, "call") == "store";
  a.program = true;
  a.tid = number(l, "tid", 0);
  a.seq = static_cast<uint64_t>(number(l, "seq", 0));
  a.sync_from = a.sync_to = pr.syncs;
  // Another thread's calls may stand between the access and the calls of its own thread before it: what it
  // knows of the other ranks is what the calls that happen before it by the threads' recorded synchronization
  // knew (the clocks and counts are the process's, in call order: never less than that).
  if (auto order = thread_orders_.find(p);
      order != thread_orders_.end() && order->second != nullptr && order->second->recorded && call_seqs_.count(p) > 0) {
    const auto& seqs = call_seqs_[p];
    size_t last = ra.before_call;  // the last call before it by that order, +1 (0: none)
    while (last > 0 && !(last - 1 < seqs.size() && order->second->happens_before(seqs[last - 1], a.seq).value_or(true)))
      --last;
    if (last < ra.before_call) {
      a.knows_index = last;
      const auto& syncs = syncs_after_[p];
      a.sync_from = a.sync_to = last == 0 || last - 1 >= syncs.size() ? 0 : syncs[last - 1];
    }
  }
  a.in_epoch = in_epoch(pr);
  self_lock(pr, a);
  a.what = std::string("the program's ") + (a.write ? "store to " : "load of ") + std::to_string(n) + " bytes at " +
           hex(lo) + " (" + file + ":" + std::to_string(l->line) + ")";
  accesses_.push_back(a);
}

const MpiUsageRules::Epochs::Exposure* MpiUsageRules::matched_exposure(const Access& remote) const {
  if (remote.pscw_nth < 0) return nullptr;
  for (const auto& [p, pr] : processes_) {
    if (pr.rank != remote.owner) continue;
    auto w = pr.windows.find(remote.window);
    if (w == pr.windows.end()) return nullptr;
    int nth = remote.pscw_nth;
    for (const auto& x : w->second.exposures)
      if (x.group.count(remote.rank) > 0 && nth-- == 0) return &x;
    return nullptr;
  }
  return nullptr;
}

std::optional<bool> MpiUsageRules::inside_exposure(const Access& remote, const Access& local) const {
  const Epochs::Exposure* x = matched_exposure(remote);
  if (x == nullptr) return std::nullopt;
  return x->post_order < local.order && local.order < x->wait_order;
}

void MpiUsageRules::self_lock(const ProcessRules& pr, Access& a) {
  for (const auto& [id, e] : pr.windows)
    if (auto l = e.locks.find(pr.rank); !e.freed && l != e.locks.end() && l->second) {
      a.exclusive = true;
      a.locked_window = id;
    }
}

bool MpiUsageRules::in_epoch(const ProcessRules& pr) {
  for (const auto& [id, e] : pr.windows)
    if (!e.freed && (e.fence_open || e.lock_all || !e.locks.empty() || e.access || e.exposure)) return true;
  return false;
}

void MpiUsageRules::find_races() {
  compute_clocks();
  // Target bytes become the owner's addresses (its window's base and displacement unit).
  for (Access& a : accesses_) {
    if (a.window.empty()) continue;
    auto it = memory_.find({a.window, a.owner});
    if (it == memory_.end() || it->second.base == 0) {
      a.owner = -1;
      continue;
    }
    a.lo = it->second.base + static_cast<uint64_t>(a.disp * it->second.disp_unit);
    a.hi = a.lo + static_cast<uint64_t>(a.bytes);
  }
  // Pairs of accesses to one rank's memory; a program with very many is left unchecked (quadratic).
  std::map<int, std::vector<size_t>> by_owner;
  for (size_t k = 0; k < accesses_.size(); ++k)
    if (accesses_[k].owner >= 0) by_owner[accesses_[k].owner].push_back(k);
  constexpr size_t kMaxPerOwner = 4096;
  for (const auto& [owner, ks] : by_owner) {
    if (ks.size() > kMaxPerOwner) {
      notes_.push_back("the race rules did not compare the " + std::to_string(ks.size()) + " accesses to rank " +
                       std::to_string(owner) + "'s memory (more than " + std::to_string(kMaxPerOwner) +
                       ", compared in pairs): races there are not checked");
      continue;
    }
    for (size_t x = 0; x < ks.size(); ++x)
      for (size_t y = x + 1; y < ks.size(); ++y) {
        const Access& a = accesses_[ks[x]];
        const Access& b = accesses_[ks[y]];
        if (a.lo >= b.hi || b.lo >= a.hi) continue;
        if (!a.write && !b.write) continue;
        // Accumulates are atomic with each other element by element when both use the same basic type on
        // element-aligned bytes (MPI 4.1 sec. 12.7.1); another type, or bytes offset within an element, races.
        if (a.accumulate && b.accumulate && a.unit.name == b.unit.name && !a.unit.name.empty() &&
            (a.unit.bytes > 0 ? (a.lo > b.lo ? a.lo - b.lo : b.lo - a.lo) % static_cast<uint64_t>(a.unit.bytes) == 0
                              : a.lo == b.lo))
          continue;
        if (a.rank == b.rank) {
          // One rank: a call made while an RMA transfer on the same bytes is in flight (MPI 4.1 sec. 12.7).
          if (a.p == b.p && a.index == b.index) continue;
          // The program's access of another thread than the transfer's: written at that thread's next call or
          // OpenMP synchronization, it may have come anywhere since its last one, so the recorded order says
          // nothing; the threads' recorded synchronization does (thread_order.h), and without it such a pair is
          // not judged (an OpenMP barrier the trace does not see may order them).
          if (a.tid != b.tid && (a.program || b.program)) {
            const Access& local = a.program ? a : b;
            const Access& transfer = a.program ? b : a;
            if (!transfer.rma || transfer.program || !threads_unordered(transfer, local)) continue;
            error(local.p, local.index, transfer.nonblocking ? model::MpiRule::BufferInUse : model::MpiRule::RmaRace,
                  local.what + " on thread " + std::to_string(local.tid) + " while " + transfer.what + " on thread " +
                      std::to_string(transfer.tid) +
                      " may not be completed: the same bytes, one of them written, and nothing in the threads' "
                      "recorded OpenMP synchronization orders the two (MPI 4.1 sec. " +
                      (transfer.nonblocking ? "3.7.2" : "12.7") + ")");
            continue;
          }
          const Access& first = a.order <= b.order ? a : b;
          const Access& second = a.order <= b.order ? b : a;
          const bool completed_before = first.done != SIZE_MAX && second.order >= 2 * first.done;
          if (!first.rma || second.order <= first.order || completed_before) continue;
          // The program's access of another thread: written before that thread's next call, it may have come
          // anywhere since its last one (after the completion too, ordered by an OpenMP barrier the trace does
          // not see): not judged against this thread's transfer.
          if ((first.program || second.program) && first.tid != second.tid) continue;
          // A nonblocking send's or receive's buffer against another point-to-point call's: MPICH's own tests
          // post several receives into one buffer (test/mpi/pt2pt/patterns.c, inactivereq.c) and MPI 4.1 sec.
          // 3.7.2 speaks of the program's accesses ("the receiver should not access any part of the receive
          // buffer"): only the program's loads and stores and RMA transfers are judged against it.
          if (first.nonblocking && !second.program && !second.rma) continue;
          if (first.nonblocking && second.nonblocking) continue;
          // Two transfers of one origin to the same bytes of a window, the second issued before the first was
          // completed (by a flush, an unlock, the epoch's end): MPI orders neither (sec. 12.7), one writes.
          // Accumulates of one origin to one target are ordered (accumulate_ordering, sec. 12.7.2), and MPICH's
          // tests mix an accumulate and a get of it in one epoch (test/mpi/rma/fetchandadd_tree.c): only two plain
          // puts or gets are judged.
          if (!first.window.empty() && !second.window.empty() && (first.accumulate || second.accumulate)) continue;
          if (!first.window.empty() && !second.window.empty()) {
            error(second.p, second.index, model::MpiRule::RmaRace,
                  second.what + " while its " + first.what + " is not yet completed: the same bytes of rank " +
                      std::to_string(owner) + ", one of them written, with nothing ordering them (MPI 4.1 sec. 12.7)");
            continue;
          }
          error(second.p, second.index, model::MpiRule::BufferInUse,
                second.what + " while " + first.what +
                    (first.nonblocking
                         ? " is not yet completed by a wait or test: the same bytes, one of them written (MPI 4.1 "
                           "sec. 3.7.2)"
                         : " is not yet completed: the same bytes, one of them written, in one epoch (MPI 4.1 "
                           "sec. 12.7)"));
          continue;
        }
        // Two ranks: concurrent when neither completed before a synchronisation the other came after, nor
        // before a message that reached the other (the run's happens-before order).
        if (a.sync_to < b.sync_from || b.sync_to < a.sync_from) continue;
        if (happens_before(a, b) || happens_before(b, a)) continue;
        const bool a_remote = !a.window.empty(), b_remote = !b.window.empty();
        if (!a_remote && !b_remote) continue;                              // each rank's own buffers: not shared
        if (a_remote && b_remote && a.exclusive && b.exclusive) continue;  // exclusive locks serialise them
        if (a_remote && b_remote && a.pscw && b.pscw) {  // two start epochs' transfers: in one exposure epoch?
          const Epochs::Exposure* xa = matched_exposure(a);
          const Epochs::Exposure* xb = matched_exposure(b);
          if (xa != nullptr && xb != nullptr && xa != xb) continue;  // the target's epochs follow each other
        }
        const Access& local = a_remote ? b : a;
        const Access& transfer = a_remote ? a : b;  // with both remote: a
        // An MPI call's buffer counts only inside an epoch. The program's own loads and stores outside every
        // epoch count (MPI 4.1 sec. 12.7) once the owner has passed a synchronisation after creating the window,
        // or when the transfer's issue happens before them; before that they are the window's initialisation,
        // which MBI's correct codes do right after MPI_Win_create while another rank's epoch may already run
        // (LocalConcurrency_Win_lock_Get_ok): not judged.
        if (!(a_remote && b_remote) && !local.rma && !local.in_epoch &&
            !(local.program &&
              (issued_before(transfer, local) || local.sync_from > created_syncs(local.p, transfer.window))))
          continue;
        // The owner's access under its own exclusive lock of the window and a transfer under another exclusive
        // lock of it: the locks serialise them (MPI 4.1 sec. 12.5.3).
        if (!(a_remote && b_remote) && local.exclusive && transfer.exclusive && local.locked_window == transfer.window)
          continue;
        // A transfer of a start/complete epoch is in flight at its target from the post to the wait of the
        // target's matching exposure epoch (MPI 4.1 sec. 12.5.2), whatever the synchronisation counts say. Where
        // the trace does not say the groups, the program's own accesses are not judged against it (MPICH's
        // test/mpi/rma/at_complete.c orders them by the wait).
        if (transfer.pscw && !(a_remote && b_remote)) {
          const std::optional<bool> inside = inside_exposure(transfer, local);
          if (inside ? !*inside : local.program) continue;
        }
        const Access& at = (a_remote && b_remote) ? b : local;
        const Access& other = &at == &a ? b : a;
        error(at.p, at.index, model::MpiRule::RmaRace,
              at.what + " and rank " + std::to_string(other.rank) + "'s " + other.what +
                  " touch the same bytes of rank " + std::to_string(owner) +
                  " in one epoch, one of them a write: a data race (MPI 4.1 sec. 12.7)");
      }
  }
}

bool MpiUsageRules::threads_unordered(const Access& transfer, const Access& local) const {
  auto it = thread_orders_.find(local.p);
  if (it == thread_orders_.end() || it->second == nullptr || !it->second->recorded || transfer.p != local.p)
    return false;
  const ThreadOrder& order = *it->second;
  auto seqs = call_seqs_.find(transfer.p);
  if (seqs == call_seqs_.end() || transfer.index >= seqs->second.size()) return false;
  const std::optional<bool> before_issue = order.happens_before(local.seq, seqs->second[transfer.index]);
  if (!before_issue || *before_issue) return false;
  if (transfer.done == SIZE_MAX) return true;  // never completed: in flight from its issue on
  if (transfer.done >= seqs->second.size()) return false;
  const std::optional<bool> after_done = order.happens_before(seqs->second[transfer.done], local.seq);
  return after_done && !*after_done;
}

std::map<std::pair<size_t, size_t>, std::vector<MpiUsageError>> MpiUsageRules::errors() {
  find_races();
  return errors_;
}

}  // namespace collmc::traces
