// The shrink driver: reduction passes over ranks, choices, communicators and statements, repeated
// until none removes anything; then, with --max-ranks, a search over small rank subsets.
#include "collmc/shrink/shrink.h"

#include <chrono>
#include <functional>
#include <iomanip>
#include <set>
#include <sstream>
#include <stdexcept>

#include "choices.h"
#include "collmc/model/parser.h"
#include "collmc/model/print.h"
#include "ddmin.h"
#include "oracle.h"
#include "units.h"

namespace collmc::shrink {

using model::ProgramNode;
using model::Verdict;
using model::World;

namespace {

int count_choices(const ProgramNode& n) {
  int c = n.kind == ProgramNode::Kind::AnyOrder || n.kind == ProgramNode::Kind::Either ? 1 : 0;
  for (const auto& child : n.children) c += count_choices(child);
  return c;
}

bool smaller(const Size& a, const Size& b) {
  return a.ranks + a.comms + a.statements + a.choices < b.ranks + b.comms + b.statements + b.choices;
}

// "2 ranks", "1 comm".
std::string count_words(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string size_words(const Size& s) {
  return count_words(static_cast<size_t>(s.ranks), "rank", "ranks") + ", " +
         count_words(static_cast<size_t>(s.comms), "comm", "comms") + ", " +
         count_words(static_cast<size_t>(s.statements), "statement", "statements") + ", " +
         count_words(static_cast<size_t>(s.choices), "choice", "choices");
}

class Shrinker {
 public:
  Shrinker(const World& input, const ShrinkOptions& options)
      : input_(input), options_(options), oracle_(options, stats_) {}

  ShrinkResult run() {
    const auto start = std::chrono::steady_clock::now();
    ShrinkResult result;
    stats_.before = size_of(input_);
    best_ = oracle_.check(input_, "<shrink input>");
    if (best_.result.verdict != Verdict::Safe && best_.result.verdict != Verdict::Inconclusive &&
        input_.knobs.mpi_progress == model::MpiProgress::Portable && best_.result.progress_matters) {
      // A hang found under one progress model shrinks under that model, which the output then sets: under
      // the default a smaller candidate could keep the verdict only by hanging under another model.
      input_.knobs.mpi_progress = best_.result.mpi_progress;
      best_ = oracle_.check(input_, "<shrink input>");
    }
    result.verdict = best_.result.verdict;
    if (result.verdict == Verdict::Safe || result.verdict == Verdict::Inconclusive) {
      result.outcome = result.verdict == Verdict::Safe ? Outcome::Safe : Outcome::Inconclusive;
      return result;
    }
    oracle_.set_target(shape_of(best_.result));
    for (int r = 0; r < input_.ranks; ++r) original_rank_.push_back(r);
    fixpoint();
    if (options_.max_ranks > 0 && best_.world->ranks > options_.max_ranks) subset_search();

    stats_.after = size_of(*best_.world);
    stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.original_rank = original_rank_;
    result.reached_max_ranks = options_.max_ranks <= 0 || best_.world->ranks <= options_.max_ranks;
    result.time_limit_hit = oracle_.time_limit_hit() || oracle_.out_of_time();
    World final_world = std::move(*best_.world);
    final_world.name = input_.name.empty() ? "shrunk" : input_.name + " (shrunk)";
    final_world.expect = result.verdict;
    result.stats = stats_;
    result.text = model::print_world(final_world, header());
    result.world = std::make_unique<World>(model::resolve(
        model::parse_string(result.text, options_.output_name.empty() ? "<shrunk>" : options_.output_name)));
    return result;
  }

 private:
  std::string header() const {
    std::ostringstream h;
    h << "Shrunk by `collmc shrink` from " << (options_.source_name.empty() ? "a scenario" : options_.source_name)
      << ":\n  " << size_words(stats_.before) << "\n  -> " << size_words(stats_.after) << "\n"
      << "candidates tried " << stats_.candidates << " (" << stats_.checks << " checked) in " << std::fixed
      << std::setprecision(2) << stats_.seconds
      << " s; the result is checked: " << model::verdict_name(best_.result.verdict) << "\n";
    h << "rank here <- rank in the original:";
    for (size_t r = 0; r < original_rank_.size(); ++r) h << " " << r << "<-" << original_rank_[r];
    h << "\n";
    return h.str();
  }

  void fixpoint() {
    bool first = true;
    while (!oracle_.out_of_time()) {
      ++stats_.rounds;
      const Size before = size_of(*best_.world);
      // Ranks go first while every choice is still open: the smallest set of ranks that can fail may
      // need choices other than the ones the first counterexample took.
      ranks_pass(first);
      choices_pass();
      ranks_pass(false);
      comms_pass();
      statements_pass();
      first = false;
      if (!smaller(size_of(*best_.world), before)) break;
    }
  }

  // Tests `edit` of `base`; on success the candidate becomes the best (ranks renumbered).
  bool adopt(const World& base, const Edit& edit, const std::vector<int>& base_original_rank) {
    auto candidate = oracle_.test(base, edit);
    if (!candidate) return false;
    std::vector<int> kept;
    for (size_t r = 0; r < edit.keep_rank.size(); ++r)
      if (edit.keep_rank[r]) kept.push_back(base_original_rank[r]);
    original_rank_ = std::move(kept);
    best_ = std::move(*candidate);
    return true;
  }

  // Tests an edit of the current best.
  bool try_edit(const Edit& edit) {
    Checked base = std::move(best_);
    const std::vector<int> base_original_rank = original_rank_;
    if (adopt(*base.world, edit, base_original_rank)) return true;
    best_ = std::move(base);
    return false;
  }

  // Runs ddmin over `items` of the current best; `edit_for` makes the candidate keeping a subset.
  template <class EditFor>
  void ddmin_pass(std::vector<int> items, EditFor&& edit_for) {
    if (items.empty()) return;
    Checked base = std::move(best_);
    const std::vector<int> base_original_rank = original_rank_;
    ddmin(std::move(items), [&](const std::vector<int>& subset) {
      return adopt(*base.world, edit_for(*base.world, subset), base_original_rank);
    });
    if (!best_.world) best_ = std::move(base);
  }

  static std::vector<int> iota(int n) {
    std::vector<int> v;
    for (int i = 0; i < n; ++i) v.push_back(i);
    return v;
  }

  static Edit keep_ranks(const World& w, const std::vector<int>& ranks) {
    Edit e = Edit::identity(w);
    std::fill(e.keep_rank.begin(), e.keep_rank.end(), 0);
    for (int r : ranks) e.keep_rank[static_cast<size_t>(r)] = 1;
    return e;
  }

  void ranks_pass(bool try_cycle) {
    const World& w = *best_.world;
    if (try_cycle && !best_.result.wait_for.cycles.empty()) {
      // The ranks of the first wait-for cycle are the usual answer: try them before bisecting.
      std::set<int> cycle;
      for (int node : best_.result.wait_for.cycles.front())
        cycle.insert(best_.result.wait_for.nodes[static_cast<size_t>(node)].rank);
      if (static_cast<int>(cycle.size()) < w.ranks) try_edit(keep_ranks(w, {cycle.begin(), cycle.end()}));
    }
    ddmin_pass(iota(best_.world->ranks), keep_ranks);
  }

  void comms_pass() {
    ddmin_pass(iota(static_cast<int>(best_.world->comms.size())), [](const World& w, const std::vector<int>& comms) {
      Edit e = Edit::identity(w);
      std::fill(e.keep_comm.begin(), e.keep_comm.end(), 0);
      for (int c : comms) e.keep_comm[static_cast<size_t>(c)] = 1;
      return e;
    });
  }

  void statements_pass() {
    const auto units = statement_units(*best_.world);
    ddmin_pass(iota(static_cast<int>(units.size())), [&units](const World& w, const std::vector<int>& kept) {
      Edit e = Edit::identity(w);
      std::fill(e.keep_call.begin(), e.keep_call.end(), 0);
      for (int u : kept)
        for (int call : units[static_cast<size_t>(u)]) e.keep_call[static_cast<size_t>(call)] = 1;
      return e;
    });
  }

  // Every choice resolved the way the counterexample went, at once; where that fails, one at a time.
  void choices_pass() {
    {
      const World& w = *best_.world;
      auto points = choice_points(w.programs);
      if (points.empty()) return;
      const auto position = executed_positions(best_.result, w.calls.size());
      Edit e = Edit::identity(w);
      for (auto it = points.rbegin(); it != points.rend(); ++it) {
        ProgramNode& n = node_at(e.programs, *it);
        n = resolutions(n, position).front();
      }
      if (try_edit(e)) return;
    }
    for (size_t i = 0;;) {
      const World& w = *best_.world;
      auto points = choice_points(w.programs);
      if (i >= points.size() || oracle_.out_of_time()) return;
      const auto position = executed_positions(best_.result, w.calls.size());
      bool resolved = false;
      auto programs = w.programs;
      for (const auto& option : resolutions(node_at(programs, points[i]), position)) {
        Edit e = Edit::identity(w);
        node_at(e.programs, points[i]) = option;
        if (try_edit(e)) {
          resolved = true;
          break;
        }
      }
      if (!resolved) ++i;
    }
  }

  // Connected rank subsets of the input (ranks linked when they share a comm), smallest first.
  void subset_search() {
    const World& w = input_;
    std::vector<std::vector<char>> linked(static_cast<size_t>(w.ranks),
                                          std::vector<char>(static_cast<size_t>(w.ranks)));
    for (const auto& c : w.comms)
      for (int a : c.members)
        for (int b : c.members) linked[static_cast<size_t>(a)][static_cast<size_t>(b)] = 1;
    std::vector<int> subset;
    bool found = false;
    std::function<void(int, int)> grow = [&](int next, int size) {
      if (found || stats_.subset_candidates >= options_.subset_budget || oracle_.out_of_time()) return;
      if (static_cast<int>(subset.size()) == size) {
        ++stats_.subset_candidates;
        std::vector<int> identity = iota(w.ranks);
        if (adopt(w, keep_ranks(w, subset), identity)) found = true;
        return;
      }
      for (int r = next; r < w.ranks && !found; ++r) {
        // Each rank added must share a comm with one already chosen, so the subset stays connected
        // (in the order chosen; a subset connected only through a later rank is reached another way).
        bool joins = subset.empty();
        for (int s : subset) joins = joins || linked[static_cast<size_t>(s)][static_cast<size_t>(r)];
        if (!joins) continue;
        subset.push_back(r);
        grow(r + 1, size);
        subset.pop_back();
      }
    };
    for (int size = 1; size <= options_.max_ranks && !found; ++size) grow(0, size);
    if (found) fixpoint();
  }

  World input_;  // a copy: a hang found under one progress model pins it (run)
  ShrinkOptions options_;
  ShrinkStats stats_;
  Oracle oracle_;
  Checked best_;
  std::vector<int> original_rank_;  // rank r of best_ is rank original_rank_[r] of the input
};

}  // namespace

Size size_of(const World& world) {
  Size s;
  s.ranks = world.ranks;
  s.comms = static_cast<int>(world.comms.size());
  s.statements = static_cast<int>(world.calls.size());
  for (const auto& p : world.programs)
    for (const auto& t : p.threads) s.choices += count_choices(t.body);
  return s;
}

std::string stats_text(const ShrinkStats& stats) {
  std::ostringstream out;
  out << "before: " << size_words(stats.before) << "\n"
      << "after:  " << size_words(stats.after) << "\n"
      << "candidates tried " << stats.candidates << ", checked " << stats.checks << ", accepted " << stats.accepted
      << ", inconclusive " << stats.inconclusive;
  if (stats.subset_candidates) out << ", rank subsets tried " << stats.subset_candidates;
  out << "; " << count_words(static_cast<size_t>(stats.rounds), "round", "rounds") << ", " << std::fixed
      << std::setprecision(2) << stats.seconds << " s\n";
  return out.str();
}

ShrinkResult shrink(const World& world, const ShrinkOptions& options) { return Shrinker(world, options).run(); }

}  // namespace collmc::shrink
