// EventsClient: a blocking Boost.Beast WebSocket reader on its own thread,
// and the JSON parsing of the node's events.
#include "integration/loadgen/events_client.h"

#include <sys/socket.h>

#include <algorithm>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace rnode::loadgen {
namespace {

namespace beast = boost::beast;
namespace websocket = boost::beast::websocket;
namespace net = boost::asio;
using json = nlohmann::json;
using tcp = net::ip::tcp;

absl::Status Malformed(std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("malformed event: ", std::string(what)));
}

// Reads payload[key] into `out` when present; InvalidArgument when present
// with another type, or missing and `required`.
absl::Status ReadString(const json& object, const char* key, bool required,
                        std::string& out) {
  auto it = object.find(key);
  if (it == object.end()) {
    return required ? Malformed(absl::StrCat("no \"", key, "\""))
                    : absl::OkStatus();
  }
  if (!it->is_string()) {
    return Malformed(absl::StrCat("\"", key, "\" is not a string"));
  }
  out = it->get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadInt(const json& object, const char* key, bool required,
                     int64_t& out) {
  auto it = object.find(key);
  if (it == object.end()) {
    return required ? Malformed(absl::StrCat("no \"", key, "\""))
                    : absl::OkStatus();
  }
  if (!it->is_number_integer()) {
    return Malformed(absl::StrCat("\"", key, "\" is not an integer"));
  }
  out = it->get<int64_t>();
  return absl::OkStatus();
}

absl::Status ReadDeploy(const json& item, EventDeploy& deploy) {
  if (!item.is_object()) return Malformed("a deploy is not an object");
  RETURN_IF_ERROR(ReadString(item, "id", true, deploy.id));
  RETURN_IF_ERROR(ReadInt(item, "cost", false, deploy.cost));
  RETURN_IF_ERROR(ReadString(item, "deployer", false, deploy.deployer));
  if (auto it = item.find("errored"); it != item.end()) {
    if (!it->is_boolean()) return Malformed("\"errored\" is not a boolean");
    deploy.errored = it->get<bool>();
  }
  if (auto it = item.find("rejected"); it != item.end()) {
    if (!it->is_boolean()) return Malformed("\"rejected\" is not a boolean");
    deploy.rejected = it->get<bool>();
  }
  return absl::OkStatus();
}

absl::Status ReadBlock(const json& payload, BlockPayload& block) {
  if (!payload.is_object()) return Malformed("\"payload\" is not an object");
  RETURN_IF_ERROR(ReadString(payload, "block-hash", true, block.block_hash));
  RETURN_IF_ERROR(ReadInt(payload, "block-number", true, block.number));
  RETURN_IF_ERROR(ReadInt(payload, "timestamp", false, block.timestamp));
  RETURN_IF_ERROR(ReadInt(payload, "seq-num", false, block.seq_num));
  RETURN_IF_ERROR(ReadString(payload, "creator", false, block.creator));
  if (auto it = payload.find("parent-hashes"); it != payload.end()) {
    if (!it->is_array()) return Malformed("\"parent-hashes\" is not an array");
    for (const json& parent : *it) {
      if (!parent.is_string())
        return Malformed("a parent hash is not a string");
      block.parent_hashes.push_back(parent.get<std::string>());
    }
  }
  if (auto rejected = payload.find("rejected-deploys");
      rejected != payload.end()) {
    if (!rejected->is_array()) {
      return Malformed("\"rejected-deploys\" is not an array");
    }
    for (const json& id : *rejected) {
      if (!id.is_string())
        return Malformed("a rejected deploy is not a string");
      block.rejected_deploys.push_back(id.get<std::string>());
    }
  }
  auto deploys = payload.find("deploys");
  if (deploys == payload.end()) return Malformed("no \"deploys\"");
  if (!deploys->is_array()) return Malformed("\"deploys\" is not an array");
  block.deploys.reserve(deploys->size());
  for (const json& item : *deploys) {
    EventDeploy deploy;
    RETURN_IF_ERROR(ReadDeploy(item, deploy));
    block.deploys.push_back(std::move(deploy));
  }
  return absl::OkStatus();
}

EventKind KindOf(std::string_view name) {
  if (name == "started") return EventKind::kStarted;
  if (name == "block-created") return EventKind::kBlockCreated;
  if (name == "block-added") return EventKind::kBlockAdded;
  if (name == "block-finalised") return EventKind::kBlockFinalised;
  if (name == "deploy-rejected") return EventKind::kDeployRejected;
  if (name == "deploy-reproposed") return EventKind::kDeployReproposed;
  return EventKind::kOther;
}

}  // namespace

