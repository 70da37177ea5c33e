#include "store.h"

#include "rank_body.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace collmc::replay {

namespace {

using Clock = std::chrono::steady_clock;

enum FrameType : uint32_t {
  kHello = 1,     // rank -> server: token, rank
  kPlan = 2,      // server -> rank: the plan (plan_to_json)
  kSlot = 3,      // rank -> server: SlotImage
  kTiming = 4,    // rank -> server: index, call, seconds
  kProgress = 5,  // rank -> server: the rank's own progress count
  kTurn = 6,      // both ways: a turn some rank reached
  kId = 7,        // both ways: a communicator's unique id
  kLibrary = 8,   // rank -> server: the library the rank found
  kAbort = 9,     // server -> rank
  kRelease = 10,  // server -> rank
};
constexpr uint32_t kMaxFrame = 64u << 20;
constexpr size_t kTokenChars = 32;

// A rank slot's scalars and texts, as one value to compare and send (the timings go one by one).
struct SlotImage {
  int32_t call[kMaxThreads];
  int32_t phase[kMaxThreads];
  int32_t status, pid, attached;
  double setup_seconds;
  char error[sizeof(RankSlot::error)];
  char note[sizeof(RankSlot::note)];
};

SlotImage image_of(const RankSlot& slot) {
  SlotImage img;
  std::memset(&img, 0, sizeof img);
  for (int t = 0; t < kMaxThreads; ++t) {
    img.call[t] = slot.threads[t].call.load();
    img.phase[t] = slot.threads[t].phase.load();
  }
  img.status = slot.status.load();  // the texts below are written before the status that announces them
  img.pid = slot.pid.load();
  img.attached = slot.attached.load();
  img.setup_seconds = slot.setup_seconds;
  std::memcpy(img.error, slot.error, sizeof img.error);
  std::memcpy(img.note, slot.note, sizeof img.note);
  img.error[sizeof img.error - 1] = img.note[sizeof img.note - 1] = 0;
  return img;
}

void apply_image(const SlotImage& img, RankSlot& slot) {
  std::memcpy(slot.error, img.error, sizeof slot.error);
  std::memcpy(slot.note, img.note, sizeof slot.note);
  slot.setup_seconds = img.setup_seconds;
  for (int t = 0; t < kMaxThreads; ++t) {
    slot.threads[t].call.store(img.call[t]);
    slot.threads[t].phase.store(img.phase[t]);
  }
  slot.pid.store(img.pid);
  slot.attached.store(img.attached);
  slot.status.store(img.status);
}

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
template <class T>
bool get(const std::string& in, size_t& at, T& v) {
  if (at + sizeof v > in.size()) return false;
  std::memcpy(&v, in.data() + at, sizeof v);
  at += sizeof v;
  return true;
}

std::string frame(uint32_t type, const std::string& payload) {
  std::string out;
  put(out, type);
  put(out, static_cast<uint32_t>(payload.size()));
  return out + payload;
}

bool send_all(int fd, const std::string& bytes) {
  size_t at = 0;
  while (at < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

// Reads what is there without blocking; false when the peer closed or the connection failed.
bool read_available(int fd, std::string& inbox) {
  char buf[65536];
  while (true) {
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      inbox.append(buf, static_cast<size_t>(n));
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

// The next whole frame in `inbox`, removed from it; false when none is complete (or `bad` is set).
bool next_frame(std::string& inbox, uint32_t& type, std::string& payload, bool& bad) {
  size_t at = 0;
  uint32_t length = 0;
  if (!get(inbox, at, type) || !get(inbox, at, length)) return false;
  if (length > kMaxFrame) {
    bad = true;
    return false;
  }
  if (inbox.size() < at + length) return false;
  payload = inbox.substr(at, length);
  inbox.erase(0, at + length);
  return true;
}

void no_delay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

std::string random_token() {
  unsigned char bytes[kTokenChars / 2];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error("getrandom failed: " + std::string(std::strerror(errno)));
    got += static_cast<size_t>(n);
  }
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

std::string id_payload(int comm, const unsigned char* id) {
  std::string out;
  put(out, static_cast<int32_t>(comm));
  out.append(reinterpret_cast<const char*>(id), kUniqueIdBytes);
  return out;
}

void raise_turn(std::atomic<int32_t>& turn, int32_t t) {
  int32_t cur = turn.load();
  while (t > cur && !turn.compare_exchange_weak(cur, t)) {
  }
}

}  // namespace

// ---- server

struct StoreServer::Client {
  int fd = -1;
  int rank = -1;  // -1 until its hello
  std::string inbox;
};

StoreServer::StoreServer(SharedBlock* block, std::string plan_json, int ranks, bool loopback_only)
    : block_(block),
      plan_json_(std::move(plan_json)),
      ranks_(ranks),
      token_(random_token()),
      progress_(static_cast<size_t>(ranks), 0),
      connected_(static_cast<size_t>(ranks)) {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("cannot open the store's socket: " + std::string(std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(loopback_only ? INADDR_LOOPBACK : INADDR_ANY);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listen_fd_, 256) != 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const std::string why = std::strerror(errno);
    close(listen_fd_);
    throw std::runtime_error("cannot listen for the ranks: " + why);
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { serve(); });
}

StoreServer::~StoreServer() { stop(); }

void StoreServer::stop() {
  if (stopping_.exchange(true)) return;
  if (thread_.joinable()) thread_.join();
  for (auto& c : clients_)
    if (c->fd >= 0) close(c->fd);
  clients_.clear();
  if (listen_fd_ >= 0) close(listen_fd_);
  listen_fd_ = -1;
  for (auto& c : connected_) c.store(0);
}

bool StoreServer::connected(int rank) const {
  return rank >= 0 && rank < ranks_ && connected_[static_cast<size_t>(rank)].load() != 0;
}

void StoreServer::serve() {
  std::vector<pollfd> fds;
  while (!stopping_.load()) {
    fds.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    for (auto& c : clients_) fds.push_back({c->fd, POLLIN, 0});
    const int ready = poll(fds.data(), fds.size(), 1);
    if (ready > 0) {
      if (fds[0].revents & POLLIN) accept_client();
      for (size_t i = 1; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        Client& c = *clients_[i - 1];
        if (!read_from(c)) {
          close(c.fd);
          c.fd = -1;
          if (c.rank >= 0) connected_[static_cast<size_t>(c.rank)].store(0);
        }
      }
      clients_.erase(std::remove_if(clients_.begin(), clients_.end(), [](const auto& c) { return c->fd < 0; }),
                     clients_.end());
    }
    if (block_->abort.load() && !abort_sent_) {
      abort_sent_ = true;
      broadcast(kAbort, "", nullptr);
    }
    if (block_->release.load() && !release_sent_) {
      release_sent_ = true;
      broadcast(kRelease, "", nullptr);
    }
  }
}

void StoreServer::accept_client() {
  const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  no_delay(fd);
  auto c = std::make_unique<Client>();
  c->fd = fd;
  clients_.push_back(std::move(c));
}

bool StoreServer::read_from(Client& c) {
  const bool open = read_available(c.fd, c.inbox);  // what arrived before a close still counts
  bool bad = false;
  uint32_t type = 0;
  std::string payload;
  while (next_frame(c.inbox, type, payload, bad)) {
    if (c.rank < 0 && type != kHello) return false;
    handle(c, type, payload);
    if (c.fd < 0) return false;
  }
  return open && !bad;
}

void StoreServer::send_to(Client& c, uint32_t type, const std::string& payload) {
  if (c.fd >= 0 && !send_all(c.fd, frame(type, payload))) {
    close(c.fd);
    c.fd = -1;
    if (c.rank >= 0) connected_[static_cast<size_t>(c.rank)].store(0);
  }
}

void StoreServer::broadcast(uint32_t type, const std::string& payload, const Client* except) {
  for (auto& c : clients_)
    if (c.get() != except && c->rank >= 0) send_to(*c, type, payload);
}

void StoreServer::handle(Client& c, uint32_t type, const std::string& payload) {
  size_t at = 0;
  switch (type) {
    case kHello: {
      int32_t rank = -1;
      if (c.rank >= 0 || payload.size() != kTokenChars + sizeof rank || payload.compare(0, kTokenChars, token_) != 0) {
        close(c.fd);  // not one of this run's ranks
        c.fd = -1;
        return;
      }
      at = kTokenChars;
      get(payload, at, rank);
      if (rank < 0 || rank >= ranks_ || connected_[static_cast<size_t>(rank)].load()) {
        close(c.fd);
        c.fd = -1;
        return;
      }
      c.rank = rank;
      connected_[static_cast<size_t>(rank)].store(1);
      send_to(c, kPlan, plan_json_);
      std::string turn;
      put(turn, block_->turn.load());
      send_to(c, kTurn, turn);
      for (int comm = 0; comm < kMaxComms; ++comm)
        if (block_->id_ready[comm].load()) send_to(c, kId, id_payload(comm, block_->ids[comm]));
      if (abort_sent_) send_to(c, kAbort, "");
      return;
    }
    case kSlot:
      if (payload.size() == sizeof(SlotImage)) {
        SlotImage img;
        std::memcpy(&img, payload.data(), sizeof img);
        apply_image(img, block_->ranks[c.rank]);
      }
      return;
    case kTiming: {
      int32_t index = 0, call = 0;
      double seconds = 0;
      if (!get(payload, at, index) || !get(payload, at, call) || !get(payload, at, seconds)) return;
      if (index < 0 || index >= kMaxTimings) return;
      RankSlot& slot = block_->ranks[c.rank];
      slot.timing_call[index] = call;
      slot.timing_seconds[index] = seconds;
      if (slot.timings.load() < index + 1) slot.timings.store(index + 1);
      return;
    }
    case kProgress: {
      uint64_t count = 0;
      if (!get(payload, at, count)) return;
      uint64_t& last = progress_[static_cast<size_t>(c.rank)];
      if (count > last) block_->progress.fetch_add(count - last);
      last = std::max(last, count);
      return;
    }
    case kTurn: {
      int32_t turn = 0;
      if (!get(payload, at, turn)) return;
      raise_turn(block_->turn, turn);
      broadcast(kTurn, payload, &c);
      return;
    }
    case kId: {
      int32_t comm = -1;
      if (payload.size() != sizeof comm + kUniqueIdBytes || !get(payload, at, comm) || comm < 0 || comm >= kMaxComms)
        return;
      std::memcpy(block_->ids[comm], payload.data() + at, kUniqueIdBytes);
      block_->id_ready[comm].store(1);
      broadcast(kId, payload, &c);
      return;
    }
    case kLibrary:
      std::snprintf(block_->library, sizeof block_->library, "%s", payload.c_str());
      return;
    default:
      return;
  }
}

// ---- client

StoreClient::StoreClient(const std::string& address, const std::string& token, int rank)
    : rank_(rank), block_(std::make_unique<SharedBlock>()), id_known_(kMaxComms, 0) {  // value-initialized: zeros
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::runtime_error("the store's address '" + address + "' is not host:port");
  const std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  std::string why;
  while (fd_ < 0 && Clock::now() < deadline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int e = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0) {
      why = "cannot resolve " + host + ": " + gai_strerror(e);
    } else {
      for (addrinfo* a = found; a && fd_ < 0; a = a->ai_next) {
        const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) continue;
        if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
          fd_ = fd;
        } else {
          why = "cannot connect to the store at " + address + ": " + std::strerror(errno);
          close(fd);
        }
      }
      freeaddrinfo(found);
    }
    if (fd_ < 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (fd_ < 0) throw std::runtime_error(why);
  no_delay(fd_);
  if (token.size() != kTokenChars) throw std::runtime_error("the store token is malformed");
  std::string hello = token;
  put(hello, static_cast<int32_t>(rank));
  send_frame(kHello, hello);
  // The plan comes first; the server may already send turns and ids after it.
  const auto plan_deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < plan_deadline) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 100) < 0 && errno != EINTR) break;
    if (!read_available(fd_, inbox_) && inbox_.empty())
      throw std::runtime_error("the store at " + address + " closed the connection (a wrong token or rank?)");
    uint32_t type = 0;
    std::string payload;
    bool bad = false;
    if (next_frame(inbox_, type, payload, bad) && type == kPlan) {
      plan_json_ = std::move(payload);
      return;
    }
    if (bad) break;
  }
  throw std::runtime_error("no plan from the store at " + address);
}

