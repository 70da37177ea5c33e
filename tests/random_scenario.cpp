#include "random_scenario.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace collmc::testing {

namespace {

// One agreed protocol (a global sequence of calls over the comms), projected onto every rank, then
// perturbed per rank (swaps, skips, choices, threads, hazards). Unperturbed programs are safe, so the
// cases mix safe and bad outcomes.
class Generator {
 public:
  Generator(std::mt19937& rng, const RandomScenarioOptions& o) : rng_(rng), o_(o) {}

  std::string run() {
    ranks_ = pick(o_.min_ranks, o_.max_ranks);
    std::ostringstream out;
    out << "ranks " << ranks_ << "\n";
    mpi_ = o_.knobs && chance(0.15);
    if (mpi_) out << "set profile = mpi\n";
    // Issue 23's MPI progress: rooted collectives whose early ranks leave, and hand-offs outside MPI.
    if (mpi_ && chance(0.6)) out << "set mpi_progress = " << (chance(0.5) ? "weak" : "strong") << "\n";
    if (o_.knobs && chance(0.25)) out << "set runtime_connect = off\n";
    if (o_.knobs && chance(o_.open_orders ? 0.6 : 0.15)) out << "set comm_mode = nonblocking\n";
    if (o_.knobs && chance(0.15)) out << "set stream_progress = serialized\n";
    releases_ = o_.nccl_releases && !mpi_;
    if (releases_) {
      // Issue 36: 2.31.0a16 (the destroy and finalize barrier, the RMA setup at the first registration,
      // per-collective config, launchOrderImplicit) and 2.32.6 (GIN-only windows) beside the older ones.
      const int v = o_.nccl_231_only ? pick(2, 3) : pick(0, 6);
      version_ = v <= 1 ? 23007 : v == 2 ? 23100 : v == 3 ? 23206 : v == 4 ? 22907 : 22304;
      out << "set nccl_version = "
          << (version_ == 23007   ? "2.30.7"
              : version_ == 23100 ? "2.31.0a16"
              : version_ == 23206 ? "2.32.6"
              : version_ == 22907 ? "2.29.7"
                                  : "2.23.4")
          << "\n";
      if (version_ >= 23100 && chance(0.3)) out << "set rma_eager_init = on\n";
    }
    const int ncomms = pick(1, o_.max_comms);
    for (int c = 0; c < ncomms; ++c) {
      std::vector<int> members;
      for (int r = 0; r < ranks_; ++r)
        if (chance(0.75)) members.push_back(r);
      if (members.size() < 2) members = {0, 1};
      comms_.push_back(members);
      out << "comm C" << c << " = [";
      for (size_t i = 0; i < members.size(); ++i) out << (i ? ", " : "") << members[i];
      out << "]";
      // Issue 36: a comm with launchOrderImplicit (2.31+), a framework-level group shared by threads. Only in
      // the release families: the others keep the sequence of cases their compared minimums were set on.
      if (releases_ && version_ >= 23100 && chance(0.25)) out << " launch_order_implicit";
      if (releases_ && o_.threads && chance(0.2)) out << " serialized";
      out << "\n";
    }
    // Issue 23's children of C0: a shrink to all but its last member, a grow by a rank outside it.
    const std::vector<int>& c0 = comms_[0];
    if (releases_ && chance(0.3)) {
      shrunk_.assign(c0.begin(), c0.end() - 1);
      out << "comm K = [" << list(shrunk_) << "] uninit\n";
    }
    if (releases_ && chance(0.3) && static_cast<int>(c0.size()) < ranks_) {
      grown_ = c0;
      for (int r = 0; r < ranks_; ++r)
        if (!std::count(c0.begin(), c0.end(), r)) {
          grown_.push_back(r);
          break;
        }
      std::sort(grown_.begin(), grown_.end());
      out << "comm G = [" << list(grown_) << "] uninit\n";
    }
    // The agreed protocol.
    struct Call {
      int comm;
      std::string text;
    };
    std::vector<Call> protocol;
    const int n = pick(1, o_.max_statements);
    if (!shrunk_.empty()) protocol.push_back({0, "@shrink"});
    if (!grown_.empty()) protocol.push_back({0, "@grow"});
    for (int i = 0; i < n; ++i) {
      int c = pick(0, ncomms - 1);
      std::string name = "C" + std::to_string(c);
      int k = pick(0, mpi_ ? 5 : (releases_ ? 8 : 6));
      if (mpi_ && k >= 4) k = k == 4 ? 9 : 10;
      std::string text;
      switch (k) {
        case 0:
        case 1:
          text = "register " + name + " " + (chance(0.5) ? "b0" : "b1") +
                 (releases_ && version_ >= 23206 && chance(0.3) ? " gin" : "");
          break;
        case 2:
          text = "all_reduce " + name + " " + buffer() +
                 (releases_ && version_ >= 23100 && chance(0.3) ? " config=cfg1" : "");
          break;
        case 3:
          text = "barrier " + name;
          break;
        case 4:
          text = "all_reduce " + name + " " + buffer() + " on " + (o_.open_orders && chance(0.5) ? "s2" : "side");
          break;
        case 5:
          text = "broadcast " + name + " " + buffer() + " root=" + std::to_string(comms_[static_cast<size_t>(c)][0]);
          break;
        case 6:
          text = "all_gather " + name + " b1";
          break;
        case 7:
          text = "@ring";  // each member signals the next and waits for the previous
          break;
        case 9: {  // mpi: a rooted collective, rooted at any member
          const auto& m = comms_[static_cast<size_t>(c)];
          text = std::string(chance(0.5) ? "broadcast " : "reduce ") + name + " " + buffer() +
                 " root=" + std::to_string(m[static_cast<size_t>(pick(0, static_cast<int>(m.size()) - 1))]);
          break;
        }
        case 10:
          text = "@handoff" + std::to_string(i);  // the first member sets a host key the others wait for
          break;
        default:
          text = "@put";  // the first member puts b0 into the second's b0
          break;
      }
      protocol.push_back({c, text});
    }
    if (releases_ && chance(o_.nccl_231_only ? 0.7 : 0.4)) protocol.push_back({pick(0, ncomms - 1), "@teardown"});
    for (int r = 0; r < ranks_; ++r) {
      std::vector<std::string> body;
      for (const auto& call : protocol) {
        const auto& members = comms_[static_cast<size_t>(call.comm)];
        if (call.text == "@grow") {
          if (std::count(grown_.begin(), grown_.end(), r)) body.push_back(grow_text(r));
          continue;
        }
        if (!std::count(members.begin(), members.end(), r)) continue;
        if (call.text[0] != '@') {
          // Issue 36: a rank that passes another per-collective config than its peers.
          if (const size_t at = call.text.find("config=cfg1"); at != std::string::npos && chance(0.1))
            body.push_back(call.text.substr(0, at) + "config=cfg2");
          else
            body.push_back(call.text);
        } else if (std::string t = expand(call.text, call.comm, r); !t.empty()) {
          body.push_back(t);
        }
      }
      perturb(body);
      if (o_.open_orders && chance(0.6))
        out << "rank " << r << " {\n  any_order {\n    alloc b0\n    alloc b1\n  }\n";
      else if (o_.commuting_choices && chance(0.5))
        out << "rank " << r << " {\n  any_order {\n    alloc b0\n    alloc b1\n    alloc scratch\n  }\n";
      else if (o_.commuting_choices)
        out << "rank " << r << " {\n  alloc b0\n  alloc b1\n  alloc scratch\n";
      else
        out << "rank " << r << " {\n  alloc b0\n  alloc b1\n";
      if (o_.commuting_choices && !body.empty() && chance(0.4)) {
        const size_t i = static_cast<size_t>(pick(0, static_cast<int>(body.size()) - 1));
        // A thread stands directly in a rank body, never inside an any_order.
        if (body[i].rfind("thread", 0) != 0) body[i] = "any_order {\n" + indent(body[i], 1) + "  free scratch\n}";
      }
      for (const auto& s : body) out << indent(s, 1);
      if (chance(0.6)) out << "  sync " << (chance(0.8) ? "main" : "device") << "\n";
      if (o_.hazards && chance(0.2)) out << "  " << hazard() << "\n";
      out << "}\n";
    }
    return out.str();
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::string buffer() { return chance(0.2) ? "plain" : (chance(0.5) ? "b0" : "b1"); }
  std::string hazard() {
    switch (pick(0, 4)) {
      case 0:
        return "deregister C0 b0";
      case 1:
        return "free b1";
      case 2:
        return "cuda_free plain";
      case 3:
        return "sync main\n  deregister C0 b0";
      default:
        return "register C0 plain";
    }
  }

  static std::string indent(const std::string& block, int level) {
    std::string pad(static_cast<size_t>(level) * 2, ' ');
    std::string out;
    std::istringstream in(block);
    std::string line;
    while (std::getline(in, line)) out += pad + line + "\n";
    return out;
  }

  void perturb(std::vector<std::string>& body) {
    if (body.empty()) return;
    if (chance(0.15) && body.size() >= 2) {  // a cross order
      size_t i = static_cast<size_t>(pick(0, static_cast<int>(body.size()) - 2));
      std::swap(body[i], body[i + 1]);
    }
    if (chance(0.07)) body.erase(body.begin() + pick(0, static_cast<int>(body.size()) - 1));  // a skipped call
    if (body.empty()) return;
    if (o_.open_orders) {
      open_orders(body);
      return;
    }
    if (o_.choices && chance(0.3)) {
      size_t i = static_cast<size_t>(pick(0, static_cast<int>(body.size()) - 1));
      size_t j = std::min(body.size(), i + static_cast<size_t>(pick(1, 2)));
      std::string inner;
      for (size_t k = i; k < j; ++k) inner += body[k] + "\n";
      std::string wrapped;
      switch (pick(0, 3)) {
        case 0:
          wrapped = "any_order {\n" + indent(inner, 1) + "}";
          break;
        case 1:
          wrapped = "maybe {\n" + indent(inner, 1) + "}";
          break;
        case 2:
          wrapped = "either {\n" + indent(inner, 1) + "} or {\n" + indent(inner, 1) + "  sync main\n}";
          break;
        default:
          // barrier, destroy and finalize wait for the device: they cannot stand in a group.
          wrapped = (mpi_ || inner.find("barrier") != std::string::npos || inner.find("destroy") != std::string::npos ||
                             inner.find("finalize") != std::string::npos
                         ? "any_order {\n"
                         : "group {\n") +
                    indent(inner, 1) + "}";
          break;
      }
      body.erase(body.begin() + static_cast<long>(i), body.begin() + static_cast<long>(j));
      body.insert(body.begin() + static_cast<long>(i), wrapped);
    }
    if (o_.threads && chance(0.12) && body.size() >= 2) {  // the last call moves to a thread
      std::string last = body.back();
      body.pop_back();
      body.insert(body.begin(), "thread t {\n" + indent(last, 1) + "}");
    }
  }

  // Runs of 2-4 consecutive calls become any_orders (a child sometimes a nested any_order or a block of
  // two calls); a child may be an allocation of a buffer a sibling uses, or a free nothing uses.
  void open_orders(std::vector<std::string>& body) {
    std::vector<std::string> out;
    size_t i = 0;
    while (i < body.size()) {
      if (!chance(0.7)) {
        out.push_back(body[i++]);
        continue;
      }
      const size_t j = std::min(body.size(), i + static_cast<size_t>(pick(2, 3)));
      std::vector<std::string> children(body.begin() + static_cast<long>(i), body.begin() + static_cast<long>(j));
      i = j;
      if (chance(0.25)) children.push_back(chance(0.5) ? "alloc b" + std::to_string(pick(0, 1)) : "alloc extra");
      if (chance(0.1)) children.push_back("free extra");
      if (children.size() >= 3 && chance(0.2)) {  // the last two as a nested any_order or a block
        const std::string a = children[children.size() - 2];
        const std::string b = children.back();
        children.resize(children.size() - 2);
        children.push_back((chance(0.5) ? "any_order {\n" : "{\n") + indent(a, 1) + indent(b, 1) + "}");
      }
      std::string inner;
      for (const auto& c : children) inner += c + "\n";
      out.push_back("any_order {\n" + indent(inner, 1) + "}");
    }
    body = std::move(out);
    if (o_.threads && chance(0.1) && body.size() >= 2) {
      std::string last = body.back();
      body.pop_back();
      body.insert(body.begin(), "thread t {\n" + indent(last, 1) + "}");
    }
  }

  static std::string list(const std::vector<int>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
    return s;
  }

  // Rank r's statements for an issue-23 protocol entry on comm `c` (r is a member of it).
  std::string expand(const std::string& what, int c, int r) {
    const auto& m = comms_[static_cast<size_t>(c)];
    const std::string name = "C" + std::to_string(c);
    const size_t i = static_cast<size_t>(std::find(m.begin(), m.end(), r) - m.begin());
    if (what == "@ring")
      return "signal " + name + " " + std::to_string(m[(i + 1) % m.size()]) + "\nwait_signal " + name + " " +
             std::to_string(m[(i + m.size() - 1) % m.size()]);
    if (what.rfind("@handoff", 0) == 0) {  // outside MPI: a host store key, one per protocol entry
      const std::string key = "k" + what.substr(8);
      return i == 0 ? "store_set " + key : "store_wait " + key;
    }
    if (what == "@put") {
      if (i == 0) return "put_signal " + name + " " + std::to_string(m[1]) + " b0 -> b0";
      return i == 1 ? "wait_signal " + name + " " + std::to_string(m[0]) : "";
    }
    if (what == "@shrink") return std::count(shrunk_.begin(), shrunk_.end(), r) ? "shrink " + name + " -> K" : "";
    // @teardown (issue 36: with finalize, an intra-node collective from 2.31)
    switch (pick(0, 5)) {
      case 0:
      case 1:
        return "destroy " + name;
      case 2:
        return "abort " + name;
      case 3:
        return "finalize " + name + "\ndestroy " + name;
      case 4:
        return "finalize " + name;
      default:
        return "revoke " + name + "\ndestroy " + name;
    }
  }

  std::string grow_text(int r) {
    const auto& c0 = comms_[0];
    if (!std::count(c0.begin(), c0.end(), r)) return "grow none -> G";
    return (r == c0.front() && chance(0.85) ? "grow_id C0\n" : "") + std::string("grow C0 -> G");
  }

  std::mt19937& rng_;
  RandomScenarioOptions o_;
  bool releases_ = false;
  uint32_t version_ = 0;
  std::vector<int> shrunk_;
  std::vector<int> grown_;
  int ranks_ = 2;
  bool mpi_ = false;
  std::vector<std::vector<int>> comms_;
};

}  // namespace

std::string random_scenario(std::mt19937& rng, const RandomScenarioOptions& options) {
  return Generator(rng, options).run();
}

}  // namespace collmc::testing
