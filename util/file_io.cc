#include "util/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace rnode {
namespace {

// Closes a file descriptor on every path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Closes now; false when close reports an error (a lost write).
  bool Close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0;
  }

 private:
  int fd_;
};

absl::Status ErrnoError(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status WriteAll(int fd, std::string_view text, const std::string& what) {
  size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(what);
    }
    written += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, std::string_view text,
                                 mode_t mode) {
  const std::string tmp = path + ".tmp";
  if (::unlink(tmp.c_str()) != 0 && errno != ENOENT) return ErrnoError(tmp);
  Fd fd(::open(tmp.c_str(),
               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (fd.get() < 0) return ErrnoError(tmp);
  absl::Status s = absl::OkStatus();
  // The umask may have narrowed the mode; make it exact.
  if (::fchmod(fd.get(), mode) != 0) s = ErrnoError(tmp);
  if (s.ok()) s = WriteAll(fd.get(), text, tmp);
  if (s.ok() && ::fsync(fd.get()) != 0) s = ErrnoError(tmp);
  if (s.ok() && !fd.Close()) s = ErrnoError(tmp);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) s = ErrnoError(path);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  // Make the rename durable; a failure here leaves a complete file.
  const std::filesystem::path parent =
      std::filesystem::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() >= 0) ::fsync(dir_fd.get());
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          uintmax_t max_bytes) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file"));
  }
  if (ec) return absl::InternalError(absl::StrCat(path, ": ", ec.message()));
  if (status.type() != std::filesystem::file_type::regular) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return absl::InternalError(absl::StrCat(path, ": ", ec.message()));
  if (size > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ": ", size, " bytes is more than the ", max_bytes, " expected"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InternalError(absl::StrCat(path, ": cannot read"));
  std::string text;
  text.reserve(static_cast<size_t>(size));
  text.assign(std::istreambuf_iterator<char>(in),
              std::istreambuf_iterator<char>());
  if (in.bad()) return absl::InternalError(absl::StrCat(path, ": read error"));
  // The file may have grown since its size was read.
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": more than the ", max_bytes, " bytes expected"));
  }
  return text;
}

}  // namespace rnode
