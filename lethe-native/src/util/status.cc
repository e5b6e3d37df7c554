#include "lethe/status.h"

namespace lethe {

Status::Status(Code code, std::string_view msg, std::string_view msg2) : code_(code), msg_(msg) {
  if (!msg2.empty()) {
    msg_.append(": ");
    msg_.append(msg2);
  }
}

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kNotFound: name = "NotFound"; break;
    case Code::kCorruption: name = "Corruption"; break;
    case Code::kNotSupported: name = "NotSupported"; break;
    case Code::kInvalidArgument: name = "InvalidArgument"; break;
    case Code::kIOError: name = "IOError"; break;
    case Code::kBusy: name = "Busy"; break;
    case Code::kAborted: name = "Aborted"; break;
    case Code::kNoSpace: name = "NoSpace"; break;
  }
  std::string result(name);
  result.append(": ");
  result.append(msg_);
  return result;
}

}  // namespace lethe
