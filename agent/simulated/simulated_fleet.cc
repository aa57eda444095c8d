#include "agent/simulated/simulated_fleet.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <functional>
#include <queue>
#include <regex>
#include <thread>
#include <utility>

#include <grpcpp/alarm.h>

#include "absl/strings/str_cat.h"
#include "agent/link/controller_link.h"
#include "common/log.h"

namespace gantry::agent {
namespace {

constexpr auto kTick = std::chrono::milliseconds(10);
constexpr auto kSummaryEvery = std::chrono::seconds(5);
constexpr size_t kLongestName = 63;

int64_t FleetSteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string FleetBootId() {
  // A fresh id per fleet process: its simulated ranks die with it, which
  // is what a reboot means to the controller.
  std::ifstream in("/proc/sys/kernel/random/uuid");
  std::string id;
  std::getline(in, id);
  return id.empty() ? absl::StrCat("simulated-", FleetSteadyMs()) : id;
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& target) {
  grpc::ChannelArguments args = AgentChannelArguments();
  // Channels with the same target and arguments would otherwise share one
  // connection from gRPC's global pool; each channel stands for its own
  // nodes' connection.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(target, grpc::InsecureChannelCredentials(),
                                   args);
}

}  // namespace

absl::Status CheckSimulatedFleetOptions(const SimulatedFleetOptions& options) {
  static const std::regex kPrefix("[A-Za-z0-9][A-Za-z0-9._-]*");
  if (!std::regex_match(options.name_prefix, kPrefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node name prefix \"", options.name_prefix,
        "\" must start with a letter or digit and hold only letters, digits, "
        "'.', '_' and '-'"));
  }
  if (options.nodes == 0) {
    return absl::InvalidArgumentError("a fleet needs at least one node");
  }
  if (options.first_index > UINT32_MAX - options.nodes) {
    return absl::InvalidArgumentError("node indices overflow");
  }
  const uint32_t width = SimulatedNameWidth(options.first_index, options.nodes);
  if (options.name_prefix.size() + width > kLongestName) {
    return absl::InvalidArgumentError(absl::StrCat(
        "node names would be longer than ", kLongestName, " characters"));
  }
  if (options.threads == 0 || options.nodes_per_connection == 0 ||
      options.dials_per_thread == 0) {
    return absl::InvalidArgumentError(
        "threads, nodes per connection and dials per thread must be >= 1");
  }
  return absl::OkStatus();
}

uint32_t SimulatedNameWidth(uint32_t first, uint32_t count) {
  const uint32_t last = first + (count == 0 ? 0 : count - 1);
  return std::max<uint32_t>(5,
                            static_cast<uint32_t>(absl::StrCat(last).size()));
}

std::string SimulatedNodeName(const std::string& prefix, uint32_t index,
                              uint32_t width) {
  std::string digits = absl::StrCat(index);
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return prefix + digits;
}

v1::NodeInventory SyntheticNodeInventory() {
  v1::NodeInventory inventory;
  inventory.set_packages(1);
  inventory.set_cores(16);
  inventory.set_cpus(32);
  inventory.set_numa_nodes(1);
  inventory.set_memory_mb(uint64_t{128} * 1024);
  for (uint32_t i = 0; i < 8; ++i) {
    v1::GpuInfo& gpu = *inventory.add_gpus();
    gpu.set_index(i);
    gpu.set_vendor("simulated");
    gpu.set_model("simulated GPU");
    gpu.set_pci_bus_id(absl::StrCat("0000:", 10 + i, ":00.0"));
    gpu.set_numa_node(0);
  }
  v1::NetworkDevice& eth = *inventory.add_network_devices();
  eth.set_name("eth0");
  eth.set_kind("network");
  eth.set_numa_node(0);
  eth.set_role("management");
  inventory.set_source("synthetic (gantry-fleet)");
  return inventory;
}

// What the fleet counts and logs across shards. Thread-safe.
class SimulatedFleet::Census {
 public:
  explicit Census(uint32_t nodes) : nodes_(nodes) {}

  void NodeConnected(bool connected) {
    if (connected) {
      ++connected_;
      ++registrations_;
    } else {
      --connected_;
    }
  }

  void StreamEnded(const SimulatedNode& node, const grpc::Status& status,
                   bool stopping) {
    ++streams_ended_;
    if (stopping) return;
    // One line per kind of failure every few seconds, not one per node:
    // a fleet of thousands whose controller went away would drown the log.
    {
      MutexLock lock(mutex_);
      int64_t& last = last_logged_ms_[status.error_code()];
      const int64_t now = FleetSteadyMs();
      if (last != 0 && now - last < 5000) return;
      last = now;
    }
    const bool refused =
        status.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
        status.error_code() == grpc::StatusCode::PERMISSION_DENIED ||
        status.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
    log::Write(refused ? log::Level::kError : log::Level::kWarning,
               refused ? "the controller refused a simulated node; retrying"
                       : "simulated node's stream ended; redialling",
               {{"node", node.name()},
                {"code", static_cast<int>(status.error_code())},
                {"error", status.error_message()},
                {"streams_ended", streams_ended_.load()}});
  }

