// gantry-stream-controller: the controller's end of the agent stream, and
// nothing else, driven by a test, so that a real gantry-agent can be sent
// exactly the ControllerMessages a test wants (a dataset prefetch, an
// eviction) and everything it answers can be read back, without a gantryd
// that would decide by itself what to send. For
// tests/integration/test_dataset_cache_requests.py.
//
//   gantry-stream-controller TARGET HEARTBEAT_MS
//
// Listens on TARGET (unix:PATH, or HOST:PORT) and prints one JSON line
// {"listening": TARGET} once it does. Each agent stream that opens gets
// Registered{heartbeat_interval_ms: HEARTBEAT_MS} in answer to its first
// message. Every AgentMessage an agent sends is printed as one JSON line
// (protobuf's JSON form, field names as in the .proto). Each line of
// standard input is a ControllerMessage in protobuf text format, written to
// the stream opened last; {"sent": true} or {"error": "..."} is printed for
// it. End of input stops the server; exit 0. Credentials are not checked.
//
// Thread-safe: gRPC's threads serve the streams, the main thread reads
// standard input; stdout and the current stream are under one mutex.
#include <chrono>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

#include <google/protobuf/text_format.h>
#include <google/protobuf/util/json_util.h>
#include <grpcpp/grpcpp.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "gantry/v1/agent.grpc.pb.h"

namespace {

using Stream = grpc::ServerReaderWriter<gantry::v1::ControllerMessage,
                                        gantry::v1::AgentMessage>;

// A JSON object line with one string field.
std::string Line(const std::string& key, const std::string& value) {
  std::string line = "{\"" + key + "\": \"";
  for (const char c : value) {
    if (c == '"' || c == '\\') {
      line += '\\';
      line += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      line += absl::StrFormat("\\u%04x", c);
    } else {
      line += c;
    }
  }
  return line + "\"}";
}

class StreamController final : public gantry::v1::AgentService::Service {
 public:
  explicit StreamController(uint32_t heartbeat_ms)
      : heartbeat_ms_(heartbeat_ms) {}

  grpc::Status Connect(grpc::ServerContext*, Stream* stream) override {
    gantry::v1::AgentMessage message;
    bool registered = false;
    while (stream->Read(&message)) {
      std::lock_guard lock(mutex_);
      Print(message);
      if (!registered) {
        registered = true;
        current_ = stream;
        gantry::v1::ControllerMessage answer;
        answer.mutable_registered()->set_heartbeat_interval_ms(heartbeat_ms_);
        stream->Write(answer);
      }
    }
    std::lock_guard lock(mutex_);
    if (current_ == stream) current_ = nullptr;
    std::cout << Line("stream", "ended") << std::endl;
    return grpc::Status::OK;
  }

  // Writes a text-format ControllerMessage to the current stream.
  void Send(const std::string& text) {
    gantry::v1::ControllerMessage message;
    std::lock_guard lock(mutex_);
    if (!google::protobuf::TextFormat::ParseFromString(text, &message)) {
      std::cout << Line("error", "not a ControllerMessage: " + text)
                << std::endl;
    } else if (current_ == nullptr) {
      std::cout << Line("error", "no agent stream") << std::endl;
    } else if (!current_->Write(message)) {
      std::cout << Line("error", "the stream is closed") << std::endl;
    } else {
      std::cout << "{\"sent\": true}" << std::endl;
    }
  }

 private:
  void Print(const gantry::v1::AgentMessage& message) {
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    std::string json;
    if (!google::protobuf::util::MessageToJsonString(message, &json, options)
             .ok()) {
      json = Line("error", "an AgentMessage JSON cannot express");
    }
    std::cout << json << std::endl;
  }

  const uint32_t heartbeat_ms_;
  std::mutex mutex_;
  Stream* current_ = nullptr;  // GUARDED_BY(mutex_)
};

}  // namespace

int main(int argc, char** argv) {
  uint32_t heartbeat_ms = 0;
  if (argc != 3 || !absl::SimpleAtoi(argv[2], &heartbeat_ms)) {
    std::cerr << "usage: gantry-stream-controller TARGET HEARTBEAT_MS\n";
    return 2;
  }
  StreamController service(heartbeat_ms);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(argv[1], grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::cerr << "gantry-stream-controller: cannot listen on " << argv[1]
              << "\n";
    return 1;
  }
  std::cout << Line("listening", argv[1]) << std::endl;
  std::string text;
  while (std::getline(std::cin, text)) {
    if (!text.empty()) service.Send(text);
  }
  server->Shutdown(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(500));
  return 0;
}