absl::StatusOr<Event> ParseEvent(std::string_view text) {
  const json doc = json::parse(text.begin(), text.end(), nullptr,
                               /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Malformed("not JSON");
  if (!doc.is_object()) return Malformed("not a JSON object");
  Event event;
  RETURN_IF_ERROR(ReadString(doc, "event", true, event.name));
  int64_t version = 0;
  RETURN_IF_ERROR(ReadInt(doc, "schema-version", true, version));
  if (version != kEventSchemaVersion) {
    return Malformed(absl::StrCat("schema-version ", version, ", expected ",
                                  kEventSchemaVersion));
  }
  event.kind = KindOf(event.name);
  switch (event.kind) {
    case EventKind::kBlockCreated:
    case EventKind::kBlockAdded:
    case EventKind::kBlockFinalised: {
      auto payload = doc.find("payload");
      if (payload == doc.end()) return Malformed("no \"payload\"");
      RETURN_IF_ERROR(ReadBlock(*payload, event.block));
      break;
    }
    case EventKind::kDeployRejected:
    case EventKind::kDeployReproposed: {
      auto payload = doc.find("payload");
      if (payload == doc.end()) return Malformed("no \"payload\"");
      if (!payload->is_object()) {
        return Malformed("\"payload\" is not an object");
      }
      RETURN_IF_ERROR(ReadString(*payload, "deploy-id", true, event.deploy_id));
      RETURN_IF_ERROR(
          ReadString(*payload, "block-hash", true, event.block.block_hash));
      RETURN_IF_ERROR(
          ReadInt(*payload, "block-number", true, event.block.number));
      break;
    }
    case EventKind::kStarted:
    case EventKind::kOther:
      break;
  }
  return event;
}

EventsClient::EventsClient(EventsClientOptions options,
                           EventCallbacks callbacks, RunClock clock)
    : options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      clock_(clock) {}

absl::StatusOr<std::unique_ptr<EventsClient>> EventsClient::Start(
    EventsClientOptions options, EventCallbacks callbacks, RunClock clock) {
  std::unique_ptr<EventsClient> client(
      new EventsClient(std::move(options), std::move(callbacks), clock));
  client->thread_ = std::thread(&EventsClient::Run, client.get());
  const auto deadline =
      std::chrono::steady_clock::now() + client->options_.connect_timeout;
  absl::Status failure;
  {
    MutexLock lock(&client->mu_);
    while (client->state_ == State::kConnecting) {
      if (client->state_changed_.WaitUntil(&client->mu_, deadline)) break;
    }
    // Once started, a stream that ended since reports it through status().
    if (!client->started_ && client->state_ == State::kEnded) {
      failure = client->status_;
    } else if (!client->started_) {
      failure = absl::DeadlineExceededError(
          absl::StrCat("no \"started\" event from ", client->options_.host, ":",
                       client->options_.port, client->options_.path, " within ",
                       client->options_.connect_timeout.count(), " ms"));
    }
  }
  if (!failure.ok()) {
    client->Stop();
    return failure;
  }
  return client;
}

EventsClient::~EventsClient() { Stop(); }

void EventsClient::Stop() {
  {
    MutexLock lock(&mu_);
    stop_requested_ = true;
    // Wakes a read blocked on the socket: it returns end-of-stream.
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  }
  if (thread_.joinable()) thread_.join();
}

absl::Status EventsClient::status() const {
  MutexLock lock(&mu_);
  return status_;
}

EventCounts EventsClient::Counts() const {
  MutexLock lock(&mu_);
  return counts_;
}

bool EventsClient::AwaitEnd(std::chrono::steady_clock::time_point deadline) {
  MutexLock lock(&mu_);
  while (state_ != State::kEnded) {
    if (state_changed_.WaitUntil(&mu_, deadline)) break;
  }
  return state_ == State::kEnded;
}

bool EventsClient::Publish(int fd) {
  MutexLock lock(&mu_);
  if (stop_requested_) return false;
  fd_ = fd;
  return true;
}

void EventsClient::Withdraw() {
  MutexLock lock(&mu_);
  fd_ = -1;
}

void EventsClient::End(absl::Status status) {
  MutexLock lock(&mu_);
  if (stop_requested_) {
    status = absl::CancelledError("event stream stopped");
  }
  if (status_.ok()) status_ = std::move(status);
  state_ = State::kEnded;
  state_changed_.SignalAll();
}

void EventsClient::Run() {
  net::io_context io;
  websocket::stream<tcp::socket> ws(io);
  beast::error_code ec;
  const std::string where =
      absl::StrCat(options_.host, ":", options_.port, options_.path);
  const net::ip::address address = net::ip::make_address(options_.host, ec);
  if (ec) {
    End(absl::InvalidArgumentError(
        absl::StrCat("bad events host ", options_.host, ": ", ec.message())));
    return;
  }
  ws.next_layer().connect(tcp::endpoint(address, options_.port), ec);
  if (ec) {
    End(absl::UnavailableError(
        absl::StrCat("cannot connect to ", where, ": ", ec.message())));
    return;
  }
  if (!Publish(ws.next_layer().native_handle())) {
    Withdraw();
    End(absl::CancelledError("event stream stopped"));
    return;
  }
  ws.read_message_max(kMaxEventBytes);
  ws.handshake(absl::StrCat(options_.host, ":", options_.port), options_.path,
               ec);
  beast::flat_buffer buffer;
  if (!ec) ws.read(buffer, ec);
  if (ec) {
    Withdraw();
    End(absl::UnavailableError(
        absl::StrCat("event stream ", where, ": ", ec.message())));
    return;
  }
  absl::StatusOr<Event> first =
      ParseEvent(beast::buffers_to_string(buffer.data()));
  if (!first.ok() || first->kind != EventKind::kStarted) {
    Withdraw();
    End(absl::FailedPreconditionError(
        absl::StrCat("event stream ", where,
                     ": the first message is not the \"started\" event")));
    return;
  }
  {
    MutexLock lock(&mu_);
    state_ = State::kRunning;
    started_ = true;
    state_changed_.SignalAll();
  }
  while (true) {
    buffer.clear();
    ws.read(buffer, ec);
    if (ec) break;
    Handle(beast::buffers_to_string(buffer.data()), clock_.Now());
  }
  std::string why = ec.message();
  if (ec == websocket::error::closed) {
    why = absl::StrCat(
        "closed by the node (code ", ws.reason().code, ": ",
        std::string(ws.reason().reason.data(), ws.reason().reason.size()), ")");
  }
  Withdraw();
  beast::error_code ignored;
  ws.next_layer().close(ignored);
  End(absl::UnavailableError(absl::StrCat("event stream ", where, ": ", why)));
}

void EventsClient::Handle(std::string_view text, double t) {
  absl::StatusOr<Event> event = ParseEvent(text);
  {
    MutexLock lock(&mu_);
    if (!event.ok()) {
      ++counts_.parse_errors;
      return;
    }
    switch (event->kind) {
      case EventKind::kBlockAdded:
        ++counts_.blocks_added;
        if (event->block.deploys.empty()) ++counts_.empty_blocks_added;
        counts_.latest_block_number =
            std::max(counts_.latest_block_number, event->block.number);
        break;
      case EventKind::kBlockCreated:
        ++counts_.blocks_created;
        counts_.latest_block_number =
            std::max(counts_.latest_block_number, event->block.number);
        break;
      case EventKind::kBlockFinalised:
        ++counts_.blocks_finalised;
        break;
      case EventKind::kDeployRejected:
        ++counts_.deploys_rejected;
        break;
      case EventKind::kDeployReproposed:
        ++counts_.deploys_reproposed;
        break;
      case EventKind::kStarted:
      case EventKind::kOther:
        ++counts_.other_events;
        break;
    }
  }
  if (event->kind == EventKind::kBlockAdded && callbacks_.on_added) {
    callbacks_.on_added(event->block, t);
  } else if (event->kind == EventKind::kBlockFinalised &&
             callbacks_.on_finalised) {
    callbacks_.on_finalised(event->block, t);
  } else if (event->kind == EventKind::kDeployRejected &&
             callbacks_.on_rejected) {
    callbacks_.on_rejected(event->deploy_id, event->block.number, t);
  } else if (event->kind == EventKind::kDeployReproposed &&
             callbacks_.on_reproposed) {
    callbacks_.on_reproposed(event->deploy_id, event->block.number, t);
  }
}

}  // namespace rnode::loadgen
