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

  Status AddRecord(std::string_view payload);
  Status Sync() { return file_->Sync(); }
  Status Close() { return file_->Close(); }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  std::unique_ptr<WritableFile> file_;
  bool checksums_;
  uint64_t bytes_written_ = 0;
};

}  // namespace lethe::log
