// The coordination of ranks that share no memory (mpirun or srun on any number of nodes): a TCP
// store that collmc serves and every rank process connects to. It mirrors the shared block
// (shared_block.h), so the rank runner, the sequencer and the watchdog stay the same:
// - each rank writes its own slot, progress, turns and unique ids into a block of its own; its
//   StoreClient sends every change to the server;
// - the server writes each rank's slot into the engine's block (progress summed, the turn the
//   highest any rank reached) and passes turns and unique ids on to every rank;
// - the engine's abort and release go to every rank.
// Messages are frames (type, length, payload) on one TCP connection per rank. A rank proves it
// belongs to this run with a random token it gets in its environment (COLLMC_REPLAY_TOKEN), next to
// the store's address (COLLMC_REPLAY_STORE, host:port). Private to the replay library.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "shared_block.h"

namespace collmc::replay {

constexpr const char* kStoreAddressVariable = "COLLMC_REPLAY_STORE";
constexpr const char* kStoreTokenVariable = "COLLMC_REPLAY_TOKEN";

class StoreServer {
 public:
  // Listens on an ephemeral port: on 127.0.0.1 when `loopback_only`, else on every interface.
  // Hands `plan_json` (plan_to_json) to every rank that connects. Throws std::runtime_error.
  StoreServer(SharedBlock* block, std::string plan_json, int ranks, bool loopback_only);
  ~StoreServer();
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  int port() const { return port_; }
  const std::string& token() const { return token_; }
  // Whether rank r's process still holds its connection (a rank that exited or died does not).
  bool connected(int rank) const;
  // Stops serving and closes every connection; the engine's block is not written to afterwards.
  void stop();

 private:
  struct Client;
  void serve();
  void accept_client();
  bool read_from(Client& c);
  void handle(Client& c, uint32_t type, const std::string& payload);
  void send_to(Client& c, uint32_t type, const std::string& payload);
  void broadcast(uint32_t type, const std::string& payload, const Client* except);

  SharedBlock* block_;
  std::string plan_json_;
  int ranks_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::string token_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<uint64_t> progress_;  // each rank's own progress, as last reported
  std::vector<std::atomic<int>> connected_;
  std::atomic<bool> stopping_{false};
  bool abort_sent_ = false, release_sent_ = false;
  std::thread thread_;
};

class StoreClient {
 public:
  // Connects to `address` (host:port), proves the token, says it is rank `rank` and waits for the
  // plan. Throws std::runtime_error.
  StoreClient(const std::string& address, const std::string& token, int rank);
  ~StoreClient();
  StoreClient(const StoreClient&) = delete;
  StoreClient& operator=(const StoreClient&) = delete;

  const std::string& plan_json() const { return plan_json_; }
  // The rank's block: the rank runner uses it as it would use the shared one.
  SharedBlock* block() { return block_.get(); }
  // Starts mirroring the block to and from the server.
  void start();
  // Sends what changed now (before the process _exits).
  void flush();

 private:
  void mirror();
  void receive();
  bool send_changes();  // whether anything was sent
  void send_frame(uint32_t type, const std::string& payload);

  int fd_ = -1;
  int rank_;
  std::string plan_json_;
  std::unique_ptr<SharedBlock> block_;
  std::string inbox_;
  std::mutex send_mutex_;
  // What the server already has.
  std::string sent_slot_;
  int sent_timings_ = 0;
  uint64_t sent_progress_ = 0;
  int sent_turn_ = 0;
  std::vector<char> id_known_;  // ids the server has (sent or received)
  bool library_sent_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// In a rank process: connects to the store the environment names (kStoreAddressVariable,
// kStoreTokenVariable) as rank `rank`, starts mirroring, and makes rank_exit send the rank's last
// state first. Throws std::runtime_error (with what is missing or unreachable).
StoreClient& connect_rank_to_store(int rank);

// The rank's place in the job its launcher started: world rank and the rank on its node, from the
// environment mpirun (OMPI_COMM_WORLD_*), srun (SLURM_PROCID, SLURM_LOCALID) or a PMI sets.
// false when none is set.
bool launcher_rank(int* rank, int* local_rank);

}  // namespace collmc::replay
