// Status: the outcome of an engine call. The engine never throws; every
// fallible operation returns a Status (or a value plus a Status).
//
// Thread-safety: a Status is a plain value; distinct objects may be used from
// different threads without synchronization.
#pragma once

#include <string>
#include <string_view>

namespace lethe {

class Status {
 public:
  // The numeric codes cross the JNI boundary and are mirrored by
  // io.lethe.engine.StatusCode: never renumber them.
  enum class Code : int {
    kOk = 0,
    kNotFound = 1,
    kCorruption = 2,
    kNotSupported = 3,
    kInvalidArgument = 4,
    kIOError = 5,
    kBusy = 6,
    kAborted = 7,
    kNoSpace = 8,
  };

  Status() = default;

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kNotFound, msg, msg2);
  }
  static Status Corruption(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kCorruption, msg, msg2);
  }
  static Status NotSupported(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kNotSupported, msg, msg2);
  }
  static Status InvalidArgument(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kInvalidArgument, msg, msg2);
  }
  static Status IOError(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kIOError, msg, msg2);
  }
  static Status Busy(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kBusy, msg, msg2);
  }
  static Status Aborted(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kAborted, msg, msg2);
  }
  static Status NoSpace(std::string_view msg, std::string_view msg2 = {}) {
    return Status(Code::kNoSpace, msg, msg2);
  }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  bool IsAborted() const { return code_ == Code::kAborted; }
  bool IsNoSpace() const { return code_ == Code::kNoSpace; }

  Code code() const { return code_; }
  const std::string& message() const { return msg_; }

  // "OK" or "<Code name>: <message>".
  std::string ToString() const;

 private:
  Status(Code code, std::string_view msg, std::string_view msg2);

  Code code_ = Code::kOk;
  std::string msg_;
};

}  // namespace lethe
