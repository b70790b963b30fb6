// libFuzzer target: one input is one request frame's payload (the bytes after the size prefix).
//
// It decodes the request header and, for an API the broker serves at that version, the matching request struct;
// whatever decodes is encoded again and decoded again, and the two encodings must be equal (round-trip
// stability). Every decode must return a value or an error: a crash, a sanitizer report, a hang (-timeout) or a
// large allocation (-malloc_limit_mb) is a finding. (read_frame's bounds are unit-tested: read_frame_test.cc.)
//
// The request structs come from fuzz_requests.h, which ci/fuzz.sh generates from core/protocol/messages/*.h (every
// top-level `struct <Name>Request`), so a new message is fuzzed without touching this file.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/protocol/header.h"
#include "core/protocol/message.h"
#include "fuzz_requests.h"  // generated: SLUICE_FUZZ_REQUESTS(X) and the message headers

namespace sluice::protocol {
namespace {

[[noreturn]] void fail(const char* what, ApiKey key, int16_t version, const Status& status) {
  std::fprintf(stderr, "request_fuzzer: %s (%.*s v%d): %s\n", what, static_cast<int>(api_name(key).size()),
               api_name(key).data(), version, status.to_string().c_str());
  std::abort();
}

// decode → encode → decode → encode; the two encodings must be identical.
template <ApiMessage T>
void round_trip(ByteView body, int16_t version) {
  Result<T> first = decode_message<T>(body, version);
  if (!first.ok()) return;  // refusing is fine; crashing is not
  Bytes once;
  if (Status s = encode_message(*first, version, &once); !s.ok()) {
    fail("a decoded request does not encode", T::kApiKey, version, s);
  }
  Result<T> second = decode_message<T>(once, version);
  if (!second.ok()) fail("a re-encoded request does not decode", T::kApiKey, version, second.status());
  Bytes twice;
  if (Status s = encode_message(*second, version, &twice); !s.ok()) {
    fail("the second encode failed", T::kApiKey, version, s);
  }
  if (once != twice) {
    fail("the encoding is not stable", T::kApiKey, version,
         invalid_argument(std::to_string(once.size()) + " bytes, then " + std::to_string(twice.size())));
  }
}

void decode_body(ApiKey key, int16_t version, ByteView body) {
#define SLUICE_FUZZ_DISPATCH(Type) \
  if (key == Type::kApiKey) return round_trip<Type>(body, version);
  SLUICE_FUZZ_REQUESTS(SLUICE_FUZZ_DISPATCH)
#undef SLUICE_FUZZ_DISPATCH
}

void fuzz_header_and_body(ByteView frame) {
  ByteView body;
  Result<RequestHeader> header = decode_request_header(frame, &body);
  if (!header.ok()) return;
  Bytes encoded;
  if (Status s = encode_request_header(*header, &encoded); !s.ok()) {
    fail("a decoded header does not encode", header->api_key, header->api_version, s);
  }
  ByteView rest;
  Result<RequestHeader> again = decode_request_header(encoded, &rest);
  if (!again.ok()) fail("a re-encoded header does not decode", header->api_key, header->api_version, again.status());
  if (!(*again == *header) || !rest.empty()) {
    fail("the header does not round-trip", header->api_key, header->api_version, Status());
  }
  if (is_supported(header->api_key, header->api_version)) decode_body(header->api_key, header->api_version, body);
}

}  // namespace
}  // namespace sluice::protocol

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Served APIs whose request struct does not exist (yet) are not fuzzed beyond their header: say which.
  using namespace sluice::protocol;
  for (const ApiInfo& api : all_apis()) {
    bool covered = false;
#define SLUICE_FUZZ_COVERED(Type) covered = covered || Type::kApiKey == api.key;
    SLUICE_FUZZ_REQUESTS(SLUICE_FUZZ_COVERED)
#undef SLUICE_FUZZ_COVERED
    if (!covered) {
      std::fprintf(stderr, "request_fuzzer: no request struct for %.*s yet: only its header is fuzzed\n",
                   static_cast<int>(api.name.size()), api.name.data());
    }
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const sluice::ByteView input(data, size);
  sluice::protocol::fuzz_header_and_body(input);
  return 0;
}
