// Status: an error code plus an optional message. Errors are values on the seam, in storage and in the
// protocol; programmer errors are assertions instead (see assert.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace sluice {

// Disk and network errors carry a kind so that callers (storage, protocol) can map them to Kafka error codes
// without parsing strings (RocksDB's IOStatus lesson).
enum class Code : uint8_t {
  kOk = 0,
  kNotFound,           // file, directory or peer does not exist
  kAlreadyExists,      // exclusive create of an existing file or directory
  kNoSpace,            // ENOSPC, or a configured usage threshold
  kCorruption,         // data on disk or on the wire failed validation
  kIoError,            // the device or the OS failed the operation
  kInvalidArgument,    // the caller asked for something impossible
  kClosed,             // the stream, listener or file was closed locally
  kConnectionReset,    // the peer reset the connection
  kConnectionRefused,  // nobody listens there, or the network is partitioned
  kTimedOut,           // a deadline passed
  kAddressInUse,       // listen on an address that is taken
  kNotSupported,
};

std::string_view code_name(Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // ok
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  // `protocol_error`: the Kafka error code the client should see (core/protocol/error_codes.h); 0 = none.
  Status(Code code, std::string message, int16_t protocol_error)
      : code_(code), protocol_error_(protocol_error), message_(std::move(message)) {}

  static Status ok_status() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  int16_t protocol_error() const { return protocol_error_; }
  const std::string& message() const { return message_; }

  // "NoSpace: segment 00000000000000000042.log: disk full"
  std::string to_string() const;

  bool operator==(const Status& other) const { return code_ == other.code_; }

  // Marks an error as deliberately dropped (for example while already failing).
  void ignore() const {}

 private:
  Code code_ = Code::kOk;
  int16_t protocol_error_ = 0;
  std::string message_;
};

inline Status not_found(std::string m) { return Status(Code::kNotFound, std::move(m)); }
inline Status already_exists(std::string m) { return Status(Code::kAlreadyExists, std::move(m)); }
inline Status no_space(std::string m) { return Status(Code::kNoSpace, std::move(m)); }
inline Status corruption(std::string m) { return Status(Code::kCorruption, std::move(m)); }
inline Status io_error(std::string m) { return Status(Code::kIoError, std::move(m)); }
inline Status invalid_argument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
inline Status closed(std::string m) { return Status(Code::kClosed, std::move(m)); }
inline Status connection_reset(std::string m) { return Status(Code::kConnectionReset, std::move(m)); }
inline Status connection_refused(std::string m) { return Status(Code::kConnectionRefused, std::move(m)); }
inline Status timed_out(std::string m) { return Status(Code::kTimedOut, std::move(m)); }

}  // namespace sluice

// Returns the Status of `expr` from the enclosing function when it is an error.
#define SLUICE_TRY(expr)                                 \
  do {                                                   \
    ::sluice::Status sluice_try_status_ = (expr);        \
    if (!sluice_try_status_.ok()) return sluice_try_status_; \
  } while (0)
