// Calls the NCCL API (the fake one from fake_nccl.cpp) the way a small training program would, so the
// recorder's tests can run it under LD_PRELOAD=libcollmc_record.so. Modes:
//   program RANK NRANKS same|opposite   two splits of a world comm, a pool registered on both (in the same
//                                       order on every rank, or reversed on odd ranks), then every
//                                       collective, p2p in a group, syncs, deregistration, teardown
//   threads T N                         T threads, each N all-reduces and a stream sync, at once
//   hang                                init, alloc, then a window registration (made to block by
//                                       FAKE_NCCL_HANG_ON=ncclCommWindowRegister)
//   bench N                             N all-reduces; prints the time per call in ns
//   fork                                init, then a forked child and the parent each all-reduce once
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

#define CHECK(call)                                       \
  do {                                                    \
    if ((call) != 0) {                                    \
      std::fprintf(stderr, "driver: %s failed\n", #call); \
      std::exit(3);                                       \
    }                                                     \
  } while (0)

ncclComm_t init_world(int rank, int nranks) {
  ncclUniqueId id;
  if (rank == 0) CHECK(ncclGetUniqueId(&id));
  memset(id.internal, 1, sizeof id.internal);  // as if rank 0 had sent its id to everyone
  ncclComm_t comm = nullptr;
  CHECK(ncclCommInitRank(&comm, nranks, id, rank));
  return comm;
}

int program(int rank, int nranks, bool opposite) {
  ncclComm_t world = init_world(rank, nranks);
  auto stream = reinterpret_cast<cudaStream_t>(0x5000);
  ncclComm_t a = nullptr, b = nullptr;
  CHECK(ncclCommSplit(world, 0, rank, &a, nullptr));
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  CHECK(ncclCommSplit(world, 0, rank, &b, &config));
  void* pool = nullptr;
  CHECK(ncclMemAlloc(&pool, 1 << 20));
  ncclWindow_t wa = nullptr, wb = nullptr;
  if (opposite && rank % 2 == 1) {
    CHECK(ncclCommWindowRegister(b, pool, 1 << 20, &wb, NCCL_WIN_COLL_SYMMETRIC));
    CHECK(ncclCommWindowRegister(a, pool, 1 << 20, &wa, NCCL_WIN_COLL_SYMMETRIC));
  } else {
    CHECK(ncclCommWindowRegister(a, pool, 1 << 20, &wa, NCCL_WIN_COLL_SYMMETRIC));
    CHECK(ncclCommWindowRegister(b, pool, 1 << 20, &wb, NCCL_WIN_COLL_SYMMETRIC));
  }
  CHECK(ncclAllReduce(pool, pool, 1024, ncclBfloat16, ncclSum, a, stream));
  CHECK(cudaStreamSynchronize(stream));
  void* plain = nullptr;
  CHECK(cudaMalloc(&plain, 1 << 16));
  const int peer = (rank + 1) % nranks, from = (rank + nranks - 1) % nranks;
  CHECK(ncclGroupStart());
  CHECK(ncclSend(plain, 256, ncclFloat32, peer, world, stream));
  CHECK(ncclRecv(plain, 256, ncclFloat32, from, world, stream));
  CHECK(ncclGroupEnd());
  CHECK(ncclAllGather(plain, plain, 64, ncclFloat32, world, stream));
  CHECK(ncclReduceScatter(plain, plain, 64, ncclFloat32, ncclMax, world, stream));
  CHECK(ncclBroadcast(plain, plain, 64, ncclInt32, 0, world, stream));
  CHECK(ncclReduce(plain, plain, 64, ncclFloat64, ncclProd, 0, world, stream));
  CHECK(ncclAlltoAll(plain, plain, 16, ncclInt8, b, stream));
  void* handle = nullptr;
  CHECK(ncclCommRegister(world, plain, 1 << 16, &handle));
  CHECK(ncclCommDeregister(world, handle));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(plain));
  CHECK(ncclCommWindowDeregister(a, wa));
  CHECK(ncclCommWindowDeregister(b, wb));
  CHECK(ncclMemFree(pool));
  CHECK(ncclCommFinalize(a));
  CHECK(ncclCommDestroy(a));
  CHECK(ncclCommAbort(b));
  CHECK(ncclCommDestroy(world));
  return 0;
}

int threads(int nthreads, int calls) {
  ncclComm_t world = init_world(0, 1);
  std::vector<std::thread> pool;
  for (int t = 0; t < nthreads; ++t) {
    pool.emplace_back([=] {
      // A fake stream handle: the fake NCCL only records it.
      auto stream =
          reinterpret_cast<cudaStream_t>(static_cast<uintptr_t>(0x1000 + t));  // NOLINT(performance-no-int-to-ptr)
      for (int i = 0; i < calls; ++i) CHECK(ncclAllReduce(nullptr, nullptr, 1, ncclFloat32, ncclSum, world, stream));
      CHECK(cudaStreamSynchronize(stream));
    });
  }
  for (auto& th : pool) th.join();
  return 0;
}

int hang() {
  ncclComm_t world = init_world(0, 2);
  void* pool = nullptr;
  CHECK(ncclMemAlloc(&pool, 4096));
  ncclWindow_t win = nullptr;
  std::printf("registering\n");
  std::fflush(stdout);
  CHECK(ncclCommWindowRegister(world, pool, 4096, &win, NCCL_WIN_COLL_SYMMETRIC));
  return 0;
}

int bench(long calls) {
  ncclComm_t world = init_world(0, 1);
  auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) CHECK(ncclAllReduce(nullptr, nullptr, 1, ncclFloat32, ncclSum, world, nullptr));
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
  std::printf("ns_per_call %.1f\n", ns / static_cast<double>(calls));
  return 0;
}

int forked() {
  ncclComm_t world = init_world(0, 1);
  const pid_t child = fork();
  if (child < 0) return 3;
  CHECK(ncclAllReduce(nullptr, nullptr, child == 0 ? 2 : 1, ncclFloat32, ncclSum, world, nullptr));
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "program" && argc == 5)
    return program(std::atoi(argv[2]), std::atoi(argv[3]), std::string(argv[4]) == "opposite");
  if (mode == "threads" && argc == 4) return threads(std::atoi(argv[2]), std::atoi(argv[3]));
  if (mode == "hang") return hang();
  if (mode == "bench" && argc == 3) return bench(std::atol(argv[2]));
  if (mode == "fork") return forked();
  std::fprintf(stderr, "usage: %s program RANK NRANKS same|opposite | threads T N | hang | bench N | fork\n", argv[0]);
  return 2;
}
