// Reading trace files (file_io.h).
#include "file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "collmc/traces/trace.h"

namespace collmc::traces {

std::string read_trace_file(const std::string& path, uint64_t max_bytes) {
  std::string bytes;
  read_trace_file(path, bytes, max_bytes);
  return bytes;
}

void read_trace_file(const std::string& path, std::string& bytes, uint64_t max_bytes) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw TraceInputError(path, 0, 0, 0, "cannot read the file: " + ec.message());
  if (size > max_bytes)
    throw TraceInputError(
        path, 0, 0, 0,
        "the file has " + std::to_string(size) + " bytes, over the limit of " + std::to_string(max_bytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TraceInputError(path, 0, 0, 0, "cannot open the file");
  // One read into a string of the file's size (a stream buffer copies every byte twice).
  bytes.clear();
  bytes.reserve(size + kReadPadding);
  bytes.resize(size);
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  bytes.resize(static_cast<size_t>(in.gcount()));
  if (in) {  // the file grew since its size was taken: the rest too
    std::ostringstream rest;
    rest << in.rdbuf();
    bytes += rest.str();
  }
}

void prefetch_trace_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
  ::close(fd);
}

void read_ahead(const std::vector<std::string>& files, size_t i) {
  if (i == 0)
    for (size_t k = 1; k < std::min(kReadAhead, files.size()); ++k) prefetch_trace_file(files[k]);
  if (i + kReadAhead < files.size()) prefetch_trace_file(files[i + kReadAhead]);
}

void for_each_file(size_t n, unsigned threads, const std::function<void(size_t)>& work) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<size_t> next{0};
  auto run = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        work(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<size_t>(threads, std::max<size_t>(n, 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

std::optional<int> rank_from_file_name(const std::string& path) {
  std::string base = std::filesystem::path(path).filename().string();
  for (const char* ext : {".pkl", ".pickle", ".json", ".bin", ".log", ".txt"}) {
    std::string e(ext);
    if (base.size() > e.size() && base.compare(base.size() - e.size(), e.size(), e) == 0) {
      base.resize(base.size() - e.size());
      break;
    }
  }
  size_t end = base.size(), start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(base[start - 1]))) --start;
  if (start == end || end - start > 6) return std::nullopt;
  return std::stoi(base.substr(start, end - start));
}

}  // namespace collmc::traces
