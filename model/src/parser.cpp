#include "collmc/model/parser.h"

#include <algorithm>
#include <limits>
#include <set>

#include "lexer.h"

namespace collmc::model {

bool RankSet::contains(int rank) const {
  if (all) return true;
  for (const auto& [lo, hi] : ranges)
    if (rank >= lo && rank <= hi) return true;
  return false;
}

std::vector<int> RankSet::expand(int world) const {
  std::set<int> out;
  if (all) {
    for (int r = 0; r < world; ++r) out.insert(r);
  } else {
    for (const auto& [lo, hi] : ranges)
      for (int r = lo; r <= hi; ++r) out.insert(r);
  }
  return {out.begin(), out.end()};
}

namespace {

// Guards against hostile nesting depth: the parser is recursive over blocks.
constexpr int kMaxNesting = 200;
constexpr int kMaxRanks = kMaxWorldRanks;

class Parser {
 public:
  explicit Parser(const std::shared_ptr<const SourceFile>& file) : file_(file), toks_(tokenize(file)) {}

  Scenario run() {
    sc_.source = file_;
    while (true) {
      skip_separators();
      if (at(TokKind::End)) break;
      try {
        top_level();
      } catch (const InputError& e) {
        record(e);
        skip_rest_of_statement(true);
      } catch (const AfterBadWorld&) {
        skip_rest_of_statement(true);  // already said: the world size was refused
      } catch (const UnclosedBlock&) {
        // Recorded where it was found; the top-level form that ended it is read next.
      }
    }
    if (!errors_.empty()) throw InputError(errors_);
    if (sc_.ranks == 0) {
      SourceLoc loc{file_, 1, 1};
      throw InputError(loc, "missing 'ranks N': every scenario declares its world size");
    }
    return std::move(sc_);
  }

 private:
  // A block left open: a top-level form (or the end of the file) where a statement or its '}' should
  // be. Recorded as an error pointing at the '{', then the parse resumes at the top level.
  struct UnclosedBlock {};
  // A statement that needs the world size after `ranks N` was refused: the one error already says what
  // is wrong, and every comm and rank body after it would only repeat it ("'comm' before 'ranks N'").
  struct AfterBadWorld {};
  bool world_refused_ = false;
  void needs_world(const Token& t, const std::string& msg) const {
    if (sc_.ranks != 0) return;
    if (world_refused_) throw AfterBadWorld{};
    fail_msg(t, msg);
  }

  // Errors are collected, so that one run reports every error of a file that the parser can get past
  // by skipping to the end of the statement (as rustc and clang do); at most this many.
  static constexpr size_t kMaxErrors = 20;

  void record(const InputError& e) {
    errors_.push_back(e);
    if (errors_.size() >= kMaxErrors) throw InputError(errors_);
  }

  // After an error: past the rest of the statement (up to its newline or ';', a '{ ... }' in it
  // skipped whole). Inside a block a '}' that closes the block is left for it; at the top level a
  // stray '}' is dropped.
  void skip_rest_of_statement(bool top) {
    int depth = 0;
    while (!at(TokKind::End)) {
      if (at(TokKind::LBrace)) {
        ++depth;
      } else if (at(TokKind::RBrace)) {
        if (depth == 0 && !top) return;
        if (depth > 0) --depth;
      } else if (depth == 0 && (at(TokKind::Newline) || at(TokKind::Semicolon))) {
        advance();
        return;
      }
      advance();
    }
  }

  static bool is_top_level_word(const std::string& w) {
    return w == "ranks" || w == "name" || w == "expect" || w == "set" || w == "comm" || w == "process" ||
           w == "history" || w == "rank";
  }

