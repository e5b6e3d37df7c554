// Env: the engine's only window on files and time. Every file the engine
// touches goes through an Env, so tests can substitute an in-memory file
// system that simulates crashes (NewMemEnv) and a logical clock.
//
// Thread-safety: Env and Clock implementations must be safe for concurrent
// use. File objects are used by one thread at a time unless stated.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lethe/status.h"

namespace lethe {

// A file read front to back (WAL and manifest replay).
class SequentialFile {
 public:
  virtual ~SequentialFile() = default;
  // Reads up to n bytes into scratch; *result views the bytes read (may be
  // fewer than n only at end of file).
  virtual Status Read(size_t n, std::string_view* result, char* scratch) = 0;
};

// A file read at arbitrary offsets. Safe for concurrent Read calls.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  virtual Status Read(uint64_t offset, size_t n, std::string_view* result,
                      char* scratch) const = 0;
};

// A file written by appending. Data is durable only after Sync().
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual Status Append(std::string_view data) = 0;
  virtual Status Flush() = 0;  // hand buffered bytes to the OS
  virtual Status Sync() = 0;   // make appended bytes durable
  virtual Status Close() = 0;
};

// Exclusive lock on a database directory (one process, one open DB).
class FileLock {
 public:
  virtual ~FileLock() = default;
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide POSIX environment. Never deleted.
  static Env* Default();

  virtual Status NewSequentialFile(const std::string& fname,
                                   std::unique_ptr<SequentialFile>* result) = 0;
  virtual Status NewRandomAccessFile(const std::string& fname,
                                     std::unique_ptr<RandomAccessFile>* result) = 0;
  // Creates or truncates fname.
  virtual Status NewWritableFile(const std::string& fname,
                                 std::unique_ptr<WritableFile>* result) = 0;
  virtual bool FileExists(const std::string& fname) = 0;
  virtual Status GetChildren(const std::string& dir, std::vector<std::string>* result) = 0;
  virtual Status RemoveFile(const std::string& fname) = 0;
  virtual Status CreateDirIfMissing(const std::string& dir) = 0;
  virtual Status RemoveDir(const std::string& dir) = 0;
  virtual Status GetFileSize(const std::string& fname, uint64_t* size) = 0;
  // Atomically replaces target with src.
  virtual Status RenameFile(const std::string& src, const std::string& target) = 0;
  // Makes target a hard link to src; NotSupported where links cannot be made
  // (the caller then copies).
  virtual Status LinkFile(const std::string& src, const std::string& target) = 0;
  // Makes the directory's entries (created, renamed files) durable.
  virtual Status SyncDir(const std::string& dir) = 0;
  virtual Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) = 0;
  // Releases the storage of [offset, offset + len) while keeping the file's
  // size and the other bytes (hole punching). Only whole file-system blocks
  // inside the range are released: *freed says how many bytes of storage
  // were (may be 0). NotSupported is acceptable.
  virtual Status PunchHole(const std::string& fname, uint64_t offset, uint64_t len, uint64_t* freed) = 0;
  // The number of directory entries (hard links) naming the file.
  virtual Status GetLinkCount(const std::string& fname, uint64_t* count) = 0;
};

// An in-memory file system for tests. It remembers what was synced:
// SimulateCrash() forgets every byte appended after a file's last Sync(),
// and every file created since the last SyncDir of its directory, as a power
// loss would. Renames and removals are durable at once (the fault model of a
// journaling file system with ordered data).
class MemEnv : public Env {
 public:
  virtual void SimulateCrash() = 0;
  // Bytes written through this Env since creation (for amplification tests).
  virtual uint64_t BytesWritten() const = 0;
  // Test hook: corrupt or inspect files directly.
  virtual Status ReadFileToString(const std::string& fname, std::string* data) = 0;
  virtual Status WriteStringToFile(const std::string& fname, std::string_view data) = 0;
};
std::unique_ptr<MemEnv> NewMemEnv();

// Time as the engine sees it: tombstone ages and the delete persistence
// threshold are measured with it. Tests inject a logical clock.
class Clock {
 public:
  virtual ~Clock() = default;
  // The process-wide wall clock. Never deleted.
  static Clock* Default();
  virtual uint64_t NowMicros() = 0;
};

// A clock that moves only when told to (thread-safe).
class ManualClock : public Clock {
 public:
  explicit ManualClock(uint64_t start_micros = 0) : now_(start_micros) {}
  uint64_t NowMicros() override;
  void Advance(uint64_t micros);
  void Set(uint64_t micros);

 private:
  std::atomic_uint64_t now_;
};

// Convenience helpers over an Env.
Status WriteStringToFile(Env* env, std::string_view data, const std::string& fname, bool sync);
Status ReadFileToString(Env* env, const std::string& fname, std::string* data);

}  // namespace lethe
