#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

#include "shared_block.h"

namespace collmc::replay {

namespace {

std::atomic<int> next_block{0};

SharedBlock* map_block(int fd) {
  void* p = mmap(nullptr, sizeof(SharedBlock), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<SharedBlock*>(p);
}

}  // namespace

std::string shared_block_prefix() { return "/collmc-replay-"; }

SharedMemory::SharedMemory()
    : name_(shared_block_prefix() + std::to_string(getpid()) + "-" + std::to_string(next_block.fetch_add(1))) {
  SharedBlock* p = nullptr;
  int fd = shm_open(name_.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd >= 0) {
    linked_ = true;
    if (ftruncate(fd, sizeof(SharedBlock)) == 0) p = map_block(fd);
    close(fd);
    if (!p) unlink();
  }
  if (!p) {
    // No /dev/shm (some containers): an anonymous mapping still serves forked ranks; ranks that
    // open the block by name cannot, and name() is empty to say so.
    name_.clear();
    void* a = mmap(nullptr, sizeof(SharedBlock), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED) throw std::runtime_error("cannot map the shared block: " + std::string(std::strerror(errno)));
    p = static_cast<SharedBlock*>(a);
  }
  std::memset(static_cast<void*>(p), 0, sizeof(SharedBlock));
  block_ = new (p) SharedBlock;
}

SharedMemory::~SharedMemory() {
  unlink();
  if (block_) munmap(block_, sizeof(SharedBlock));
}

void SharedMemory::unlink() {
  if (linked_) shm_unlink(name_.c_str());
  linked_ = false;
}

SharedBlock* attach_shared_block(const std::string& name) {
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) throw std::runtime_error("cannot open the shared block " + name + ": " + std::strerror(errno));
  SharedBlock* p = map_block(fd);
  close(fd);
  if (!p) throw std::runtime_error("cannot map the shared block " + name);
  return p;
}

}  // namespace collmc::replay
