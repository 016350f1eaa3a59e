// write_file_atomically (atomic_file.hpp).
#include "records/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "records/recorder.hpp"

namespace ember::record_detail {

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

void write_file_atomically(const std::filesystem::path& path, const char* label,
                           const std::function<void(int fd)>& fill) {
  const std::string file = path.string();
  static std::atomic<uint64_t> counter{0};
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  // ".<name>.tmp-<pid>-<n>": hidden, unique per process and call, same directory as the target.
  const std::filesystem::path tmp =
      dir / fmt::format(".{}.tmp-{}-{}", path.filename().string(), static_cast<long>(::getpid()), counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw RecordIoError(file, fmt::format("cannot create temporary file {}: {}", tmp.string(), std::strerror(errno)),
                        label);
  bool committed = false;
  struct Cleanup {  // the temporary never outlives a failure
    int& fd;
    const std::filesystem::path& tmp;
    bool& committed;
    ~Cleanup() {
      if (fd >= 0) ::close(fd);
      if (!committed) ::unlink(tmp.c_str());
    }
  } cleanup{fd, tmp, committed};
  auto sys_error = [&](const char* what) {
    return RecordIoError(file, fmt::format("{}: {}", what, std::strerror(errno)), label);
  };
  fill(fd);
  if (::fsync(fd) != 0) throw sys_error("fsync failed");
  const int closing = fd;
  fd = -1;
  if (::close(closing) != 0) throw sys_error("close failed");
  if (::rename(tmp.c_str(), path.c_str()) != 0) throw sys_error("cannot rename the temporary file into place");
  committed = true;
  // The rename is durable once the directory is synced; best effort (some filesystems refuse directory fsync).
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace ember::record_detail
