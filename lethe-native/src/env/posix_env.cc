// PosixEnv: the Env over the POSIX file API. Reads use pread, so a
// RandomAccessFile serves concurrent readers without locks.
#include <dirent.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "lethe/env.h"

namespace lethe {
namespace {

Status PosixError(const std::string& context, int err) {
  if (err == ENOENT) return Status::NotFound(context, std::strerror(err));
  if (err == ENOSPC) return Status::NoSpace(context, std::strerror(err));
  return Status::IOError(context, std::strerror(err));
}

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  Status Read(size_t n, std::string_view* result, char* scratch) override {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::read(fd_, scratch + done, n - done);
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError(fname_, errno);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, done);
    return Status::OK();
  }

 private:
  std::string fname_;
  int fd_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  Status Read(uint64_t offset, size_t n, std::string_view* result,
              char* scratch) const override {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd_, scratch + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError(fname_, errno);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, done);
    return Status::OK();
  }

 private:
  std::string fname_;
  int fd_;
};

// Buffers appends so that small records (WAL entries) cost no system call.
class PosixWritableFile final : public WritableFile {
 public:
  static constexpr size_t kBufferSize = 64 * 1024;

  PosixWritableFile(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {
    buf_.reserve(kBufferSize);
  }
  ~PosixWritableFile() override {
    if (fd_ >= 0) Close();
  }

  Status Append(std::string_view data) override {
    if (buf_.size() + data.size() <= kBufferSize) {
      buf_.append(data);
      return Status::OK();
    }
    Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (data.size() <= kBufferSize) {
      buf_.append(data);
      return Status::OK();
    }
    return WriteRaw(data.data(), data.size());
  }

  Status Flush() override { return FlushBuffer(); }

  Status Sync() override {
    Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (::fdatasync(fd_) != 0) return PosixError(fname_, errno);
    return Status::OK();
  }

  Status Close() override {
    Status s = FlushBuffer();
    if (fd_ >= 0 && ::close(fd_) != 0 && s.ok()) s = PosixError(fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  Status FlushBuffer() {
    Status s = WriteRaw(buf_.data(), buf_.size());
    buf_.clear();
    return s;
  }
  Status WriteRaw(const char* p, size_t n) {
    while (n > 0) {
      ssize_t r = ::write(fd_, p, n);
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError(fname_, errno);
      }
      p += r;
      n -= static_cast<size_t>(r);
    }
    return Status::OK();
  }

  std::string fname_;
  int fd_;
  std::string buf_;
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

 private:
  int fd_;
};

class PosixEnv final : public Env {
 public:
  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override {
    int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixSequentialFile>(fname, fd);
    return Status::OK();
  }

  Status NewRandomAccessFile(const std::string& fname,
                             std::unique_ptr<RandomAccessFile>* result) override {
    int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixRandomAccessFile>(fname, fd);
    return Status::OK();
  }

  Status NewWritableFile(const std::string& fname,
                         std::unique_ptr<WritableFile>* result) override {
    int fd = ::open(fname.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(fname, errno);
    *result = std::make_unique<PosixWritableFile>(fname, fd);
    return Status::OK();
  }

  bool FileExists(const std::string& fname) override { return ::access(fname.c_str(), F_OK) == 0; }

  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    result->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError(dir, errno);
    while (struct dirent* e = ::readdir(d)) {
      std::string name(e->d_name);
      if (name != "." && name != "..") result->push_back(std::move(name));
    }
    ::closedir(d);
    return Status::OK();
  }

  Status RemoveFile(const std::string& fname) override {
    if (::unlink(fname.c_str()) != 0) return PosixError(fname, errno);
    return Status::OK();
  }

  Status CreateDirIfMissing(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return PosixError(dir, errno);
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0) return PosixError(dir, errno);
    if (!S_ISDIR(st.st_mode)) return Status::IOError(dir, "exists and is not a directory");
    return Status::OK();
  }

  Status RemoveDir(const std::string& dir) override {
    if (::rmdir(dir.c_str()) != 0) return PosixError(dir, errno);
    return Status::OK();
  }

  Status GetFileSize(const std::string& fname, uint64_t* size) override {
    struct stat st;
    if (::stat(fname.c_str(), &st) != 0) return PosixError(fname, errno);
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }

  Status RenameFile(const std::string& src, const std::string& target) override {
    if (::rename(src.c_str(), target.c_str()) != 0) return PosixError(src, errno);
    return Status::OK();
  }

  Status LinkFile(const std::string& src, const std::string& target) override {
    if (::link(src.c_str(), target.c_str()) != 0) {
      if (errno == EXDEV || errno == EPERM || errno == EMLINK || errno == ENOTSUP) {
        return Status::NotSupported(src, std::strerror(errno));
      }
      return PosixError(src, errno);
    }
    return Status::OK();
  }

  Status SyncDir(const std::string& dir) override {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return PosixError(dir, errno);
    Status s;
    if (::fsync(fd) != 0) s = PosixError(dir, errno);
    ::close(fd);
    return s;
  }

  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override {
    int fd = ::open(fname.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(fname, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK) return Status::Busy(fname, "database is in use by another DB object or process");
      return PosixError(fname, err);
    }
    *lock = std::make_unique<PosixFileLock>(fd);
    return Status::OK();
  }

  // *freed is measured: the file's allocated blocks before and after.
  Status PunchHole(const std::string& fname, uint64_t offset, uint64_t len, uint64_t* freed) override {
    *freed = 0;
    int fd = ::open(fname.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(fname, errno);
    Status s;
    struct stat before, after;
    if (::fstat(fd, &before) != 0) {
      s = PosixError(fname, errno);
    } else if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset),
                           static_cast<off_t>(len)) != 0) {
      s = errno == EOPNOTSUPP ? Status::NotSupported(fname, "hole punching")
                              : PosixError(fname, errno);
    } else if (::fstat(fd, &after) == 0 && after.st_blocks < before.st_blocks) {
      *freed = static_cast<uint64_t>(before.st_blocks - after.st_blocks) * 512;  // st_blocks counts 512 B
    }
    ::close(fd);
    return s;
  }

  Status GetLinkCount(const std::string& fname, uint64_t* count) override {
    struct stat st;
    if (::stat(fname.c_str(), &st) != 0) return PosixError(fname, errno);
    *count = static_cast<uint64_t>(st.st_nlink);
    return Status::OK();
  }
};

}  // namespace

Env* Env::Default() {
  static PosixEnv* env = new PosixEnv();  // never destroyed: used until exit
  return env;
}

}  // namespace lethe