  void CredentialFailed(const absl::Status& status) {
    if (credential_warned_.exchange(true)) return;
    log::Warn(
        "simulated nodes connect without a MUNGE credential (gantryd "
        "--auth=munge will refuse them)",
        {{"error", status.ToString()}});
  }

  // Logs the counters if they changed since the last call.
  void Summarize(int64_t started_ms) {
    const uint32_t connected = connected_.load();
    const uint64_t ended = streams_ended_.load();
    if (connected == last_connected_ && ended == last_ended_) return;
    last_connected_ = connected;
    last_ended_ = ended;
    log::Info("simulated fleet",
              {{"connected", connected},
               {"nodes", nodes_},
               {"registrations", registrations_.load()},
               {"streams_ended", ended},
               {"elapsed_ms", FleetSteadyMs() - started_ms}});
  }

  uint32_t connected() const { return connected_.load(); }

 private:
  const uint32_t nodes_;
  std::atomic<uint32_t> connected_{0};
  std::atomic<uint64_t> registrations_{0};
  std::atomic<uint64_t> streams_ended_{0};
  std::atomic<bool> credential_warned_{false};
  Mutex mutex_;
  std::map<grpc::StatusCode, int64_t> last_logged_ms_ ABSL_GUARDED_BY(mutex_);
  // Touched by Summarize's one caller only.
  uint32_t last_connected_ = 0;
  uint64_t last_ended_ = 0;
};

// One thread's share of the fleet: its nodes, their channels, and the
// completion queue that drives them.
class SimulatedFleet::Shard final : public SimulatedNodeHost {
 public:
  Shard(Census& census, uint32_t dial_slots)
      : census_(census), dial_slots_free_(dial_slots) {}

  ~Shard() override {
    nodes_.clear();  // every call before the stubs and channels it uses
    stubs_.clear();
  }

  void AddChannel(const std::string& target) {
    stubs_.push_back(v1::AgentService::NewStub(MakeChannel(target)));
  }

  // Adds a node on the shard's latest channel.
  void AddNode(const SimulatedNodeShared& shared, std::string name,
               uint32_t index) {
    nodes_.push_back(std::make_unique<SimulatedNode>(
        *this, shared, std::move(name), index, stubs_.back().get()));
  }

  void Start() {
    thread_ = std::thread([this] { Run(); });
  }

  void RequestStop() { stop_requested_ = true; }

  void Join() {
    if (thread_.joinable()) thread_.join();
  }

  // SimulatedNodeHost.
  grpc::CompletionQueue* queue() override { return &queue_; }
  int64_t NowMs() const override { return FleetSteadyMs(); }
  void PushWake(SimulatedNode* node, int64_t at_ms) override {
    wakes_.push({at_ms, node});
  }
  void RequestDial(SimulatedNode* node) override {
    if (stopping_) return;
    if (dial_slots_free_ == 0) {
      dial_queue_.push_back(node);
      return;
    }
    --dial_slots_free_;
    node->Dial();
  }
  void ReleaseDialSlot() override {
    ++dial_slots_free_;
    while (dial_slots_free_ > 0 && !dial_queue_.empty() && !stopping_) {
      SimulatedNode* next = dial_queue_.front();
      dial_queue_.pop_front();
      --dial_slots_free_;
      next->Dial();
    }
  }
  void NodeConnected(bool connected) override {
    census_.NodeConnected(connected);
  }
  void StreamEnded(const SimulatedNode& node,
                   const grpc::Status& status) override {
    census_.StreamEnded(node, status, stopping_);
  }
  void CredentialFailed(const absl::Status& status) override {
    census_.CredentialFailed(status);
  }

 private:
  void Run() {
    for (auto& node : nodes_) node->Start();
    ArmTicker();
    void* tag = nullptr;
    bool ok = false;
    while (queue_.Next(&tag, &ok)) {
      auto* done = static_cast<CompletionTag*>(tag);
      if (done->op == CompletionTag::Op::kTick) {
        OnTick();
      } else {
        static_cast<SimulatedNode*>(done->owner)->OnCompletion(done->op, ok);
      }
    }
  }

  void ArmTicker() {
    ticker_.Set(&queue_, std::chrono::system_clock::now() + kTick, &tick_tag_);
  }

