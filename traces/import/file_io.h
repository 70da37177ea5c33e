// Reading trace files whole, with a clear error when they cannot be read or are too large.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace collmc::traces {

// Bytes of spare capacity read_trace_file leaves after the file's bytes: simdjson reads up to
// SIMDJSON_PADDING (64) bytes past a document's end, so a dump can be parsed in place, without a copy.
inline constexpr size_t kReadPadding = 64;

// The bytes of `path` (with kReadPadding bytes of spare capacity); throws TraceInputError when it cannot be
// read or is over `max_bytes`.
std::string read_trace_file(const std::string& path, uint64_t max_bytes = 1ull << 30);
// The same into `bytes`, whose memory is reused: a reader that keeps one buffer per worker does not fault
// in fresh pages for every file.
void read_trace_file(const std::string& path, std::string& bytes, uint64_t max_bytes = 1ull << 30);

// Asks the kernel to start reading `path` into the page cache in the background (posix_fadvise WILLNEED), so
// that a reader parsing one file while the next ones are read from disk is not waiting for the disk as much.
// Does nothing where that cannot be done; errors are left to read_trace_file.
void prefetch_trace_file(const std::string& path);

// The importers' read-ahead, called as a worker starts on files[i]: the files kReadAhead places ahead are
// asked into the page cache (and, for the first file, the first kReadAhead), so that parsing one file
// overlaps the disk reading the next ones. From a cold cache, 4,096 x 2,000 recorder traces went from 22.5 s
// to 8.7 s with it (docs/PERFORMANCE.md).
inline constexpr size_t kReadAhead = 8;
void read_ahead(const std::vector<std::string>& files, size_t i);

// Runs work(0) .. work(n - 1) on `threads` workers (0: one per core; never more than n), each index once, in
// no set order; then rethrows the exception of the lowest index that threw, the error a pass over the files
// in order would have met first. The importers read and parse one file per call, so files are read in
// parallel and each is freed as soon as it is parsed.
void for_each_file(size_t n, unsigned threads, const std::function<void(size_t)>& work);

// The rank a dump's file name ends with: "nccl_trace_rank_3" and "fr_3.pkl" give 3; none: nullopt.
std::optional<int> rank_from_file_name(const std::string& path);

}  // namespace collmc::traces
