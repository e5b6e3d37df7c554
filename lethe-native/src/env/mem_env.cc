// MemEnv: an in-memory file system that models what survives a power loss
// (see env.h). Each file keeps its bytes and how many of them were synced;
// each file also remembers whether its directory entry was made durable.
#include <algorithm>
#include <map>
#include <cstring>
#include <mutex>
#include <set>

#include "lethe/env.h"

namespace lethe {
namespace {

struct MemFile {
  std::mutex mu;
  std::string data;
  std::set<uint64_t> holes;  // 4 KiB blocks punched out (files only grow at the end)
  size_t synced_size = 0;
  bool entry_durable = false;  // created before the last SyncDir of its directory
};
using FilePtr = std::shared_ptr<MemFile>;

std::string Dirname(const std::string& fname) {
  size_t pos = fname.rfind('/');
  return pos == std::string::npos ? std::string(".") : fname.substr(0, pos);
}

class MemSequentialFile final : public SequentialFile {
 public:
  explicit MemSequentialFile(FilePtr file) : file_(std::move(file)) {}
  Status Read(size_t n, std::string_view* result, char* scratch) override {
    std::lock_guard<std::mutex> l(file_->mu);
    size_t avail = pos_ < file_->data.size() ? file_->data.size() - pos_ : 0;
    n = std::min(n, avail);
    std::memcpy(scratch, file_->data.data() + pos_, n);
    pos_ += n;
    *result = std::string_view(scratch, n);
    return Status::OK();
  }

 private:
  FilePtr file_;
  size_t pos_ = 0;
};

class MemRandomAccessFile final : public RandomAccessFile {
 public:
  explicit MemRandomAccessFile(FilePtr file) : file_(std::move(file)) {}
  Status Read(uint64_t offset, size_t n, std::string_view* result,
              char* scratch) const override {
    std::lock_guard<std::mutex> l(file_->mu);
    if (offset >= file_->data.size()) {
      *result = std::string_view(scratch, 0);
      return Status::OK();
    }
    n = std::min<size_t>(n, file_->data.size() - offset);
    std::memcpy(scratch, file_->data.data() + offset, n);
    *result = std::string_view(scratch, n);
    return Status::OK();
  }

 private:
  FilePtr file_;
};

class MemWritableFile final : public WritableFile {
 public:
  MemWritableFile(FilePtr file, std::atomic_uint64_t* bytes_written)
      : file_(std::move(file)), bytes_written_(bytes_written) {}
  Status Append(std::string_view data) override {
    std::lock_guard<std::mutex> l(file_->mu);
    file_->data.append(data);
    bytes_written_->fetch_add(data.size(), std::memory_order_relaxed);
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override {
    std::lock_guard<std::mutex> l(file_->mu);
    file_->synced_size = file_->data.size();
    return Status::OK();
  }
  Status Close() override { return Status::OK(); }

 private:
  FilePtr file_;
  std::atomic_uint64_t* bytes_written_;
};

class MemLock final : public FileLock {
 public:
  MemLock(std::mutex* mu, std::map<std::string, bool>* locks, std::string name)
      : mu_(mu), locks_(locks), name_(std::move(name)) {}
  ~MemLock() override {
    std::lock_guard<std::mutex> l(*mu_);
    locks_->erase(name_);
  }

