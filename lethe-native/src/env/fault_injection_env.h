// FaultInjectionEnv: an Env over another Env that fails operations on demand
// and journals what was made durable, for the reliability tests
// (test/fault_injection_test.cc, tools/lethe_crash_test.cc).
//
// Faults: after a given number of further operations of one kind (appends,
// syncs, renames, file creations), that kind fails with an IOError, once or
// until cleared; a space limit makes appends fail with NoSpace once the
// bytes appended through this Env reach it (a full disk); a hook may hold
// up removals (a slow file system).
//
// Sync journal: with a journal file descriptor set, every file creation,
// completed Sync, SyncDir, rename, link and removal appends one line to it
// (one write(2); a kill may still cut the last line short, and ApplyPowerLoss
// ignores a line without its newline). After a kill
// the journal says what a power loss could take away: ApplyPowerLoss drops
// every byte not synced and every file whose name no SyncDir made durable.
// Renames, links and removals count as durable at once (the model of a
// journaling file system with ordered data, as MemEnv's).
//
// Thread-safety: safe for concurrent use, like every Env.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "lethe/env.h"

namespace lethe {

enum class FaultKind : int { kAppend = 0, kSync = 1, kRename = 2, kCreate = 3, kCount = 4 };

const char* FaultKindName(FaultKind kind);

class FaultInjectionEnv final : public Env {
 public:
  explicit FaultInjectionEnv(Env* base) : base_(base) {}

  // The operation of `kind` after the next `after` ones fails; with
  // `persistent`, every later one too until ClearFaults.
  void InjectFault(FaultKind kind, uint64_t after, bool persistent);
  // Appends fail with NoSpace once `bytes` more bytes have been appended.
  void SetSpaceLimit(uint64_t bytes);
  void ClearFaults();
  // Faults that fired (operations failed) since creation.
  uint64_t faults_injected() const { return faults_injected_.load(); }

  // Runs `hook` before every file removal (null: none), e.g. to make
  // removals slow. Set it before the Env is in use.
  void SetRemoveHook(std::function<void(const std::string& fname)> hook) { remove_hook_ = std::move(hook); }
  // Runs `hook` before every file creation (null: none). Set it before the
  // Env is in use.
  void SetCreateHook(std::function<void(const std::string& fname)> hook) { create_hook_ = std::move(hook); }

  // Journals durability events to `fd` (-1: off). The caller owns fd.
  void SetSyncJournal(int fd) { journal_fd_.store(fd); }
  // Replays the journal at `journal_path` over the files it names (POSIX
  // paths): truncates each file to its last synced size and removes files
  // created after the last SyncDir of their directory. *changed counts the
  // files it truncated or removed.
  static Status ApplyPowerLoss(const std::string& journal_path, int* changed);

  // Env.
  Status NewSequentialFile(const std::string& f, std::unique_ptr<SequentialFile>* r) override {
    return base_->NewSequentialFile(f, r);
  }
  Status NewRandomAccessFile(const std::string& f, std::unique_ptr<RandomAccessFile>* r) override {
    return base_->NewRandomAccessFile(f, r);
  }
  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) override;
  bool FileExists(const std::string& f) override { return base_->FileExists(f); }
  Status GetChildren(const std::string& d, std::vector<std::string>* r) override {
    return base_->GetChildren(d, r);
  }
  Status RemoveFile(const std::string& fname) override;
  Status CreateDirIfMissing(const std::string& d) override { return base_->CreateDirIfMissing(d); }
  Status RemoveDir(const std::string& d) override { return base_->RemoveDir(d); }
  Status GetFileSize(const std::string& f, uint64_t* size) override { return base_->GetFileSize(f, size); }
  Status RenameFile(const std::string& src, const std::string& target) override;
  Status LinkFile(const std::string& src, const std::string& target) override;
  Status SyncDir(const std::string& dir) override;
  Status LockFile(const std::string& f, std::unique_ptr<FileLock>* lock) override {
    return base_->LockFile(f, lock);
  }
  Status PunchHole(const std::string& f, uint64_t offset, uint64_t len, uint64_t* freed) override {
    return base_->PunchHole(f, offset, len, freed);
  }
  Status GetLinkCount(const std::string& f, uint64_t* count) override {
    return base_->GetLinkCount(f, count);
  }

  // For the file wrapper.
  Status MaybeFail(FaultKind kind, const std::string& fname);
  Status ChargeSpace(uint64_t bytes, const std::string& fname);
  void Journal(char op, const std::string& a, const std::string& b = {}, uint64_t n = 0);

 private:
  struct Fault {
    std::atomic<int64_t> countdown{-1};  // -1: off
    std::atomic<bool> persistent{false};
    std::atomic<bool> fired{false};
  };

  Env* const base_;
  Fault faults_[static_cast<int>(FaultKind::kCount)];
  std::atomic<int64_t> space_left_{-1};  // -1: unlimited
  std::atomic<uint64_t> faults_injected_{0};
  std::atomic<int> journal_fd_{-1};
  std::function<void(const std::string&)> remove_hook_;
  std::function<void(const std::string&)> create_hook_;
};

}  // namespace lethe
