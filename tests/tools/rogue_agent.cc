// gantry-rogue-agent: opens real agent streams to gantryd and misbehaves on
// them, for tests/integration/test_agent_guard.py.
//
//   gantry-rogue-agent TARGET NODE flood [ROUNDS]
//   gantry-rogue-agent TARGET NODE garbage KIND [JOB RANK]
//
// flood registers as NODE and sends heartbeats as fast as the stream takes
// them until gantryd ends it, ROUNDS times (default 1), a new stream each.
// garbage sends one kind of bad input on a stream:
//   bytes         bytes that are no AgentMessage, as the first message
//   no-register   a heartbeat first
//   empty         after registering, a message of no kind
//   rename        after registering, a registration as another node
//   absurd        a registration with an absurd inventory
//   oversized     after registering, a 2 MiB heartbeat
//   foreign-rank  after registering, a failed exit of rank RANK of job JOB
//                 (attempt 1), which runs on another node
// Prints one line per stream, "CODE: message" of how it ended. Exits 0 when
// gantryd ended every stream with an error, 1 when one was left open (it
// is given up after 5 s) or ended OK, 2 on bad usage.
//
// The stream is a generic one of raw bytes, so that any bytes can be sent;
// a MUNGE credential from GANTRY_MUNGE_SOCKET's munged (or the default one)
// is attached as the real agent does.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "common/munge_credential.h"
#include "common/rpc_methods.h"
#include "gantry/v1/agent.pb.h"

namespace {

constexpr char kConnect[] = "/gantry.v1.AgentService/Connect";

grpc::ByteBuffer Bytes(const std::string& data) {
  grpc::Slice slice(data);
  return grpc::ByteBuffer(&slice, 1);
}

grpc::ByteBuffer Encode(const gantry::v1::AgentMessage& message) {
  return Bytes(message.SerializeAsString());
}

gantry::v1::AgentMessage Register(const std::string& node) {
  gantry::v1::AgentMessage message;
  gantry::v1::Register& reg = *message.mutable_register_();
  reg.set_node_name(node);
  reg.set_address("127.0.0.254");
  reg.set_boot_id("rogue-boot");
  reg.set_agent_version("rogue");
  gantry::v1::NodeInventory& inventory = *reg.mutable_inventory();
  inventory.set_packages(1);
  inventory.set_cores(2);
  inventory.set_cpus(2);
  inventory.set_numa_nodes(1);
  inventory.set_memory_mb(1024);
  inventory.set_source("rogue");
  return message;
}

gantry::v1::AgentMessage Heartbeat() {
  gantry::v1::AgentMessage message;
  message.mutable_heartbeat()->set_load_1m(0.5);
  return message;
}

// One stream: writes `messages` in order (then heartbeats for as long as
// the stream lasts when `flood`), and reads until gantryd ends it.
class RogueStream {
 public:
  RogueStream(grpc::GenericStub& stub, bool flood) : flood_(flood) {
    context_.set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(5));
    const char* socket = std::getenv("GANTRY_MUNGE_SOCKET");
    absl::StatusOr<std::string> credential = gantry::EncodeMungeCredential(
        socket ? socket : "",
        gantry::MungePayloadFor(gantry::kAgentConnectMethod));
    if (credential.ok()) {
      context_.AddMetadata(gantry::kMungeMetadataKey, *credential);
    }
    call_ = stub.PrepareCall(&context_, kConnect, &queue_);
  }

  grpc::Status Run(std::vector<grpc::ByteBuffer> messages) {
    call_->StartCall(Tag(kStarted));
    size_t next = 0;
    bool writing = false;
    bool reading = false;
    // gantryd ended the stream (or a write failed): the pending operations
    // complete on their own, and Finish gets gantryd's status.
    bool ended = false;
    void* tag = nullptr;
    bool ok = false;
    while (true) {
      if (!ended && started_ && !writing &&
          (next < messages.size() || flood_)) {
        outgoing_ =
            next < messages.size() ? messages[next++] : Encode(Heartbeat());
        call_->Write(outgoing_, Tag(kWritten));
        writing = true;
        ++written_;
      }
      if (!ended && started_ && !reading) {
        call_->Read(&incoming_, Tag(kRead));
        reading = true;
      }
      if (started_ && !writing && !reading) break;
      if (!queue_.Next(&tag, &ok)) break;
      switch (reinterpret_cast<intptr_t>(tag)) {
        case kStarted:
          started_ = true;
          ended = !ok;
          break;
        case kWritten:
          writing = false;
          ended = ended || !ok;
          break;
        case kRead:
          reading = false;
          ended = ended || !ok;
          break;
      }
    }
    grpc::Status status;
    call_->Finish(&status, Tag(kFinished));
    queue_.Next(&tag, &ok);
    queue_.Shutdown();
    while (queue_.Next(&tag, &ok)) {
    }
    return status;
  }

