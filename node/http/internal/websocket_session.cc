// A WebSocket subscriber of the EventHub
// (node/http/internal/websocket_session.h).
#include "node/http/internal/websocket_session.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"

namespace rnode::node::http::internal {
namespace {

// Largest message a WebSocket client may send. The server ignores what
// clients send; the bound only stops one from making it buffer much.
constexpr size_t kMaxWebSocketMessageBytes = 64u << 10;

// A close reason travels in a control frame: 125 bytes of payload, two of
// them the code (RFC 6455 5.5).
constexpr size_t kMaxCloseReasonBytes = 123;

}  // namespace

WebSocketSession::WebSocketSession(
    ServerCore* server, tcp::socket socket, ConnectionSlot slot,
    std::unique_ptr<EventSubscription> subscription)
    : Session(socket.get_executor()),
      server_(server),
      ws_(std::move(socket)),
      subscription_(std::move(subscription)),
      close_timer_(ws_.get_executor()),
      slot_(std::move(slot)) {}

WebSocketSession::~WebSocketSession() {
  if (accepted_) server_->CountWebSocket(-1);
  server_->RemoveSession(this);
}

void WebSocketSession::Run(BeastRequest request) {
  if (!server_->AddSession(shared_from_this())) {
    Abort();
    return;
  }
  beast::get_lowest_layer(ws_).expires_never();
  websocket::stream_base::timeout timeout;
  timeout.handshake_timeout = server_->options().read_timeout;
  timeout.idle_timeout = server_->options().idle_timeout;
  timeout.keep_alive_pings = true;
  ws_.set_option(timeout);
  ws_.read_message_max(kMaxWebSocketMessageBytes);
  ws_.text(true);
  // One frame per event, written at once (Beast would split a message
  // into write_buffer_bytes frames, each its own write).
  ws_.auto_fragment(false);
  ws_.async_accept(request, [self = Self<WebSocketSession>()](
                                beast::error_code ec) { self->OnAccept(ec); });
}

void WebSocketSession::Pump() {
  if (!accepted_ || closing_ || aborted_) return;
  if (writing_ == nullptr) {
    writing_ = subscription_->TryPop();
    if (writing_ != nullptr) {
      ws_.async_write(net::buffer(*writing_),
                      [self = Self<WebSocketSession>()](
                          beast::error_code ec, size_t) { self->OnWrite(ec); });
      return;
    }
  }
  // Nothing to write now, or a write is pending: Beast sends a close frame
  // after the pending write.
  absl::Status status = subscription_->status();
  if (!status.ok()) {
    const auto code = absl::IsResourceExhausted(status)
                          ? websocket::close_code::policy_error
                          : websocket::close_code::going_away;
    StartClose(code, std::string(status.message()));
  }
}

void WebSocketSession::Shutdown() {
  if (!accepted_) {
    Abort();
  } else {
    StartClose(websocket::close_code::going_away, "server stopping");
  }
}

void WebSocketSession::OnAccept(beast::error_code ec) {
  if (ec || aborted_) {
    Abort();
    return;
  }
  accepted_ = true;
  server_->CountWebSocket(1);
  Read();
  Pump();
}

void WebSocketSession::Read() {
  ws_.async_read(read_buffer_,
                 [self = Self<WebSocketSession>()](
                     beast::error_code ec, size_t) { self->OnRead(ec); });
}

void WebSocketSession::OnRead(beast::error_code ec) {
  if (ec) {
    // The peer closed (Beast has answered its close frame) or the
    // connection failed. During our own close the close operation ends
    // the connection (or the close timer does).
    if (!closing_) Abort();
    return;
  }
  read_buffer_.consume(read_buffer_.size());
  Read();
}

void WebSocketSession::OnWrite(beast::error_code ec) {
  writing_ = nullptr;
  if (ec) {
    Abort();
    return;
  }
  Pump();
}

void WebSocketSession::StartClose(websocket::close_code code,
                                  std::string_view reason) {
  if (closing_ || aborted_) return;
  closing_ = true;
  close_timer_.expires_after(kWebSocketCloseTimeout);
  close_timer_.async_wait(
      [self = Self<WebSocketSession>()](beast::error_code ec) {
        if (!ec) self->Abort();
      });
  websocket::close_reason close(code);
  close.reason.assign(reason.data(),
                      std::min(reason.size(), kMaxCloseReasonBytes));
  ws_.async_close(close, [self = Self<WebSocketSession>()](beast::error_code) {
    self->close_timer_.cancel();
    self->slot_.Release();
  });
}

void WebSocketSession::Abort() {
  if (aborted_) return;
  aborted_ = true;
  close_timer_.cancel();
  beast::error_code ignored;
  beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both,
                                                 ignored);
  beast::get_lowest_layer(ws_).close();
  slot_.Release();
}

}  // namespace rnode::node::http::internal