 private:
  std::mutex* mu_;
  std::map<std::string, bool>* locks_;
  std::string name_;
};

class MemEnvImpl final : public MemEnv {
 public:
  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override {
    FilePtr f = Find(fname);
    if (!f) return Status::NotFound(fname, "no such file");
    *result = std::make_unique<MemSequentialFile>(std::move(f));
    return Status::OK();
  }
  Status NewRandomAccessFile(const std::string& fname,
                             std::unique_ptr<RandomAccessFile>* result) override {
    FilePtr f = Find(fname);
    if (!f) return Status::NotFound(fname, "no such file");
    *result = std::make_unique<MemRandomAccessFile>(std::move(f));
    return Status::OK();
  }
  Status NewWritableFile(const std::string& fname,
                         std::unique_ptr<WritableFile>* result) override {
    std::lock_guard<std::mutex> l(mu_);
    if (dirs_.count(Dirname(fname)) == 0) return Status::NotFound(fname, "no such directory");
    auto f = std::make_shared<MemFile>();
    files_[fname] = f;
    *result = std::make_unique<MemWritableFile>(f, &bytes_written_);
    return Status::OK();
  }
  bool FileExists(const std::string& fname) override {
    std::lock_guard<std::mutex> l(mu_);
    return files_.count(fname) > 0 || dirs_.count(fname) > 0;
  }
  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override {
    std::lock_guard<std::mutex> l(mu_);
    result->clear();
    if (dirs_.count(dir) == 0) return Status::NotFound(dir, "no such directory");
    std::string prefix = dir + "/";
    for (const auto& [name, f] : files_) {
      if (name.compare(0, prefix.size(), prefix) == 0 &&
          name.find('/', prefix.size()) == std::string::npos) {
        result->push_back(name.substr(prefix.size()));
      }
    }
    for (const auto& d : dirs_) {
      if (d.compare(0, prefix.size(), prefix) == 0 &&
          d.find('/', prefix.size()) == std::string::npos) {
        result->push_back(d.substr(prefix.size()));
      }
    }
    return Status::OK();
  }
  Status RemoveFile(const std::string& fname) override {
    std::lock_guard<std::mutex> l(mu_);
    if (files_.erase(fname) == 0) return Status::NotFound(fname, "no such file");
    return Status::OK();
  }
  Status CreateDirIfMissing(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    if (files_.count(dir)) return Status::IOError(dir, "exists and is not a directory");
    dirs_.insert(dir);
    return Status::OK();
  }
  Status RemoveDir(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    if (dirs_.erase(dir) == 0) return Status::NotFound(dir, "no such directory");
    return Status::OK();
  }
  Status GetFileSize(const std::string& fname, uint64_t* size) override {
    FilePtr f = Find(fname);
    if (!f) return Status::NotFound(fname, "no such file");
    std::lock_guard<std::mutex> l(f->mu);
    *size = f->data.size();
    return Status::OK();
  }
  Status RenameFile(const std::string& src, const std::string& target) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(src);
    if (it == files_.end()) return Status::NotFound(src, "no such file");
    FilePtr f = it->second;
    files_.erase(it);
    // The fault model makes renames durable at once (env.h).
    f->entry_durable = true;
    files_[target] = std::move(f);
    return Status::OK();
  }
  Status LinkFile(const std::string& src, const std::string& target) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(src);
    if (it == files_.end()) return Status::NotFound(src, "no such file");
    if (files_.count(target)) return Status::IOError(target, "file exists");
    files_[target] = it->second;  // shares the bytes, like a hard link
    return Status::OK();
  }
  Status SyncDir(const std::string& dir) override {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& [name, f] : files_) {
      if (Dirname(name) == dir) f->entry_durable = true;
    }
    return Status::OK();
  }
  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override {
    std::lock_guard<std::mutex> l(mu_);
    if (locks_.count(fname)) return Status::Busy(fname, "database is in use");
    locks_[fname] = true;
    *lock = std::make_unique<MemLock>(&mu_, &locks_, fname);
    return Status::OK();
  }
  // Zeroes the range; *freed counts the whole 4 KiB blocks inside it not
  // punched before, as a file system with 4 KiB blocks would free.
  Status PunchHole(const std::string& fname, uint64_t offset, uint64_t len, uint64_t* freed) override {
    constexpr uint64_t kBlock = 4096;
    *freed = 0;
    FilePtr f = Find(fname);
    if (!f) return Status::NotFound(fname, "no such file");
    std::lock_guard<std::mutex> l(f->mu);
    if (offset < f->data.size()) {
      size_t n = std::min<uint64_t>(len, f->data.size() - offset);
      std::fill_n(f->data.begin() + static_cast<long>(offset), n, '\0');
      const uint64_t first = (offset + kBlock - 1) / kBlock, end = (offset + n) / kBlock;
      for (uint64_t b = first; b < end; b++) *freed += f->holes.insert(b).second ? kBlock : 0;
    }
    return Status::OK();
  }

  Status GetLinkCount(const std::string& fname, uint64_t* count) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(fname);
    if (it == files_.end()) return Status::NotFound(fname, "no such file");
    *count = 0;
    for (const auto& [name, f] : files_) *count += f == it->second ? 1 : 0;
    return Status::OK();
  }

  void SimulateCrash() override {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = files_.begin(); it != files_.end();) {
      // Held across the erase: the file (and its mutex) must outlive the lock.
      FilePtr file = it->second;
      std::lock_guard<std::mutex> fl(file->mu);
      // POSIX does not promise that fsync of a new file persists its name:
      // only a sync of the directory (or a rename) does.
      if (!file->entry_durable) {
        it = files_.erase(it);
        continue;
      }
      file->data.resize(file->synced_size);
      file->holes.erase(file->holes.lower_bound(file->synced_size / 4096), file->holes.end());
      ++it;
    }
    locks_.clear();
  }
  uint64_t BytesWritten() const override { return bytes_written_.load(); }
  Status ReadFileToString(const std::string& fname, std::string* data) override {
    FilePtr f = Find(fname);
    if (!f) return Status::NotFound(fname, "no such file");
    std::lock_guard<std::mutex> l(f->mu);
    *data = f->data;
    return Status::OK();
  }
  Status WriteStringToFile(const std::string& fname, std::string_view data) override {
    std::lock_guard<std::mutex> l(mu_);
    auto f = std::make_shared<MemFile>();
    f->data.assign(data);
    f->synced_size = f->data.size();
    f->entry_durable = true;
    files_[fname] = std::move(f);
    return Status::OK();
  }

 private:
  FilePtr Find(const std::string& fname) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = files_.find(fname);
    return it == files_.end() ? nullptr : it->second;
  }

  std::mutex mu_;
  std::map<std::string, FilePtr> files_;
  std::set<std::string> dirs_{"", "/", "."};
  std::map<std::string, bool> locks_;
  std::atomic_uint64_t bytes_written_{0};
};

}  // namespace

std::unique_ptr<MemEnv> NewMemEnv() { return std::make_unique<MemEnvImpl>(); }

}  // namespace lethe
