// log::Reader reads the records of a record log front to back.
//
// Recovery policy (point in time): a record that is cut short or fails its
// checksum ends the log. Everything before it is returned; what follows is
// ignored and reported through tail_dropped_bytes(). This is what a crash in
// the middle of an append leaves behind, and synced records always precede
// it, so no acknowledged durable write is lost.
//
// A bad record followed by a record that passes its checksum is not a torn
// append but damage (a flipped byte, a bad length): damaged_before_end()
// reports it, and recovery treats it as Corruption rather than drop
// acknowledged writes. (A crash cannot leave a good record after a torn one:
// appends reach the file in order, and file systems that journal data order
// expose no later block before an earlier one.)
#pragma once

#include <memory>
#include <string>

#include "lethe/env.h"

namespace lethe::log {

class Reader {
 public:
  Reader(std::unique_ptr<SequentialFile> file, bool verify_checksums)
      : file_(std::move(file)), verify_(verify_checksums) {}

  // Reads the next record into *record (backed by *scratch). Returns false at
  // the end of the log (clean or damaged tail) or on an I/O error (status()).
  bool ReadRecord(std::string_view* record, std::string* scratch);
  const Status& status() const { return status_; }
  // Bytes after the last good record (0 for a clean end).
  uint64_t tail_dropped_bytes() const { return tail_dropped_bytes_; }
  uint64_t offset() const { return offset_; }
  bool damaged_before_end() const { return damaged_before_end_; }
  // The log ended in a record present in full that failed its checksum: for
  // a log whose every record was synced (the manifest) that is damage, since
  // a crash can only cut the last append short.
  bool whole_record_failed() const { return whole_record_failed_; }

 private:
  // Whether a record passing its checksum starts at some offset > 0 of `bytes`.
  static bool ValidRecordAfterStart(std::string_view bytes);

  std::unique_ptr<SequentialFile> file_;
  bool verify_;
  Status status_;
  uint64_t offset_ = 0;
  uint64_t tail_dropped_bytes_ = 0;
  bool eof_ = false;
  bool damaged_before_end_ = false;
  bool whole_record_failed_ = false;
};

}  // namespace lethe::log