StoreClient::~StoreClient() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  if (fd_ >= 0) close(fd_);
}

void StoreClient::start() {
  thread_ = std::thread([this] { mirror(); });
}

void StoreClient::flush() { send_changes(); }

void StoreClient::send_frame(uint32_t type, const std::string& payload) {
  if (!send_all(fd_, frame(type, payload))) _exit(4);  // the store is gone: so is the replay
}

void StoreClient::mirror() {
  receive();  // what came with the plan (the current turn, ids of a late joiner) waits in the inbox
  // 0.2 ms between looks while the rank changes (the sequencer's turns pass through here), up to
  // 2 ms while it does not: a blocked rank's spinning MPI threads keep the CPU.
  long wait_ns = 200L * 1000;
  while (!stopping_.load()) {
    pollfd p{fd_, POLLIN, 0};
    const timespec wait{0, wait_ns};
    const bool received = ppoll(&p, 1, &wait, nullptr) > 0;
    if (received) receive();
    const bool sent = send_changes();
    wait_ns = received || sent ? 200L * 1000 : std::min(wait_ns * 2, 2000L * 1000);
  }
}

void StoreClient::receive() {
  std::lock_guard<std::mutex> lock(send_mutex_);
  const bool open = read_available(fd_, inbox_);
  uint32_t type = 0;
  std::string payload;
  bool bad = false;
  SharedBlock& b = *block_;
  while (next_frame(inbox_, type, payload, bad)) {
    size_t at = 0;
    switch (type) {
      case kTurn: {
        int32_t turn = 0;
        if (get(payload, at, turn)) {
          raise_turn(b.turn, turn);
          sent_turn_ = std::max(sent_turn_, turn);
        }
        break;
      }
      case kId: {
        int32_t comm = -1;
        if (payload.size() == sizeof comm + kUniqueIdBytes && get(payload, at, comm) && comm >= 0 && comm < kMaxComms) {
          std::memcpy(b.ids[comm], payload.data() + at, kUniqueIdBytes);
          id_known_[static_cast<size_t>(comm)] = 1;
          b.id_ready[comm].store(1);
        }
        break;
      }
      case kAbort:
        b.abort.store(1);
        break;
      case kRelease:
        b.release.store(1);
        break;
      default:
        break;
    }
  }
  // The store closed (collmc ended or was killed): nothing coordinates this rank any more.
  if (!open || bad) _exit(4);
}

