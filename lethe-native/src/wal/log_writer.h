// log::Writer appends records to a record log (log_format.h).
// Thread-safety: external synchronization (the DB's write lock).
#pragma once

#include <memory>
#include <string_view>

#include "lethe/env.h"

namespace lethe::log {

class Writer {
 public:
  Writer(std::unique_ptr<WritableFile> file, bool checksums)
      : file_(std::move(file)), checksums_(checksums) {}

  // After a failed append the log may end in a partial record, and a record
  // behind it would read as damage in the middle, not a torn tail: so every
  // later AddRecord returns the first failure and writes nothing. Sync still
  // syncs: the records before the failure stay worth keeping.
  Status AddRecord(std::string_view payload);
  Status Sync() { return file_->Sync(); }
  Status Close() { return file_->Close(); }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  std::unique_ptr<WritableFile> file_;
  bool checksums_;
  uint64_t bytes_written_ = 0;
  Status error_;
};

}  // namespace lethe::log
