#include "sim/selftest/echo_service.h"

#include <map>

#include "core/base/assert.h"

namespace sluice {

struct EchoService::Shared {
  Shared(Env e, Journal* j) : env(e), journal(j) {}
  Env env;
  Journal* journal;
  std::unique_ptr<Listener> listener;
  std::map<uint64_t, Stream*> connections;  // open connections, so that stop() can close them
  uint64_t next_connection = 1;
  uint64_t served = 0;
  bool stopped = false;
};

namespace {

void serve_connection(const std::shared_ptr<EchoService::Shared>& shared, std::shared_ptr<Stream> stream,
                      uint64_t id);

}  // namespace

EchoService::EchoService(Env env, Journal* journal) : shared_(std::make_shared<Shared>(env, journal)) {}

EchoService::~EchoService() { stop(); }

Result<Address> EchoService::start(const Address& address) {
  SLUICE_ASSERT(shared_->listener == nullptr);
  SLUICE_ASSIGN_OR_RETURN(shared_->listener, shared_->env.net.listen(address));
  const Address bound = shared_->listener->address();
  shared_->env.log.info("echo service listening on {}", bound.to_string());
  shared_->env.scheduler.spawn("echo.accept", [shared = shared_] {
    for (;;) {
      Result<std::unique_ptr<Stream>> accepted = shared->listener->accept();
      if (!accepted.ok()) {
        if (!shared->stopped) shared->env.log.warn("echo accept failed: {}", accepted.status().to_string());
        return;
      }
      const uint64_t id = shared->next_connection++;
      shared->env.log.debug("echo accepted {} from {}", id, (*accepted)->peer().to_string());
      std::shared_ptr<Stream> stream = std::move(*accepted);
      shared->env.scheduler.spawn("echo.conn", [shared, stream, id] { serve_connection(shared, stream, id); });
    }
  });
  return bound;
}

void EchoService::stop() {
  if (shared_->stopped) return;
  shared_->stopped = true;
  if (shared_->listener) shared_->listener->close();
  for (auto& [id, stream] : shared_->connections) stream->close();
}

uint64_t EchoService::messages_served() const { return shared_->served; }

namespace {

void serve_connection(const std::shared_ptr<EchoService::Shared>& shared, std::shared_ptr<Stream> stream,
                      uint64_t id) {
  shared->connections.emplace(id, stream.get());
  struct Forget {
    EchoService::Shared& shared;
    uint64_t id;
    ~Forget() { shared.connections.erase(id); }
  } forget{*shared, id};
  if (shared->stopped) return;
  for (;;) {
    Result<Bytes> message = EchoService::read_frame(*stream);
    if (!message.ok()) return;  // end of stream, reset or stop: the client retries elsewhere
    if (shared->journal != nullptr) {
      Status persisted = shared->journal->append(*message);
      if (persisted.ok()) persisted = shared->journal->sync();
      if (!persisted.ok()) {
        // Never acknowledge what is not durable: drop the connection instead.
        shared->env.log.warn("echo journal failed: {}", persisted.to_string());
        stream->close();
        return;
      }
    }
    ++shared->served;
    if (!EchoService::write_frame(*stream, *message).ok()) return;
  }
}

}  // namespace

Status EchoService::write_frame(Stream& stream, ByteView message) {
  SLUICE_ASSERT(message.size() <= kMaxMessageBytes);
  Bytes frame(4 + message.size());
  const uint32_t length = static_cast<uint32_t>(message.size());
  for (int i = 0; i < 4; ++i) frame[i] = static_cast<uint8_t>(length >> (8 * i));
  std::copy(message.begin(), message.end(), frame.begin() + 4);
  return stream.write_all(frame);
}

Result<Bytes> EchoService::read_frame(Stream& stream) {
  uint8_t header[4];
  SLUICE_TRY(read_exact(stream, MutableByteView(header)));
  uint32_t length = 0;
  for (int i = 0; i < 4; ++i) length |= static_cast<uint32_t>(header[i]) << (8 * i);
  if (length > kMaxMessageBytes) return corruption("echo frame of " + std::to_string(length) + " bytes");
  Bytes message(length);
  SLUICE_TRY(read_exact(stream, message));
  return message;
}

Result<Bytes> EchoService::call(Stream& stream, ByteView message) {
  SLUICE_TRY(write_frame(stream, message));
  return read_frame(stream);
}

}  // namespace sluice