  void OnTick() {
    const int64_t now = NowMs();
    while (!wakes_.empty() && wakes_.top().first <= now) {
      auto [at, node] = wakes_.top();
      wakes_.pop();
      node->OnWake(at);
    }
    if (stop_requested_ && !stopping_) {
      stopping_ = true;
      dial_queue_.clear();
      for (auto& node : nodes_) node->Stop();
    }
    if (stopping_ &&
        std::all_of(nodes_.begin(), nodes_.end(),
                    [](const auto& node) { return node->idle(); })) {
      // Every call is over: nothing but this tick was outstanding.
      queue_.Shutdown();
      return;
    }
    ArmTicker();
  }

  Census& census_;
  grpc::CompletionQueue queue_;
  grpc::Alarm ticker_;
  CompletionTag tick_tag_{this, CompletionTag::Op::kTick};
  std::vector<std::unique_ptr<v1::AgentService::Stub>> stubs_;
  std::vector<std::unique_ptr<SimulatedNode>> nodes_;
  using Wake = std::pair<int64_t, SimulatedNode*>;
  std::priority_queue<Wake, std::vector<Wake>, std::greater<Wake>> wakes_;
  std::deque<SimulatedNode*> dial_queue_;
  uint32_t dial_slots_free_;
  std::atomic<bool> stop_requested_{false};
  bool stopping_ = false;
  std::thread thread_;
};

SimulatedFleet::SimulatedFleet(SimulatedFleetOptions options,
                               v1::NodeInventory inventory)
    : options_(std::move(options)),
      census_(std::make_unique<Census>(options_.nodes)) {
  shared_.address = options_.address;
  shared_.boot_id = FleetBootId();
  shared_.inventory = std::move(inventory);
  shared_.features = options_.features;
  shared_.rank_defaults = options_.rank_defaults;
  shared_.use_munge = options_.use_munge;
  shared_.munge_socket = options_.munge_socket;
  shared_.gang_starts = &gang_starts_;
  shared_.preflight_plan_path = options_.preflight_plan_path;
  shared_.preflight_ms = options_.preflight_ms;
  const uint32_t threads = std::max<uint32_t>(1, options_.threads);
  for (uint32_t i = 0; i < threads; ++i) {
    shards_.push_back(
        std::make_unique<Shard>(*census_, options_.dials_per_thread));
  }
  const uint32_t width =
      SimulatedNameWidth(options_.first_index, options_.nodes);
  const uint32_t per_channel =
      std::max<uint32_t>(1, options_.nodes_per_connection);
  for (uint32_t i = 0; i < options_.nodes; ++i) {
    // Whole channels go to one shard, so a channel's calls share one queue.
    const uint32_t channel = i / per_channel;
    Shard& shard = *shards_[channel % threads];
    if (i % per_channel == 0) shard.AddChannel(options_.controller);
    const uint32_t index = options_.first_index + i;
    shard.AddNode(shared_,
                  SimulatedNodeName(options_.name_prefix, index, width), index);
  }
}

SimulatedFleet::~SimulatedFleet() {
  Stop();
  for (auto& shard : shards_) shard->Join();
}

void SimulatedFleet::Run() {
  const int64_t started_ms = FleetSteadyMs();
  log::Info(
      "simulated fleet starting",
      {{"nodes", options_.nodes},
       {"first", SimulatedNodeName(
                     options_.name_prefix, options_.first_index,
                     SimulatedNameWidth(options_.first_index, options_.nodes))},
       {"threads", shards_.size()},
       {"nodes_per_connection", options_.nodes_per_connection},
       {"inventory", shared_.inventory.source()}});
  for (auto& shard : shards_) shard->Start();
  bool all_logged = false;
  {
    MutexLock lock(mutex_);
    auto next_summary = std::chrono::steady_clock::now() + kSummaryEvery;
    while (!stopping_) {
      wake_.WaitFor(lock, std::chrono::milliseconds(100));
      if (stopping_) break;
      if (!all_logged && census_->connected() == options_.nodes) {
        all_logged = true;
        log::Info("every simulated node is connected",
                  {{"nodes", options_.nodes},
                   {"elapsed_ms", FleetSteadyMs() - started_ms}});
      }
      if (std::chrono::steady_clock::now() >= next_summary) {
        census_->Summarize(started_ms);
        next_summary = std::chrono::steady_clock::now() + kSummaryEvery;
      }
    }
  }
  for (auto& shard : shards_) shard->RequestStop();
  for (auto& shard : shards_) shard->Join();
  log::Info("simulated fleet stopped");
}

void SimulatedFleet::Stop() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.NotifyAll();
  for (auto& shard : shards_) shard->RequestStop();
}

}  // namespace gantry::agent