  uint64_t written() const { return written_; }

 private:
  enum : intptr_t { kStarted = 1, kWritten, kRead, kFinished };
  static void* Tag(intptr_t tag) { return reinterpret_cast<void*>(tag); }

  const bool flood_;
  grpc::ClientContext context_;
  grpc::CompletionQueue queue_;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call_;
  grpc::ByteBuffer outgoing_;
  grpc::ByteBuffer incoming_;
  bool started_ = false;
  uint64_t written_ = 0;
};

// The messages of garbage `kind`, or empty for an unknown kind.
std::vector<grpc::ByteBuffer> Garbage(const std::string& kind,
                                      const std::string& node,
                                      const std::vector<std::string>& args) {
  if (kind == "bytes") {
    return {Bytes(std::string("\xff\xff\xff\xff\x0f not a protobuf", 20))};
  }
  if (kind == "no-register") return {Encode(Heartbeat())};
  std::vector<grpc::ByteBuffer> messages = {Encode(Register(node))};
  if (kind == "empty") {
    messages.push_back(Encode(gantry::v1::AgentMessage()));
  } else if (kind == "rename") {
    messages.push_back(Encode(Register(node + "-other")));
  } else if (kind == "absurd") {
    gantry::v1::AgentMessage reg = Register(node);
    reg.mutable_register_()->mutable_inventory()->set_cpus(1u << 30);
    reg.mutable_register_()->mutable_inventory()->set_cores(1u << 30);
    messages = {Encode(reg)};
  } else if (kind == "oversized") {
    gantry::v1::AgentMessage big = Heartbeat();
    big.mutable_heartbeat()->add_health_problems(std::string(2 << 20, 'x'));
    messages.push_back(Encode(big));
  } else if (kind == "foreign-rank" && args.size() == 2) {
    gantry::v1::AgentMessage exit;
    gantry::v1::RankEvent& event = *exit.mutable_rank_event();
    event.set_sequence(1);
    event.set_kind(gantry::v1::RankEvent::EXITED);
    event.mutable_rank()->set_job_id(
        std::strtoull(args[0].c_str(), nullptr, 10));
    event.mutable_rank()->set_attempt(1);
    event.mutable_rank()->set_rank(
        static_cast<uint32_t>(std::strtoul(args[1].c_str(), nullptr, 10)));
    event.set_exit_code(1);
    messages.push_back(Encode(exit));
  } else {
    return {};
  }
  return messages;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() < 3 || (args[2] != "flood" && args[2] != "garbage") ||
      (args[2] == "garbage" && args.size() < 4)) {
    std::cerr << "usage: gantry-rogue-agent TARGET NODE flood [ROUNDS] | "
                 "garbage KIND [JOB RANK]\n";
    return 2;
  }
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxSendMessageSize(64 << 20);
  grpc::GenericStub stub(grpc::CreateCustomChannel(
      args[0], grpc::InsecureChannelCredentials(), channel_args));
  const std::string& node = args[1];
  const bool flood = args[2] == "flood";
  std::vector<grpc::ByteBuffer> messages;
  int rounds = 1;
  if (flood) {
    messages = {Encode(Register(node))};
    if (args.size() > 3) rounds = std::atoi(args[3].c_str());
  } else {
    messages = Garbage(args[3], node, {args.begin() + 4, args.end()});
    if (messages.empty()) {
      std::cerr << "gantry-rogue-agent: unknown garbage " << args[3] << "\n";
      return 2;
    }
  }
  bool all_cut = true;
  for (int round = 0; round < rounds; ++round) {
    RogueStream stream(stub, flood);
    grpc::Status status = stream.Run(messages);
    std::cout << static_cast<int>(status.error_code()) << ": "
              << status.error_message() << " (" << stream.written()
              << " messages sent)" << std::endl;
    all_cut = all_cut && !status.ok() &&
              status.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED;
  }
  return all_cut ? 0 : 1;
}