  // ---- token helpers
  const Token& peek(size_t ahead = 0) const {
    size_t i = std::min(pos_ + ahead, toks_.size() - 1);
    return toks_[i];
  }
  bool at(TokKind k) const { return peek().kind == k; }
  bool at_name(const char* word) const { return at(TokKind::Name) && peek().text == word; }
  const Token& advance() {
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  SourceLoc loc_of(const Token& t) const { return SourceLoc{file_, t.line, t.column}; }

  [[noreturn]] void fail_at(const Token& t, const std::string& expected) const {
    throw InputError(loc_of(t), "expected " + expected + ", found " + describe(t));
  }
  [[noreturn]] void fail_msg(const Token& t, const std::string& msg) const { throw InputError(loc_of(t), msg); }

  const Token& expect(TokKind k, const std::string& what = "") {
    if (!at(k)) fail_at(peek(), what.empty() ? token_kind_name(k) : what);
    return advance();
  }
  std::string expect_name(const std::string& what) { return expect(TokKind::Name, what).text; }
  void expect_word(const char* word) {
    if (!at_name(word)) fail_at(peek(), std::string("'") + word + "'");
    advance();
  }

  void skip_separators() {
    while (at(TokKind::Newline) || at(TokKind::Semicolon)) advance();
  }
  void skip_newlines() {
    while (at(TokKind::Newline)) advance();
  }
  void end_of_statement() {
    if (at(TokKind::Newline) || at(TokKind::Semicolon)) {
      advance();
      return;
    }
    if (at(TokKind::RBrace) || at(TokKind::End)) return;  // `{ a }` on one line
    fail_at(peek(), "end of statement (a new line or ';')");
  }

  int64_t integer(const std::string& what) {
    const Token& t = expect(TokKind::Integer, what);
    if (t.value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail_msg(t, "integer too large");
    return static_cast<int64_t>(t.value);
  }

  int rank_number(const std::string& what) {
    const Token& t = peek();
    int64_t v = integer(what);
    check_rank(t, v);
    return static_cast<int>(v);
  }

  void check_rank(const Token& t, int64_t v) const {
    needs_world(t, "rank " + std::to_string(v) + " named before 'ranks N': declare the world size first");
    if (v < 0 || v >= sc_.ranks)
      fail_msg(t, "rank " + std::to_string(v) + " is outside the world: expected 0.." + std::to_string(sc_.ranks - 1));
  }

  uint64_t size_value(const std::string& what) {
    if (at(TokKind::Integer) || at(TokKind::Size)) return advance().value;
    fail_at(peek(), what);
  }

  std::string text_from(size_t first_tok) const {
    size_t last = pos_ == 0 ? 0 : pos_ - 1;
    while (last > first_tok && (toks_[last].kind == TokKind::Newline || toks_[last].kind == TokKind::Semicolon)) --last;
    size_t begin = toks_[first_tok].offset;
    size_t end = toks_[last].offset + toks_[last].length;
    if (end < begin) end = begin;
    return file_->text.substr(begin, end - begin);
  }

  // ---- top level
  void top_level() {
    const Token& t = peek();
    if (!at(TokKind::Name))
      fail_at(t,
              "a top-level form ('ranks', 'name', 'expect', 'observed', 'set', 'comm', 'process', 'history' or "
              "'rank')");
    const std::string& w = t.text;
    if (w == "ranks") return ranks_decl();
    if (w == "name") return name_decl();
    if (w == "expect") return expect_decl();
    if (w == "observed") return observed_decl();
    if (w == "set") return set_decl();
    if (w == "comm") return comm_decl();
    if (w == "process") return process_decl();
    if (w == "history") return history_decl();
    if (w == "rank") return rank_body();
    fail_at(t,
            "a top-level form ('ranks', 'name', 'expect', 'observed', 'set', 'comm', 'process', 'history' or 'rank')");
  }

  void ranks_decl() {
    const Token& kw = advance();
    if (sc_.ranks != 0) fail_msg(kw, "'ranks' declared twice");
    const Token& n = peek();
    world_refused_ = true;  // until the size is read and taken
    int64_t v = integer("the number of ranks");
    if (v < 1 || v > kMaxRanks)
      fail_msg(n, "world size " + std::to_string(v) + " out of range: expected 1.." + std::to_string(kMaxRanks));
    world_refused_ = false;
    sc_.ranks = static_cast<int>(v);
    sc_.ranks_loc = loc_of(kw);
    end_of_statement();
  }

  void name_decl() {
    advance();
    sc_.name = expect(TokKind::String, "a quoted title").text;
    end_of_statement();
  }

  void observed_decl() {
    const Token& kw = advance();
    const Token& v = peek();
    std::string word = expect_name("what the recorded run did (completed, hung or killed)");
    auto outcome = observed_outcome_from_name(word);
    if (!outcome) fail_msg(v, "unknown outcome '" + word + "': expected completed, hung or killed");
    if (sc_.observed) fail_msg(kw, "'observed' given twice");
    Observed o;
    o.outcome = *outcome;
    o.source = expect(TokKind::String, "a quoted source, e.g. \"NCCL INFO logs\"").text;
    o.loc = loc_of(kw);
    sc_.observed = std::move(o);
    end_of_statement();
  }

  void expect_decl() {
    const Token& kw = advance();
    const Token& v = peek();
    std::string word = expect_name("a verdict");
    auto verdict = verdict_from_name(word);
    if (!verdict || *verdict == Verdict::Inconclusive)
      fail_msg(v, "unknown verdict '" + word +
                      "': expected safe, deadlock, mismatch, divergent_kernel, use_after_deregister, "
                      "use_after_free or usage_error");
    if (sc_.expect) fail_msg(kw, "'expect' given twice");
    sc_.expect = verdict;
    sc_.expect_loc = loc_of(kw);
    end_of_statement();
  }

  // `2.29`, `2.30.7` or a development pre-release `2.31.0a16` (NCCL releases 2.9 and later: minor and
  // patch below 100). A pre-release has 2.MINOR.PATCH's version code (NCCL_VERSION_CODE has no suffix).
  uint32_t nccl_version(const Token& tok) {
    if (!at(TokKind::Version)) fail_at(tok, "an NCCL release such as 2.28 or 2.30.7");
    advance();
    const size_t suffix = tok.text.find('a');
    const std::string number = tok.text.substr(0, suffix);
    std::vector<uint32_t> parts;
    size_t start = 0;
    while (start <= number.size()) {
      const size_t dot = number.find('.', start);
      const std::string part = number.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      if (part.size() > 3) fail_msg(tok, "NCCL release '" + tok.text + "': a part too large");
      parts.push_back(static_cast<uint32_t>(std::stoul(part)));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    if (parts.size() > 3 || parts[0] != 2 || parts[1] >= 100 || (parts.size() == 3 && parts[2] >= 100) ||
        (suffix != std::string::npos && (parts.size() != 3 || tok.text.size() - suffix > 3)))
      fail_msg(tok, "NCCL release '" + tok.text + "': expected 2.MINOR, 2.MINOR.PATCH or 2.MINOR.PATCHaN");
    return nccl_version_code(parts[0], parts[1], parts.size() == 3 ? parts[2] : 0);
  }

  void set_decl() {
    advance();
    const Token& key_tok = peek();
    std::string key = expect_name("a knob name");
    expect(TokKind::Equals, "'='");
    const Token& val_tok = peek();
    if (key == "nccl_version") {
      sc_.nccl_version_loc = loc_of(val_tok);
      sc_.knobs.nccl_version = nccl_version(val_tok);
      sc_.knobs.nccl_version_set = true;
      end_of_statement();
      return;
    }
    if (key == "mpi_tag_ub") {  // MPI_TAG_UB of the MPI library (the import writes the one the run reported)
      const int64_t ub = integer("the largest tag the MPI library takes (MPI_TAG_UB, at least 32767)");
      if (ub < kMpiTagUbGuaranteed)
        fail_msg(val_tok, "MPI_TAG_UB is at least 32767 in every MPI library (MPI 4.1 sec. 9.1.1)");
      sc_.knobs.mpi_tag_ub = ub;
      end_of_statement();
      return;
    }
    std::string val = expect_name("a knob value");
    auto bad = [&](const char* allowed) {
      fail_msg(val_tok, "unknown value '" + val + "' for " + key + ": expected " + allowed);
    };
    if (key == "profile") {
      if (val == "nccl")
        sc_.knobs.profile = Profile::Nccl;
      else if (val == "mpi")
        sc_.knobs.profile = Profile::Mpi;
      else
        bad("nccl or mpi");
    } else if (key == "comm_mode") {
      if (val == "blocking")
        sc_.knobs.comm_mode = CommMode::Blocking;
      else if (val == "nonblocking")
        sc_.knobs.comm_mode = CommMode::Nonblocking;
      else
        bad("blocking or nonblocking");
    } else if (key == "runtime_connect") {
      if (val == "on")
        sc_.knobs.runtime_connect = true;
      else if (val == "off")
        sc_.knobs.runtime_connect = false;
      else
        bad("on or off");
    } else if (key == "stream_progress") {
      if (val == "independent")
        sc_.knobs.stream_progress = StreamProgress::Independent;
      else if (val == "serialized")
        sc_.knobs.stream_progress = StreamProgress::Serialized;
      else
        bad("independent or serialized");
    } else if (key == "rma_eager_init") {
      if (val == "on")
        sc_.knobs.rma_eager_init = true;
      else if (val == "off")
        sc_.knobs.rma_eager_init = false;
      else
        bad("on or off");
    } else if (key == "mpi_progress") {
      if (val == "sync")
        sc_.knobs.mpi_progress = MpiProgress::Sync;
      else if (val == "strong")
        sc_.knobs.mpi_progress = MpiProgress::Strong;
      else if (val == "weak")
        sc_.knobs.mpi_progress = MpiProgress::Weak;
      else if (val == "portable")
        sc_.knobs.mpi_progress = MpiProgress::Portable;
      else
        bad("sync, strong, weak or portable");
    } else {
      fail_msg(key_tok, "unknown knob '" + key +
                            "': expected profile, comm_mode, runtime_connect, stream_progress, mpi_progress, "
                            "mpi_tag_ub, rma_eager_init or nccl_version");
    }
    end_of_statement();
  }

  RankSet rank_set(const std::string& what) {
    RankSet set;
    set.loc = loc_of(peek());
    if (at_name("all")) {
      advance();
      set.all = true;
      return set;
    }
    expect(TokKind::LBracket, what);
    skip_newlines();
    if (at(TokKind::RBracket)) {
      advance();
      return set;
    }
    while (true) {
      skip_newlines();
      int lo = rank_number("a rank");
      int hi = lo;
      if (at(TokKind::DotDot)) {
        advance();
        const Token& hi_tok = peek();
        hi = rank_number("the last rank of a range");
        if (hi < lo) fail_msg(hi_tok, "empty range " + std::to_string(lo) + ".." + std::to_string(hi));
      }
      set.ranges.emplace_back(lo, hi);
      skip_newlines();
      if (at(TokKind::Comma)) {
        advance();
        continue;
      }
      expect(TokKind::RBracket, "',' or ']'");
      return set;
    }
  }

  // `process P = [0, 1]`: one host thread drives these ranks (LANGUAGE_ADDITIONS.md).
  void process_decl() {
    advance();
    const Token& name_tok = peek();
    ProcessDecl decl;
    decl.name = expect_name("a process name");
    decl.loc = loc_of(name_tok);
    for (const auto& p : sc_.processes)
      if (p.name == decl.name)
        fail_msg(name_tok, "process '" + decl.name + "' declared twice (first at " + p.loc.str() + ")");
    expect(TokKind::Equals, "'='");
    needs_world(name_tok, "'process' before 'ranks N': declare the world size first");
    if (!at(TokKind::LBracket) && !at_name("all")) fail_at(peek(), "a rank set ('[...]' or 'all')");
    decl.ranks = rank_set("a rank set");
    for (int r : decl.ranks.expand(sc_.ranks))
      for (const auto& p : sc_.processes)
        if (p.ranks.contains(r))
          throw InputError(decl.ranks.loc, "rank " + std::to_string(r) + " is in process '" + p.name +
                                               "' already: a rank runs in one process");
    sc_.processes.push_back(std::move(decl));
    end_of_statement();
  }

  // `history COMM [device=N] [host=N] [connected]`: what COMM has behind it when the scenario starts (ast.h).
  void history_decl() {
    const Token& kw = advance();
    CommHistory h;
    h.loc = loc_of(kw);
    h.comm_loc = loc_of(peek());
    h.comm = expect_name("a communicator name");
    for (const auto& o : sc_.histories)
      if (o.comm == h.comm) fail_msg(kw, "a second 'history' of '" + h.comm + "' (first at " + o.loc.str() + ")");
    std::set<std::string> given;
    while (at(TokKind::Name)) {
      const Token& key = advance();
      if (!given.insert(key.text).second) fail_msg(key, "'" + key.text + "' given twice");
      if (key.text == "connected") {
        h.connected = true;
        continue;
      }
      if (key.text != "device" && key.text != "host")
        fail_at(key, "'device=N', 'host=N', 'connected' or end of statement");
      expect(TokKind::Equals, "'=' after '" + key.text + "'");
      const Token& n = peek();
      const int64_t v = integer(key.text == "device" ? "a count of device slots" : "a count of host slots");
      if (v > static_cast<int64_t>(UINT32_MAX / 2))
        fail_msg(n, "too many slots: at most " + std::to_string(UINT32_MAX / 2));
      (key.text == "device" ? h.device : h.host) = static_cast<uint32_t>(v);
    }
    end_of_statement();
    sc_.histories.push_back(std::move(h));
  }

  void comm_decl() {
    advance();
    const Token& name_tok = peek();
    CommDecl decl;
    decl.name = expect_name("a communicator name");
    decl.loc = loc_of(name_tok);
    if (decl.name == "null")
      fail_msg(name_tok, "'null' is MPI_COMM_NULL (a call on it is a usage error): name the comm otherwise");
    for (const auto& c : sc_.comms)
      if (c.name == decl.name)
        fail_msg(name_tok, "communicator '" + decl.name + "' declared twice (first at " + c.loc.str() + ")");
    expect(TokKind::Equals, "'='");
    needs_world(name_tok, "'comm' before 'ranks N': declare the world size first");
    std::set<int> seen;
    auto add_instance = [&](const RankSet& set) {
      std::vector<int> members = set.expand(sc_.ranks);
      for (int r : members)
        if (!seen.insert(r).second)
          throw InputError(set.loc, "rank " + std::to_string(r) + " appears in two instances of family '" + decl.name +
                                        "': instances must be disjoint");
      if (members.empty()) throw InputError(set.loc, "a communicator needs at least one rank");
      decl.instances.push_back(std::move(members));
    };
    if (at(TokKind::LBrace)) {
      advance();
      decl.family = true;
      skip_newlines();
      while (true) {
        skip_newlines();
        add_instance(rank_set("'[' starting an instance of the family"));
        skip_newlines();
        if (at(TokKind::Comma)) {
          advance();
          continue;
        }
        expect(TokKind::RBrace, "',' or '}'");
        break;
      }
    } else if (at_name("per_rank")) {
      advance();
      decl.per_rank = true;
      decl.uninit = true;
    } else {
      if (!at(TokKind::LBracket) && !at_name("all"))
        fail_at(peek(), "a rank set ('[...]' or 'all'), a family ('{[...], ...}') or 'per_rank'");
      add_instance(rank_set("a rank set"));
    }
    while (at(TokKind::Name)) {
      const Token& m = advance();
      if (m.text == "nonblocking" || m.text == "blocking") {
        if (decl.mode) fail_msg(m, "communicator mode given twice");
        decl.mode = m.text == "nonblocking" ? CommMode::Nonblocking : CommMode::Blocking;
      } else if (m.text == "uninit") {
        decl.uninit = true;
      } else if (m.text == "mpi" || m.text == "nccl") {
        if (decl.profile) fail_msg(m, "communicator library given twice");
        decl.profile = m.text == "mpi" ? Profile::Mpi : Profile::Nccl;
      } else if (m.text == "serialized") {
        decl.serialized = true;
      } else if (m.text == "launch_order_implicit") {
        decl.launch_order_implicit = true;
      } else {
        fail_at(m,
                "'blocking', 'nonblocking', 'uninit', 'mpi', 'nccl', 'serialized', 'launch_order_implicit' or end "
                "of statement");
      }
    }
    end_of_statement();
    sc_.comms.push_back(std::move(decl));
  }

  void rank_body() {
    const Token& kw = advance();
    RankBody body;
    body.loc = loc_of(kw);
    needs_world(kw, "'rank' before 'ranks N': declare the world size first");
    if (at(TokKind::Star)) {
      advance();
      body.star = true;
      for (const auto& b : sc_.bodies)
        if (b.star) fail_msg(kw, "a second 'rank *' body (first at " + b.loc.str() + ")");
    } else if (at(TokKind::LBracket)) {
      body.ranks = rank_set("a rank list").expand(sc_.ranks);
    } else {
      while (true) {
        int lo = rank_number("a rank, a range 'a..b' or '*'");
        int hi = lo;
        if (at(TokKind::DotDot)) {
          advance();
          const Token& hi_tok = peek();
          hi = rank_number("the last rank of a range");
          if (hi < lo) fail_msg(hi_tok, "empty range " + std::to_string(lo) + ".." + std::to_string(hi));
        }
        for (int r = lo; r <= hi; ++r) body.ranks.push_back(r);
        if (!at(TokKind::Comma)) break;
        advance();
      }
    }
    for (int r : body.ranks)
      for (const auto& b : sc_.bodies)
        if (!b.star && std::find(b.ranks.begin(), b.ranks.end(), r) != b.ranks.end())
          fail_msg(kw, "rank " + std::to_string(r) + " already has a body (at " + b.loc.str() +
                           "): a rank may be named by one 'rank' header only");
    std::sort(body.ranks.begin(), body.ranks.end());
    if (std::adjacent_find(body.ranks.begin(), body.ranks.end()) != body.ranks.end())
      fail_msg(kw, "a rank is named twice in this 'rank' header");
    body.body = block(0);
    end_of_statement();
    sc_.bodies.push_back(std::move(body));
  }

  // ---- statements
  std::vector<Stmt> block(int depth) {
    if (depth > kMaxNesting) fail_msg(peek(), "blocks nested too deeply (more than 200 levels)");
    skip_newlines();
    const SourceLoc open = loc_of(expect(TokKind::LBrace, "'{'"));
    std::vector<Stmt> out;
    while (true) {
      skip_separators();
      if (at(TokKind::RBrace)) {
        advance();
        return out;
      }
      if (at(TokKind::End) || (at(TokKind::Name) && is_top_level_word(peek().text))) {
        errors_.push_back(InputError(loc_of(peek()), "expected '}' closing the block, found " + describe(peek()),
                                     {DiagnosticNote{DiagnosticNote::Kind::Note, open, "the block opened here"}}));
        throw UnclosedBlock{};
      }
      try {
        out.push_back(statement(depth + 1));
      } catch (const InputError& e) {
        record(e);
        skip_rest_of_statement(false);
      }
    }
  }

  Stmt compound(StmtKind kind, const Token& kw, int depth) {
    Stmt s;
    s.kind = kind;
    s.loc = loc_of(kw);
    s.body = block(depth);
    end_of_statement();
    return s;
  }

  Stmt statement(int depth) {
    const Token& kw = peek();
    if (at(TokKind::LBrace)) {
      Stmt s;
      s.kind = StmtKind::Block;
      s.loc = loc_of(kw);
      s.body = block(depth);
      end_of_statement();
      return s;
    }
    if (!at(TokKind::Name)) fail_at(kw, "a statement");
    const std::string word = kw.text;
    if (word == "group") {
      advance();
      Stmt s = compound(StmtKind::Group, kw, depth);
      s.text = "group";
      return s;
    }
    if (word == "any_order") {
      advance();
      return compound(StmtKind::AnyOrder, kw, depth);
    }
    if (word == "maybe") {
      advance();
      return compound(StmtKind::Maybe, kw, depth);
    }
    if (word == "either") {
      advance();
      Stmt s;
      s.kind = StmtKind::Either;
      s.loc = loc_of(kw);
      s.alternatives.push_back(block(depth));
      while (true) {
        size_t save = pos_;
        skip_newlines();
        if (at_name("or")) {
          advance();
          s.alternatives.push_back(block(depth));
        } else {
          pos_ = save;
          break;
        }
      }
      if (s.alternatives.size() < 2) fail_at(peek(), "'or' and a second alternative after 'either { ... }'");
      end_of_statement();
      return s;
    }
    if (word == "repeat") {
      advance();
      const Token& n = peek();
      int64_t count = integer("a repeat count");
      if (count > 1000000) fail_msg(n, "repeat count too large (at most 1000000)");
      Stmt s = compound(StmtKind::Repeat, kw, depth);
      s.repeat_count = count;
      return s;
    }
    if (word == "thread") {
      advance();
      std::string name = expect_name("a thread name");
      Stmt s = compound(StmtKind::Thread, kw, depth);
      s.thread_name = name;
      return s;
    }
    if (word == "when") {
      advance();
      expect_word("rank");
      expect_word("in");
      RankSet set = rank_set("a rank set ('[...]' or 'all')");
      Stmt s = compound(StmtKind::When, kw, depth);
      s.when_ranks = set;
      return s;
    }
    return operation();
  }

  Stmt operation() {
    const size_t first = pos_;
    const Token& kw = advance();
    Stmt s;
    s.kind = StmtKind::Op;
    s.loc = loc_of(kw);
    auto comm_name = [&]() {
      s.comm_loc = loc_of(peek());
      s.comm = expect_name("a communicator name");
    };
    auto buffer_name = [&](std::string& into) { into = expect_name("a buffer name"); };
    auto peer_rank = [&]() {
      const Token& p = peek();
      int64_t peer = integer("the peer's world rank");
      check_rank(p, peer);
      s.peer = static_cast<int>(peer);
      s.peer_loc = loc_of(p);
    };

    if (kw.text == "sync") {
      const Token& t = peek();
      std::string target = expect_name("a stream name or 'device'");
      if (target == "device") {
        s.op = OpKind::SyncDevice;
      } else {
        s.op = OpKind::SyncStream;
        s.args.stream = target;
      }
      (void)t;
    } else {
      auto kind = op_from_keyword(kw.text);
      if (!kind) unknown_statement(kw);
      s.op = *kind;
      switch (op_form(s.op)) {
        case OpForm::BufferSize:
          buffer_name(s.buffer);
          if (at(TokKind::Integer) || at(TokKind::Size)) s.size = advance().value;
          break;
        case OpForm::Buffer:
          buffer_name(s.buffer);
          break;
        case OpForm::Window:
          comm_name();
          buffer_name(s.buffer);
          if (at_name("symmetric")) {
            advance();
            s.flag = RegFlag::Symmetric;
          } else if (at_name("default")) {
            advance();
            s.flag = RegFlag::Default;
          } else if (at_name("gin")) {
            advance();
            s.flag = RegFlag::GinOnly;
          }
          break;
        case OpForm::CommBuffer:
          comm_name();
          buffer_name(s.buffer);
          break;
        case OpForm::Comm:
          comm_name();
          if (s.op == OpKind::Init && (at(TokKind::LBracket) || at_name("all")))
            s.members = rank_set("the member list this rank passes");
          break;
        case OpForm::Split:
          // `grow none -> CHILD`: a new rank, which has no parent (ncclCommGrow with comm = NULL).
          if (s.op == OpKind::Grow && at_name("none")) {
            s.comm_loc = loc_of(peek());
            advance();
          } else {
            comm_name();
          }
          expect(TokKind::Arrow, "'->'");
          s.child_loc = loc_of(peek());
          if (s.op == OpKind::Split) {
            s.child = expect_name("the child communicator or 'none'");
            if (s.child == "none") s.child.clear();
          } else {
            const Token& child = peek();
            s.child = expect_name("the communicator it creates");
            if (s.child == "none")
              fail_msg(child, std::string(op_name(s.op)) + " creates a communicator: 'none' is only for split");
          }
          break;
        case OpForm::Barrier:
          comm_name();
          call_args(s, true);
          break;
        case OpForm::PointToPoint:
          comm_name();
          if ((s.op == OpKind::Recv || s.op == OpKind::Probe) && at_name("any")) {
            // MPI_ANY_SOURCE: the checker chooses which sender it matches (LANGUAGE.md extension, mpi profile).
            s.peer_loc = loc_of(peek());
            advance();
            s.any_source = true;
          } else {
            peer_rank();
          }
          if (s.op != OpKind::Probe) buffer_name(s.buffer);  // a probe receives nothing
          call_args(s, false);
          break;
        case OpForm::Collective:
          comm_name();
          buffer_name(s.buffer);
          if (at(TokKind::Arrow)) {
            advance();
            buffer_name(s.buffer2);
          }
          call_args(s, true);
          break;
        case OpForm::PutSignal:
        case OpForm::Signal: {
          comm_name();
          peer_rank();
          if (op_form(s.op) == OpForm::PutSignal) {
            buffer_name(s.buffer);
            expect(TokKind::Arrow, "'->' and the peer's window (a buffer it registered on the comm)");
            buffer_name(s.buffer2);
          }
          call_args(s, false);
          break;
        }
        case OpForm::Key:
        case OpForm::KeyRanks:
          if (s.op == OpKind::MpiError && at(TokKind::Name)) {  // `mpi_error RULE "TEXT"`
            const Token& rule = advance();
            s.mpi_rule = mpi_rule_named(rule.text);
            if (!s.mpi_rule) fail_msg(rule, "unknown MPI rule '" + rule.text + "': expected " + mpi_rule_names());
          }
          s.key_loc = loc_of(peek());
          if (at(TokKind::String))
            s.key = advance().text;
          else
            s.key = expect_name("a store key (a name or a \"string\")");
          if (op_form(s.op) == OpForm::KeyRanks && (at(TokKind::LBracket) || at_name("all")))
            s.members = rank_set("the ranks the barrier waits for");
          break;
        case OpForm::WindowTarget:  // `put COMM PEER WIN [ARGS]`: the target's world rank, then the window
          comm_name();
          peer_rank();
          buffer_name(s.buffer);
          call_args(s, false);
          break;
        case OpForm::WindowSync:  // `win_fence COMM WIN [mode=nosucceed]`
          comm_name();
          buffer_name(s.buffer);
          call_args(s, false);
          break;
        case OpForm::Bare:
        case OpForm::SyncStream:
        case OpForm::SyncDevice:  // `sync` is read above
          break;
      }
    }
    s.text = text_from(first);
    end_of_statement();
    return s;
  }

  [[noreturn]] void unknown_statement(const Token& kw) const {
    static const char* const kCompound[] = {"group", "any_order", "either", "maybe", "repeat", "thread", "when"};
    std::vector<std::string> words;
    for (const OpInfo& op : kOperations) words.emplace_back(op.keyword);
    words.insert(words.end(), std::begin(kCompound), std::end(kCompound));
    if (kw.kind == TokKind::Name)
      if (auto guess = closest_spelling(kw.text, words))
        throw InputError(loc_of(kw), "expected a statement, found " + describe(kw),
                         {DiagnosticNote{DiagnosticNote::Kind::Help, {}, "did you mean '" + *guess + "'?"}});
    fail_at(kw, "a statement (" + op_keyword_list() + ", group, any_order, either, maybe, repeat, thread, when)");
  }

  void call_args(Stmt& s, bool collective) {
    std::set<std::string> given;
    while (at(TokKind::Name)) {
      const Token& key = advance();
      if (!given.insert(key.text).second) fail_msg(key, "argument '" + key.text + "' given twice");
      if (key.text == "on") {
        s.args.stream = expect_name("a stream name");
        continue;
      }
      expect(TokKind::Equals, "'=' after '" + key.text + "'");
      if (key.text == "count") {
        s.args.count = integer("an element count");
      } else if (key.text == "root") {
        const Token& r = peek();
        int64_t root = integer("the root's world rank");
        check_rank(r, root);
        s.args.root = static_cast<int>(root);
        s.args.root_loc = loc_of(r);
      } else if (key.text == "dtype") {
        s.args.dtype = expect_name("a datatype name");
      } else if (key.text == "op") {
        s.args.redop = expect_name("a reduction name");
      } else if (key.text == "call" && (collective || is_rma_transfer(s.op))) {
        s.args.mpi_call = expect_name("the MPI function (Allreduce, Iallreduce, ...)");
      } else if (key.text == "config" && collective) {
        s.args.config_loc = loc_of(peek());
        s.args.coll_config = expect_name("the name of a per-collective configuration (ncclCollConfig_t)");
      } else if (key.text == "tag" && op_form(s.op) == OpForm::PointToPoint) {
        s.args.tag_loc = loc_of(peek());
        const bool receives = s.op == OpKind::Recv || s.op == OpKind::Probe;
        if (receives && at_name("any")) {
          advance();
          s.args.tag = kAnyTag;  // MPI_ANY_TAG
        } else {
          // A negative tag is the program's (erroneous) argument, not bad input: the semantics reports it
          // (resolve.cpp, MpiRule::SendTagNegative / ReceiveTagInvalid).
          const bool negative = at(TokKind::Minus);
          if (negative) advance();
          const int64_t tag = integer(receives ? "a tag (a number, or 'any')" : "a tag (a number)");
          s.args.tag = negative ? -tag : tag;
        }
      } else if (key.text == "mode" && s.op == OpKind::Send) {
        const Token& m = peek();
        const std::string mode = expect_name("a send mode (buffered)");
        if (mode != "buffered") fail_msg(m, "unknown send mode '" + mode + "': expected buffered (MPI_Bsend)");
        s.args.buffered = true;
      } else if (key.text == "mode" && win_modes(s.op) != nullptr) {
        const Token& m = peek();
        const std::string mode = expect_name(std::string("a mode (") + win_modes(s.op) + ")");
        const std::optional<WinMode> wm = win_mode_from_name(mode);
        const bool exclusive = s.op == OpKind::WinLock && mode == "exclusive";  // the default, said
        if (!exclusive && (!wm || !takes_win_mode(s.op, *wm)))
          fail_msg(m, "unknown mode '" + mode + "' of " + std::string(op_name(s.op)) + ": expected " + win_modes(s.op));
        s.args.win_mode = wm.value_or(WinMode::Plain);
      } else {
        const bool p2p = op_form(s.op) == OpForm::PointToPoint;
        fail_msg(key, "unknown argument '" + key.text + "': expected count=N, root=R, dtype=NAME, op=NAME" +
                          (collective ? ", call=NAME, config=NAME" : "") + (p2p ? ", tag=N" : "") +
                          (s.op == OpKind::Send ? ", mode=buffered" : "") +
                          (win_modes(s.op) != nullptr ? std::string(", mode=") + win_modes(s.op) : std::string()) +
                          (is_rma_transfer(s.op) ? ", call=NAME" : "") + " or on STREAM");
      }
    }
  }

  // The `mode=` values of an MPI window call, for messages; nullptr when it takes none.
  static const char* win_modes(OpKind op) {
    switch (op) {
      case OpKind::WinLock:
        return "exclusive or shared";
      case OpKind::WinFlush:
      case OpKind::WinFlushAll:
        return "local";
      case OpKind::WinFence:
        return "nosucceed";
      default:
        return nullptr;
    }
  }

  std::shared_ptr<const SourceFile> file_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  Scenario sc_;
  std::vector<InputError> errors_;
};

}  // namespace

Scenario parse_scenario(const std::shared_ptr<const SourceFile>& file) { return Parser(file).run(); }

Scenario parse_file(const std::string& path) { return parse_scenario(read_source_file(path)); }

Scenario parse_string(const std::string& text, const std::string& file_name) {
  return parse_scenario(std::make_shared<SourceFile>(file_name, text));
}

}  // namespace collmc::model
