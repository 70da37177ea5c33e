#include "collmc/checker/search.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <stdexcept>
#include <utility>

#include "state_tree.h"
#include "visited_set.h"

namespace collmc::checker {

namespace {

using Clock = std::chrono::steady_clock;

uint64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<uint64_t>(u.ru_maxrss) * 1024;
}

// "4", "2.5": what the user typed, not std::to_string's "4.000000".
std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// Limits, statistics and the progress line, shared by both searches.
class Monitor {
 public:
  Monitor(const SearchOptions& options, SearchResult& result)
      : options_(options), result_(result), start_(Clock::now()) {
    using P = SearchOptions::Progress;
    terminal_ = isatty(STDERR_FILENO) != 0;
    show_ = options.progress == P::Always || (options.progress == P::Auto && terminal_);
  }
  ~Monitor() { clear_line(); }

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

  // Called once per expanded state; returns the limit hit, or "".
  std::string tick(uint64_t memory_bytes) {
    auto& st = result_.stats;
    if (options_.max_states && st.states >= options_.max_states)
      return "max-states (" + std::to_string(options_.max_states) + ")";
    if ((st.expanded & 1023) != 0) return {};
    if (options_.stop != nullptr && options_.stop->load(std::memory_order_relaxed)) return "interrupted";
    const double t = elapsed();
    if (options_.time_limit_s > 0 && t > options_.time_limit_s)
      return "time-limit (" + seconds_text(options_.time_limit_s) + " s)";
    if (options_.max_memory_mib && memory_bytes > (options_.max_memory_mib << 20))
      return "max-memory (" + std::to_string(options_.max_memory_mib) + " MiB)";
    // On a terminal one line rewritten in place; into a log (--progress forced) a plain line every
    // 5 s, with no carriage return or escape sequence.
    if (show_ && t >= options_.progress_after_s && (last_shown_ < 0 || t - last_shown_ >= (terminal_ ? 0.25 : 5.0))) {
      last_shown_ = t;
      std::fprintf(stderr, "%s[search] %llu states, %.0f states/s, depth %llu, memory %.1f MiB, %.1f s%s",
                   terminal_ ? "\r" : "", static_cast<unsigned long long>(st.states),
                   static_cast<double>(st.states) / t, static_cast<unsigned long long>(st.max_depth),
                   static_cast<double>(memory_bytes) / (1 << 20), t, terminal_ ? "\033[K" : "\n");
      std::fflush(stderr);
      shown_ = terminal_;
    }
    return {};
  }

  SearchResult finish(model::Verdict v, uint64_t stored, uint64_t memory_bytes) {
    clear_line();
    result_.verdict = v;
    result_.stats.stored = stored;
    result_.stats.seconds = elapsed();
    result_.stats.memory_bytes = memory_bytes;
    result_.stats.peak_rss_bytes = peak_rss_bytes();
    return std::move(result_);
  }

 private:
  void clear_line() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

