// A WebSocket subscriber of the EventHub (the server's /ws/events): what an
// HTTP session hands its socket to after an upgrade.
#ifndef RNODE_NODE_HTTP_INTERNAL_WEBSOCKET_SESSION_H_
#define RNODE_NODE_HTTP_INTERNAL_WEBSOCKET_SESSION_H_

#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include "node/http/event_hub.h"
#include "node/http/internal/messages.h"
#include "node/http/internal/server_core.h"

namespace rnode::node::http::internal {

namespace websocket = boost::beast::websocket;

// Writes its events one at a time, reads and drops what the client sends,
// closes when the hub closes the subscription. All members are used on the
// connection's strand only.
class WebSocketSession final : public Session {
 public:
  // `server` (not owned) outlives the session.
  WebSocketSession(ServerCore* server, tcp::socket socket, ConnectionSlot slot,
                   std::unique_ptr<EventSubscription> subscription);
  ~WebSocketSession() override;

  // Registers with the server and accepts the upgrade `request` (closing
  // the socket when the server is stopping). REQUIRES: on the strand.
  void Run(BeastRequest request);

  // Writes what the subscription has, or closes the stream when it is
  // closed. REQUIRES: on the strand.
  void Pump();

 protected:
  void Shutdown() override;

 private:
  void OnAccept(beast::error_code ec);
  void Read();
  void OnRead(beast::error_code ec);
  void OnWrite(beast::error_code ec);
  // Sends a close frame with `code` and `reason`; the socket is closed when
  // the client answers or after kWebSocketCloseTimeout.
  void StartClose(websocket::close_code code, std::string_view reason);
  // Closes the socket now.
  void Abort();

  ServerCore* const server_;
  websocket::stream<beast::tcp_stream> ws_;
  beast::flat_buffer read_buffer_;
  const std::unique_ptr<EventSubscription> subscription_;
  // The event being written (the buffer must live until the write ends).
  std::shared_ptr<const std::string> writing_;
  net::steady_timer close_timer_;
  ConnectionSlot slot_;
  bool accepted_ = false;
  bool closing_ = false;
  bool aborted_ = false;
};

}  // namespace rnode::node::http::internal

#endif  // RNODE_NODE_HTTP_INTERNAL_WEBSOCKET_SESSION_H_