bool StoreClient::send_changes() {
  std::lock_guard<std::mutex> lock(send_mutex_);
  bool sent = false;
  SharedBlock& b = *block_;
  RankSlot& slot = b.ranks[rank_];
  for (int comm = 0; comm < kMaxComms; ++comm)
    if (!id_known_[static_cast<size_t>(comm)] && b.id_ready[comm].load()) {
      id_known_[static_cast<size_t>(comm)] = 1;
      send_frame(kId, id_payload(comm, b.ids[comm]));
      sent = true;
    }
  if (const int32_t turn = b.turn.load(); turn > sent_turn_) {
    sent_turn_ = turn;
    std::string p;
    put(p, turn);
    send_frame(kTurn, p);
    sent = true;
  }
  const int timings = std::min(slot.timings.load(), kMaxTimings);
  for (; sent_timings_ < timings; ++sent_timings_) {
    std::string p;
    put(p, static_cast<int32_t>(sent_timings_));
    put(p, static_cast<int32_t>(slot.timing_call[sent_timings_]));
    put(p, slot.timing_seconds[sent_timings_]);
    send_frame(kTiming, p);
    sent = true;
  }
  const SlotImage img = image_of(slot);
  std::string bytes(reinterpret_cast<const char*>(&img), sizeof img);
  if (bytes != sent_slot_) {
    send_frame(kSlot, bytes);
    sent = true;
    sent_slot_ = std::move(bytes);
  }
  // Progress after the slot: the watchdog sees the new positions no later than the progress.
  if (const uint64_t progress = b.progress.load(); progress != sent_progress_) {
    sent_progress_ = progress;
    std::string p;
    put(p, progress);
    send_frame(kProgress, p);
    sent = true;
  }
  if (!library_sent_ && b.library[0]) {
    library_sent_ = true;
    send_frame(kLibrary, std::string(b.library, strnlen(b.library, sizeof b.library)));
    sent = true;
  }
  return sent;
}

