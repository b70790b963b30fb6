#include "core/env/network.h"

#include <charconv>

#include "core/base/assert.h"

namespace sluice {

std::string Address::to_string() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<Address> parse_address(std::string_view text) {
  std::string_view host;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return invalid_argument("address '" + std::string(text) + "': expected [v6-host]:port");
    }
    host = text.substr(1, close - 1);
    port_text = text.substr(close + 2);
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) {
      return invalid_argument("address '" + std::string(text) + "': expected host:port");
    }
    host = text.substr(0, colon);
    port_text = text.substr(colon + 1);
  }
  if (host.empty()) return invalid_argument("address '" + std::string(text) + "': empty host");
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port > 65535 || port_text.empty()) {
    return invalid_argument("address '" + std::string(text) + "': port must be 0-65535");
  }
  return Address{std::string(host), static_cast<uint16_t>(port)};
}

Status read_exact(Stream& stream, MutableByteView out) {
  size_t done = 0;
  while (done < out.size()) {
    Result<size_t> n = stream.read_some(out.subspan(done));
    if (!n.ok()) return std::move(n).take_status();
    if (*n == 0) return connection_reset("stream ended after " + std::to_string(done) + " of " +
                                         std::to_string(out.size()) + " bytes");
    done += *n;
  }
  return Status();
}

Status Stream::write_all_gathered(std::span<const ByteView> parts) { return write_all(concat(parts)); }

Status Stream::write_owned(Bytes frame, size_t from) {
  SLUICE_ASSERT(from <= frame.size());
  return write_all(ByteView(frame).subspan(from));
}

}  // namespace sluice
