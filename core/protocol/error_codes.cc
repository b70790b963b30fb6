#include "core/protocol/error_codes.h"

#include <string>

namespace sluice {
namespace {

// "kOffsetOutOfRange" → "OFFSET_OUT_OF_RANGE", computed once per code.
std::string screaming_snake(std::string_view camel) {
  std::string out;
  for (size_t i = 1; i < camel.size(); ++i) {  // skip the leading 'k'
    const char c = camel[i];
    if (c >= 'A' && c <= 'Z') {
      if (!out.empty()) out += '_';
      out += c;
    } else {
      out += static_cast<char>(c - 'a' + 'A');
    }
  }
  return out;
}

}  // namespace

std::string_view error_name(ErrorCode code) {
  switch (code) {
#define SLUICE_KAFKA_ERROR_NAME(name, number, retriable, message) \
  case ErrorCode::name: {                                          \
    static const std::string text = screaming_snake(#name);        \
    return text;                                                   \
  }
    SLUICE_KAFKA_ERRORS(SLUICE_KAFKA_ERROR_NAME)
#undef SLUICE_KAFKA_ERROR_NAME
  }
  return "UNKNOWN";
}

std::string_view error_message(ErrorCode code) {
  switch (code) {
#define SLUICE_KAFKA_ERROR_MESSAGE(name, number, retriable, message) \
  case ErrorCode::name:                                               \
    return message;
    SLUICE_KAFKA_ERRORS(SLUICE_KAFKA_ERROR_MESSAGE)
#undef SLUICE_KAFKA_ERROR_MESSAGE
  }
  return "";
}

bool error_retriable(ErrorCode code) {
  switch (code) {
#define SLUICE_KAFKA_ERROR_RETRIABLE(name, number, retriable, message) \
  case ErrorCode::name:                                                 \
    return retriable;
    SLUICE_KAFKA_ERRORS(SLUICE_KAFKA_ERROR_RETRIABLE)
#undef SLUICE_KAFKA_ERROR_RETRIABLE
  }
  return false;
}

Status kafka_error(ErrorCode error, std::string message) {
  Code kind = Code::kInvalidArgument;
  if (error == ErrorCode::kKafkaStorageError) kind = Code::kIoError;
  if (error == ErrorCode::kCorruptMessage) kind = Code::kCorruption;
  if (error == ErrorCode::kOffsetOutOfRange || error == ErrorCode::kUnknownTopicOrPartition) kind = Code::kNotFound;
  return Status(kind, std::move(message), static_cast<int16_t>(error));
}

ErrorCode to_error_code(const Status& status) {
  if (status.ok()) return ErrorCode::kNone;
  if (status.protocol_error() != 0) return static_cast<ErrorCode>(status.protocol_error());
  switch (status.code()) {
    case Code::kNoSpace:
    case Code::kIoError: return ErrorCode::kKafkaStorageError;
    case Code::kCorruption: return ErrorCode::kCorruptMessage;
    case Code::kNotFound: return ErrorCode::kUnknownTopicOrPartition;
    default: return ErrorCode::kUnknownServerError;
  }
}

}  // namespace sluice