// ---- the rank's side

namespace {

std::unique_ptr<StoreClient> rank_client;

void flush_rank_client() {
  if (rank_client) rank_client->flush();
}

bool env_int(const char* name, int* out) {
  const char* v = std::getenv(name);
  if (!v || !*v) return false;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end || n < 0 || n > 1 << 20) return false;
  *out = static_cast<int>(n);
  return true;
}

}  // namespace

StoreClient& connect_rank_to_store(int rank) {
  const char* address = std::getenv(kStoreAddressVariable);
  const char* token = std::getenv(kStoreTokenVariable);
  if (!address || !*address || !token || !*token)
    throw std::runtime_error(std::string(kStoreAddressVariable) + " and " + kStoreTokenVariable +
                             " are not set: this program is started by collmc replay --launcher mpirun|srun");
  rank_client = std::make_unique<StoreClient>(address, token, rank);
  rank_client->start();
  set_rank_exit_hook(flush_rank_client);
  return *rank_client;
}

bool launcher_rank(int* rank, int* local_rank) {
  const char* ranks[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK"};
  const char* locals[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"};
  bool found = false;
  for (const char* n : ranks)
    if (env_int(n, rank)) {
      found = true;
      break;
    }
  *local_rank = 0;
  for (const char* n : locals)
    if (env_int(n, local_rank)) break;
  return found;
}

}  // namespace collmc::replay
