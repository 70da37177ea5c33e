// Byte encoding of states: LEB128 varints, every vector prefixed by its length. A state's encoding
// is its ranks', comms' and store keys' encodings in sequence (each list prefixed by its length), so
// the depth-first search's visited set can encode the parts one at a time (state_codec.h).
#include "state_codec.h"

#include <limits>
#include <stdexcept>
#include <type_traits>

namespace collmc::checker {

namespace {

// Appends to `out` through a raw pointer into room made ahead (a varint is at most 10 bytes), not a
// push_back per byte: encoding is on the depth-first search's hot path. `out` holds exactly the bytes
// written once the Writer is gone.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {
    // Room for a few fields, not the whole capacity: resize writes zeros over every byte it adds, and a
    // buffer that once held a large part (a comm of thousands of members) keeps its capacity.
    const size_t used = out_.size();
    out_.resize(used + 64);
    p_ = out_.data() + used;
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() { out_.resize(static_cast<size_t>(p_ - out_.data())); }
  void u(uint64_t v) {
    // One load and one store of the position per call: the compiler must assume a char store may
    // change any member, so the loop works on a local copy.
    char* p = p_;
    if (out_.data() + out_.size() - p < 10) p = grow(p);
    while (v >= 0x80) {
      *p++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
    p_ = p;
  }
  void i(int64_t v) { u(static_cast<uint64_t>((v << 1) ^ (v >> 63))); }
  // A rank, comm or buffer id (int32_t, as the model's): its 32-bit pattern, so that ids >= 0 take the
  // bytes an unsigned field of their value takes, and any other value still decodes to itself.
  void id(int32_t v) { u(static_cast<uint32_t>(v)); }

 private:
  char* grow(char* p) {
    const auto used = static_cast<size_t>(p - out_.data());
    out_.resize(2 * out_.size());  // amortized: at most twice the bytes written
    return out_.data() + used;
  }
  std::string& out_;
  char* p_;  // the next byte to write; out_ is padded past it until the destructor trims it
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  uint64_t u() {
    uint64_t v = 0;
    int shift = 0;
    while (true) {
      if (pos_ >= in_.size() || shift > 63) throw std::runtime_error("corrupt state encoding");
      auto b = static_cast<uint8_t>(in_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7;
    }
  }
  int64_t i() {
    uint64_t z = u();
    return static_cast<int64_t>(z >> 1) ^ -static_cast<int64_t>(z & 1);
  }
  // Reads a field into `x` at its own width, so that a field widened in state.h is read as wide
  // (the encoding is the same varint whatever the width); a value too large for it is corruption.
  // A signed field (an id: Writer::id) is read as its unsigned pattern.
  template <class T>
  void get(T& x) {
    const uint64_t v = u();
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      if (v > std::numeric_limits<U>::max()) throw std::runtime_error("corrupt state encoding: a field out of range");
      x = static_cast<T>(static_cast<U>(v));
    } else {
      x = static_cast<T>(v);
    }
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

template <class T, class F>
void write_vec(Writer& w, const T& v, F&& f) {
  w.u(v.size());
  for (const auto& x : v) f(x);
}

template <class T, class F>
void read_vec(Reader& r, T& v, F&& f) {
  uint64_t n = r.u();
  v.resize(n);
  for (auto& x : v) f(x);
}

// A thread's control position (control.h): its node and the done-sets of the any_orders it is in.
void write_position(Writer& w, const ControlPosition& p) {
  w.i(p.node);
  write_vec(w, p.done, [&](uint64_t d) { w.u(d); });
}

void read_position(Reader& r, ControlPosition& p) {
  p.node = static_cast<int32_t>(r.i());
  read_vec(r, p.done, [&](uint64_t& d) { d = r.u(); });
}

// Where a thread is: its control position and the waits it blocks on.
void write_thread(Writer& w, const ThreadState& t) {
  write_position(w, t);
  auto wait = [&](const Wait& wt) {
    w.u(static_cast<uint64_t>(wt.kind));
    w.u(wt.dir);
    w.id(wt.comm);
    w.id(wt.peer);
    w.u(wt.slot);
    w.u(wt.tag);
    w.u(wt.call);
    w.u(wt.count);
  };
  write_vec(w, t.waits, wait);
  write_vec(w, t.sent, wait);  // buffered messages not yet received (issue 32)
}

void write_rank(Writer& w, const RankState& rk) {
  write_vec(w, rk.threads, [&](const ThreadState& t) { write_thread(w, t); });
  write_vec(w, rk.streams, [&](const std::vector<StreamEntry>& st) {
    write_vec(w, st, [&](const StreamEntry& e) {
      w.u(e.seq);
      write_vec(w, e.parts, [&](const DevicePart& p) {
        w.u(p.call);
        w.id(p.comm);
        w.u(static_cast<uint64_t>(p.kind));
        w.u(p.symmetric);
        w.u(p.done);
        w.id(p.peer);
        w.u(p.slot);
        w.u(p.count);
      });
    });
  });
  write_vec(w, rk.members, [&](const MemberState& m) {
    w.u(m.host_issued);
    w.u(m.dev_issued);
    w.u(m.flags);
    w.u(m.children);
    w.u(m.grows);
  });
  write_vec(w, rk.windows, [&](const WindowState& x) {
    w.id(x.comm);
    w.id(x.buffer);
    w.u(x.flag);
    w.u(x.count);
    w.u(x.epochs);
    write_vec(w, x.locks, [&](int32_t t) { w.id(t); });
  });
  write_vec(w, rk.p2p, [&](const P2pState& x) {
    w.id(x.comm);
    w.id(x.peer);
    w.u(x.tag);
    w.u(x.sends);
    w.u(x.recvs);
    w.u(x.connect_reached);
    w.u(x.signals);
    w.u(x.signals_taken);
  });
  write_vec(w, rk.buffers, [&](const BufferState& b) {
    w.u(b.alloc_call);
    w.u(b.freed);
  });
  w.u(rk.next_seq);
  w.u(rk.process_turn);
  w.u(rk.process_grouped);
  write_vec(w, rk.left_early, [&](const std::pair<int32_t, uint32_t>& e) {
    w.id(e.first);
    w.u(e.second);
  });
}

void write_comm(Writer& w, const CommState& c) {
  auto slot = [&](const OpenSlot& o) {
    w.u(o.call);
    w.u(o.arrived);
    w.u(o.count);
    w.u(o.symmetric);
    write_vec(w, o.split_children, [&](const std::pair<int32_t, int32_t>& ch) {
      w.id(ch.first);
      w.i(ch.second);
    });
  };
  w.u(c.connected);
  w.u(c.torn_down);
  w.u(c.grow_ids);
  w.u(c.host_base);
  write_vec(w, c.host_open, slot);
  w.u(c.dev_base);
  write_vec(w, c.dev_open, slot);
}

}  // namespace

void encode_rank(const RankState& rank, std::string& out) {
  Writer w(out);
  write_rank(w, rank);
}

void encode_comm(const CommState& comm, std::string& out) {
  Writer w(out);
  write_comm(w, comm);
}

void encode_store_key(uint32_t value, std::string& out) {
  Writer w(out);
  w.u(value);
}

std::string encode_state(const State& s) {
  std::string out;
  {
    Writer w(out);
    write_vec(w, s.ranks, [&](const RankState& rk) { write_rank(w, rk); });
    write_vec(w, s.comms, [&](const CommState& c) { write_comm(w, c); });
    write_vec(w, s.store, [&](uint32_t v) { w.u(v); });
  }
  return out;
}

State decode_state(std::string_view bytes) {
  Reader r(bytes);
  State s;
  read_vec(r, s.ranks, [&](RankState& rk) {
    read_vec(r, rk.threads, [&](ThreadState& t) {
      read_position(r, t);
      auto wait = [&](Wait& wt) {
        r.get(wt.kind);
        r.get(wt.dir);
        r.get(wt.comm);
        r.get(wt.peer);
        r.get(wt.slot);
        r.get(wt.tag);
        r.get(wt.call);
        wt.count = r.u();
      };
      read_vec(r, t.waits, wait);
      read_vec(r, t.sent, wait);
    });
    read_vec(r, rk.streams, [&](std::vector<StreamEntry>& st) {
      read_vec(r, st, [&](StreamEntry& e) {
        r.get(e.seq);
        read_vec(r, e.parts, [&](DevicePart& p) {
          r.get(p.call);
          r.get(p.comm);
          r.get(p.kind);
          r.get(p.symmetric);
          r.get(p.done);
          r.get(p.peer);
          r.get(p.slot);
          p.count = r.u();
        });
      });
    });
    read_vec(r, rk.members, [&](MemberState& m) {
      r.get(m.host_issued);
      r.get(m.dev_issued);
      r.get(m.flags);
      r.get(m.children);
      r.get(m.grows);
    });
    read_vec(r, rk.windows, [&](WindowState& x) {
      r.get(x.comm);
      r.get(x.buffer);
      r.get(x.flag);
      r.get(x.count);
      r.get(x.epochs);
      read_vec(r, x.locks, [&](int32_t& t) { r.get(t); });
    });
    read_vec(r, rk.p2p, [&](P2pState& x) {
      r.get(x.comm);
      r.get(x.peer);
      r.get(x.tag);
      r.get(x.sends);
      r.get(x.recvs);
      r.get(x.connect_reached);
      r.get(x.signals);
      r.get(x.signals_taken);
    });
    read_vec(r, rk.buffers, [&](BufferState& b) {
      r.get(b.alloc_call);
      r.get(b.freed);
    });
    r.get(rk.next_seq);
    r.get(rk.process_turn);
    r.get(rk.process_grouped);
    read_vec(r, rk.left_early, [&](std::pair<int32_t, uint32_t>& e) {
      r.get(e.first);
      r.get(e.second);
    });
  });
  auto slot = [&](OpenSlot& o) {
    r.get(o.call);
    r.get(o.arrived);
    o.count = r.u();
    r.get(o.symmetric);
    read_vec(r, o.split_children, [&](std::pair<int32_t, int32_t>& c) {
      r.get(c.first);
      c.second = static_cast<int32_t>(r.i());
    });
  };
  read_vec(r, s.comms, [&](CommState& c) {
    r.get(c.connected);
    r.get(c.torn_down);
    r.get(c.grow_ids);
    r.get(c.host_base);
    read_vec(r, c.host_open, slot);
    r.get(c.dev_base);
    read_vec(r, c.dev_open, slot);
  });
  read_vec(r, s.store, [&](uint32_t& v) { r.get(v); });
  if (!r.done()) throw std::runtime_error("corrupt state encoding: trailing bytes");
  return s;
}

}  // namespace collmc::checker