  const SearchOptions& options_;
  SearchResult& result_;
  Clock::time_point start_;
  bool show_ = false;
  bool terminal_ = false;
  bool shown_ = false;
  double last_shown_ = -1;  // when the line was last written (-1: never)
};

// The state a violating step starts from, rebuilt by replaying the path (the depth-first search
// applies lone steps in place, so it no longer has it).
State replay(const NextState& system, const std::vector<Step>& path) {
  State s = system.initial();
  for (const Step& step : path) system.apply(s, step);
  return s;
}

SearchResult depth_first(const NextState& system, const SearchOptions& options) {
  SearchResult result;
  Monitor monitor(options, result);
  StateTree visited;
  // A state with a choice: its steps, how many were taken, where the path stood, and the undo mark
  // that restores the state (the search changes one State in place and undoes steps on return).
  struct Frame {
    std::vector<Step> steps;
    State::Mark mark;
    size_t taken = 0;
    size_t path_length = 0;
  };
  std::vector<Frame> frames;  // [0, open): the frames of the current path; the rest keep their storage
  size_t open = 0;
  std::vector<Step> path;
  std::vector<Step> steps;
  uint64_t frame_steps = 0;
  State cur = system.initial();
  auto memory = [&]() {
    return visited.memory_bytes() + path.capacity() * sizeof(Step) + frames.capacity() * sizeof(Frame) +
           frame_steps * sizeof(Step) + cur.ranks.journal_size() * sizeof(RankState) +
           cur.comms.journal_size() * sizeof(CommState);
  };
  auto& stats = result.stats;

  // Applies a step of a frame: tried when the frame was made, or of a kind that is never a violation.
  auto follow = [&](State& s, const Step& step) {
    if (system.apply(s, step)) throw std::logic_error("a step found not to be a violation is one");
  };

  int last_rank = 0;
  while (true) {
    ++stats.states;
    if (path.size() > stats.max_depth) stats.max_depth = path.size();
    if (std::string limit = monitor.tick(memory()); !limit.empty()) {
      result.limit = limit;
      return monitor.finish(model::Verdict::Inconclusive, visited.size(), memory());
    }
    steps.clear();
    // A revisit found before its steps are computed: every step from it was taken when it was stored.
    const bool revisit = visited.known_stored(cur);
    if (!revisit) {
      system.enabled(cur, steps, last_rank);
      ++stats.expanded;
    }
    bool backtrack = false;
    if (revisit) {
      backtrack = true;
    } else if (steps.empty()) {
      if (!system.is_final(cur)) {
        result.schedule = path;
        result.end_state = State(std::as_const(cur));
        return monitor.finish(model::Verdict::Deadlock, visited.size(), memory());
      }
      backtrack = true;
    } else if (steps.size() == 1) {
      ++stats.transitions;
      if (auto violation = system.apply(cur, steps.front())) {
        result.schedule = path;
        result.schedule.push_back(steps.front());
        result.violation = std::move(violation);
        result.end_state = replay(system, path);
        return monitor.finish(result.violation->verdict, visited.size(), memory());
      }
      path.push_back(steps.front());
      last_rank = steps.front().rank;
      continue;
    } else if (!visited.insert(cur)) {
      backtrack = true;
    } else {
      // Every step that may be a violation is tried before any is followed, so that a violation one
      // step away is reported here, as the first of them in order; the first successor is the one
      // followed.
      const State::Mark mark = cur.checkpoint();
      for (size_t i = 0; i < steps.size(); ++i) {
        ++stats.transitions;
        if (!may_violate(steps[i].kind)) continue;
        auto violation = system.apply(cur, steps[i]);
        cur.undo(mark);
        if (violation) {
          result.schedule = path;
          result.schedule.push_back(steps[i]);
          result.violation = std::move(violation);
          result.end_state = State(std::as_const(cur));
          return monitor.finish(result.violation->verdict, visited.size(), memory());
        }
      }
      frame_steps += steps.size();
      if (open == frames.size()) frames.emplace_back();
      Frame& f = frames[open++];
      f.steps.assign(steps.begin(), steps.end());
      f.mark = mark;
      f.taken = 1;
      f.path_length = path.size();
      path.push_back(steps.front());
      last_rank = steps.front().rank;
      follow(cur, steps.front());
      continue;
    }
    if (backtrack)
      while (open > 0 && frames[open - 1].taken == frames[open - 1].steps.size()) {
        frame_steps -= frames[open - 1].steps.size();
        --open;
      }
    if (open == 0) return monitor.finish(model::Verdict::Safe, visited.size(), memory());
    Frame& f = frames[open - 1];
    path.resize(f.path_length);
    path.push_back(f.steps[f.taken]);
    last_rank = f.steps[f.taken].rank;
    cur.undo(f.mark);
    follow(cur, f.steps[f.taken]);
    ++f.taken;
  }
}

struct Parent {
  uint32_t parent;
  uint32_t depth;
  Step step;
};

constexpr uint32_t kNoParent = UINT32_MAX;

SearchResult breadth_first(const NextState& system, const SearchOptions& options) {
  SearchResult result;
  Monitor monitor(options, result);
  VisitedSet visited;
  std::vector<Parent> parents;
  std::deque<uint32_t> frontier;
  auto& stats = result.stats;

  auto add = [&](const State& s, uint32_t parent, uint32_t depth, const Step& step) {
    auto [id, inserted] = visited.insert(encode_state(s));
    if (!inserted) return;
    ++stats.states;
    parents.push_back(Parent{parent, depth, step});
    frontier.push_back(id);
    if (depth > stats.max_depth) stats.max_depth = depth;
  };
  auto schedule_to = [&](uint32_t id) {
    std::vector<Step> steps;
    while (id != kNoParent && parents[id].parent != kNoParent) {
      steps.push_back(parents[id].step);
      id = parents[id].parent;
    }
    return std::vector<Step>(steps.rbegin(), steps.rend());
  };
  auto memory = [&]() {
    return visited.memory_bytes() + parents.capacity() * sizeof(Parent) + frontier.size() * sizeof(uint32_t);
  };
  auto finish = [&](model::Verdict v) { return monitor.finish(v, visited.size(), memory()); };

  add(system.initial(), kNoParent, 0, Step{});
  std::vector<Transition> succ;
  uint32_t violation_depth = kNoParent;  // the depth of the state a violation was found from
  while (!frontier.empty()) {
    if (std::string limit = monitor.tick(memory()); !limit.empty()) {
      // A violation already found stands (perhaps not the shortest); otherwise nothing is proven.
      if (violation_depth != kNoParent) return finish(result.violation->verdict);
      result.limit = limit;
      return finish(model::Verdict::Inconclusive);
    }
    const uint32_t id = frontier.front();
    if (violation_depth != kNoParent && parents[id].depth > violation_depth) return finish(result.violation->verdict);
    frontier.pop_front();
    State s = decode_state(visited.bytes(id));
    succ.clear();
    system.successors(s, succ);
    ++stats.expanded;
    stats.transitions += succ.size();
    if (succ.empty()) {
      if (!system.is_final(s)) {
        result.violation.reset();
        result.schedule = schedule_to(id);
        result.end_state = std::move(s);
        return finish(model::Verdict::Deadlock);
      }
      continue;
    }
    for (auto& tr : succ) {
      if (!tr.violation) continue;
      result.schedule = schedule_to(id);
      result.schedule.push_back(tr.step);
      result.violation = std::move(tr.violation);
      result.end_state = s;  // the state the violating step starts from
      // A deadlock among the states still queued at this depth is shorter.
      violation_depth = parents[id].depth;
      break;
    }
    if (violation_depth != kNoParent) continue;
    for (const auto& tr : succ) add(tr.next, id, parents[id].depth + 1, tr.step);
  }
  if (violation_depth != kNoParent) return finish(result.violation->verdict);
  return finish(model::Verdict::Safe);
}

}  // namespace

SearchResult explore(const NextState& system, const SearchOptions& options) {
  return options.shortest ? breadth_first(system, options) : depth_first(system, options);
}

}  // namespace collmc::checker
