#include "core/base/status.h"

namespace sluice {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kOk: return "Ok";
    case Code::kNotFound: return "NotFound";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kNoSpace: return "NoSpace";
    case Code::kCorruption: return "Corruption";
    case Code::kIoError: return "IoError";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kClosed: return "Closed";
    case Code::kConnectionReset: return "ConnectionReset";
    case Code::kConnectionRefused: return "ConnectionRefused";
    case Code::kTimedOut: return "TimedOut";
    case Code::kAddressInUse: return "AddressInUse";
    case Code::kNotSupported: return "NotSupported";
  }
  return "Unknown";
}

std::string Status::to_string() const {
  if (ok()) return "Ok";
  std::string out(code_name(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

}  // namespace sluice
