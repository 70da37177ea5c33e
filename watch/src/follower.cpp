// follower.h: reading a job's trace files as they grow.
#include "collmc/watch/follower.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "collmc/traces/recorder_reader.h"
#include "collmc/traces/torch_shim_reader.h"

namespace collmc::watch {

std::string_view event_name(std::string_view line) {
  const size_t key = line.find("\"ev\"");
  if (key == std::string_view::npos) return {};
  size_t at = key + 4;
  while (at < line.size() && (line[at] == ' ' || line[at] == ':')) ++at;
  if (at >= line.size() || line[at] != '"') return {};
  const size_t end = line.find('"', at + 1);
  return end == std::string_view::npos ? std::string_view{} : line.substr(at + 1, end - at - 1);
}

namespace {

bool torch_shim_claims(std::string_view first_line) {
  return event_name(first_line) == "process" && first_line.find("\"collmc-torch\"") != std::string_view::npos;
}

bool recorder_claims(std::string_view first_line) {
  return event_name(first_line) == "process" && !torch_shim_claims(first_line);
}

LineEvent recorder_classify(std::string_view line) {
  const std::string_view ev = event_name(line);
  return ev == "enter" ? LineEvent::Enter : ev == "return" ? LineEvent::Return : LineEvent::Other;
}

traces::Trace recorder_read(const std::vector<std::pair<std::string, std::string>>& files) {
  return traces::read_recorder_buffers(files, /*full_history=*/true);
}

traces::Trace torch_shim_read(const std::vector<std::pair<std::string, std::string>>& files) {
  return traces::read_torch_shim_buffers(files, /*full_history=*/true);
}

}  // namespace

const std::vector<StreamFormat>& stream_formats() {
  static const std::vector<StreamFormat> formats = {
      {"torch shim", torch_shim_claims, recorder_classify, torch_shim_read, /*reads_the_others=*/true},
      {"collmc recorder", recorder_claims, recorder_classify, recorder_read, false},
  };
  return formats;
}

TraceFollower::TraceFollower(std::string dir, std::set<std::string> skip)
    : dir_(std::move(dir)), skip_(std::move(skip)) {}

TraceFollower::~TraceFollower() {
  for (auto& [_, f] : files_)
    if (f.fd >= 0) close(f.fd);
}

void TraceFollower::list() {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    const std::string path = e.path().string();
    if (files_.count(path) || skip_.count(path)) continue;  // known: no stat
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.' || !e.is_regular_file(ec)) continue;
    File f;
    f.path = path;
    files_.emplace(path, std::move(f));
  }
}

void TraceFollower::read_new(File& f, Poll& p) {
  if (f.refused) return;
  if (f.fd < 0) {
    f.fd = open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) return;
    ++p.new_files;
  }
  struct stat st {};
  if (fstat(f.fd, &st) != 0 || static_cast<uint64_t>(st.st_size) <= f.offset) return;
  std::string chunk(static_cast<size_t>(st.st_size) - f.offset, '\0');
  const ssize_t n = pread(f.fd, chunk.data(), chunk.size(), static_cast<off_t>(f.offset));
  if (n <= 0) return;
  chunk.resize(static_cast<size_t>(n));
  f.offset += static_cast<uint64_t>(n);
  bytes_ += static_cast<uint64_t>(n);
  f.partial += chunk;
  const size_t last_newline = f.partial.rfind('\n');
  if (last_newline == std::string::npos) return;
  size_t start = 0;
  while (start <= last_newline) {
    const size_t end = f.partial.find('\n', start);
    const std::string_view line(f.partial.data() + start, end - start);
    if (f.format == nullptr) {
      for (const auto& format : stream_formats())
        if (format.claims(line)) f.format = &format;
      if (f.format == nullptr) {  // not a trace this watcher reads (a log, an output file)
        f.refused = true;
        f.partial.clear();
        return;
      }
    }
    ++p.lines;
    switch (f.format->classify(line)) {
      case LineEvent::Enter:
        ++p.entries;
        ++open_calls_;
        break;
      case LineEvent::Return:
        ++p.returns;
        --open_calls_;
        break;
      case LineEvent::Other:
        break;
    }
    start = end + 1;
  }
  f.text.append(f.partial, 0, last_newline + 1);
  f.partial.erase(0, last_newline + 1);
}

TraceFollower::Poll TraceFollower::poll() {
  Poll p;
  if (polls_++ % list_every == 0) list();
  for (auto& [_, f] : files_) read_new(f, p);
  lines_ += p.lines;
  return p;
}

std::vector<TraceFollower::Stream> TraceFollower::snapshot() const {
  std::vector<Stream> out;
  for (const auto& entry : files_) {
    const File& f = entry.second;  // not a structured binding: the lambda below refers to it
    if (f.format == nullptr || f.text.empty()) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const Stream& s) { return s.format == f.format; });
    if (it == out.end()) {
      out.push_back({f.format, {}});
      it = out.end() - 1;
    }
    it->files.emplace_back(f.path, f.text);
  }
  return out;
}

std::vector<TraceFollower::Stream> TraceFollower::to_read() const {
  std::vector<Stream> streams = snapshot();
  for (const auto& s : streams) {
    if (!s.format->reads_the_others) continue;
    Stream all{s.format, {}};
    for (const auto& t : streams) all.files.insert(all.files.end(), t.files.begin(), t.files.end());
    return {all};
  }
  return streams;
}

}  // namespace collmc::watch
