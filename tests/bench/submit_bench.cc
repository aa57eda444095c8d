// gantry-submit-bench: a fleet of API clients for the submission benchmarks
// of issue #8 (tests/bench/submit_bench.py, restart_bench.py,
// kill9_bench.py) and the kill -9 durability test. Each client is a thread
// with its own channel and its own TCP connection (what separate client
// processes would have; --shared-channel multiplexes every client on one
// connection instead) that submits one job after another, each acknowledged
// before the next is sent: a closed loop. The request is the one `gantry
// batch` builds from the same sbatch words (cli/commands/batch_command.h), with
// the submit environment exported, and carries a MUNGE credential unless
// --auth none. Every command takes --controller T [--auth munge|none]
// before its name.
//
//   gantry-submit-bench ... submit --clients N (--seconds S | --count N)
//       [--acks FILE] [--latencies FILE] [--tag TAG] [--shared-channel]
//       [--stream [--batch N] [--window N]] -- [OPTIONS] SCRIPT
//     Prints one JSON line: acknowledged, seconds, per_second, latency_ms
//     (p50, p90, p99, max), errors by gRPC code, the client's CPU seconds.
//     Each job is named TAG-CLIENT-SEQ; --acks writes "ID NAME UNIXTIME" per
//     acknowledged job, --latencies one acknowledgement latency (us) a line.
//     UNAVAILABLE (controller gone) and RESOURCE_EXHAUSTED (busy) are retried
//     after a short pause; any other error stops that client.
//     --stream: each client submits on one SubmitStream call instead, with
//     up to --window submissions unanswered, --batch to a message; busy
//     acks are sent again, other refusals are counted (and not retried).
//     A stream that fails UNAVAILABLE is opened again and its unanswered
//     submissions sent again; any other stream error ends that client.
//     --invalid-every N makes every Nth submission of a client one gantryd
//     refuses (2 nodes, 1 task). --misbind-message N gives a client's Nth
//     message a credential made for another message (as one captured and
//     carried elsewhere would be): gantryd ends the stream, storing none of
//     that message.
//
//   gantry-submit-bench ... verify --acks FILE -- [OPTIONS] SCRIPT
//     Fetches every acknowledged job by id and compares it with what was
//     submitted (name, script, arguments, directories, size, owner). Prints
//     one JSON line (acknowledged, unique_ids, duplicate_ids, missing,
//     mismatched, examples of problems); exits 1 if any job is missing or
//     differs or an id was acknowledged twice.
//
//   gantry-submit-bench ... probe [--timeout S]
//     Tries ClusterStatus every few milliseconds (a new connection each
//     time) until one is answered, then lists the queue as `gantry queue`
//     does. Prints one JSON line with the unix times of both answers; exits
//     1 on timeout.
//
// Threads: one per client; nothing is shared between clients but the stop
// flag, the --count counter and (with --shared-channel) the channel.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/munge_credential.h"
#include "common/request_binding.h"
#include "common/rpc_methods.h"
#include "gantry/v1/client.grpc.pb.h"
#include "tests/bench/submit_bench_support.h"

namespace gantry::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct SubmitOptions {
  std::string target;
  int clients = 1;
  double seconds = 0;
  uint64_t count = 0;
  std::string acks_path;
  std::string latencies_path;
  std::string tag = "bench";
  bool shared_channel = false;
  // SubmitStream instead of Submit: each client keeps up to `window`
  // submissions unanswered on one stream, `batch` to a message.
  bool stream = false;
  int batch = 100;
  int window = 1000;
  // With --stream: every Nth submission asks for 2 nodes and 1 task, which
  // gantryd refuses (INVALID_ARGUMENT); 0: none. Shows that a refusal is
  // answered alone and the stream goes on.
  uint64_t invalid_every = 0;
  // With --stream: the Nth message (from 1) of each client is sent with a
  // credential bound to a different message; 0: none.
  uint64_t misbind_message = 0;
  CallSettings call;
};

// What one client did.
struct Ack {
  uint64_t job_id = 0;
  uint64_t sequence = 0;
  double unix_time = 0;  // when the acknowledgement arrived
};

struct ClientResult {
  std::vector<Ack> acks;
  std::vector<double> latencies_us;
  std::map<std::string, uint64_t> errors;  // by code
  std::string last_error;
};

std::string JobName(const std::string& tag, int client, uint64_t sequence) {
  return absl::StrCat(tag, "-", client, "-", sequence);
}

// `claimed` counts submissions acknowledged or in flight, so that with
// --count exactly that many are acknowledged.
void RunClient(const SubmitOptions& options, int index,
               std::shared_ptr<grpc::Channel> channel,
               v1::SubmitRequest request, const std::atomic<bool>& stop,
               std::atomic<uint64_t>& claimed, ClientResult& result) {
  auto stub = v1::ClientService::NewStub(channel);
  for (uint64_t sequence = 1; !stop.load(std::memory_order_relaxed);
       ++sequence) {
    if (options.count > 0 && claimed.fetch_add(1) >= options.count) return;
    request.mutable_spec()->set_name(JobName(options.tag, index, sequence));
    grpc::ClientContext context;
    if (absl::Status prepared = options.call.Prepare(context, request);
        !prepared.ok()) {
      ++result.errors["credential"];
      result.last_error = prepared.ToString();
      return;
    }
    v1::SubmitResponse response;
    const Clock::time_point sent = Clock::now();
    grpc::Status status = stub->Submit(&context, request, &response);
    const Clock::time_point answered = Clock::now();
    if (status.ok()) {
      result.latencies_us.push_back(
          std::chrono::duration<double, std::micro>(answered - sent).count());
      result.acks.push_back({response.job_id(), sequence, UnixSeconds()});
      continue;
    }
    if (options.count > 0) --claimed;
    ++result.errors[CodeName(status.error_code())];
    result.last_error = status.error_message();
    if (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
        status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    return;
  }
}

// One client on SubmitStream: this thread writes messages of up to
// `batch` submissions while fewer than `window` are unanswered; a reader
// thread takes the acks. A busy ack puts its submission back in line.
// Other refusals are counted and not retried (they are final). When the
// stream fails UNAVAILABLE (gantryd gone), the unanswered submissions are
// sent again on a new stream, as a unary client retries its call; any other
// stream error ends the client.
class StreamClient {
 public:
  StreamClient(const SubmitOptions& options, int index,
               std::shared_ptr<grpc::Channel> channel,
               v1::SubmitRequest request, const std::atomic<bool>& stop,
               std::atomic<uint64_t>& claimed, ClientResult& result)
      : options_(options),
        index_(index),
        stub_(v1::ClientService::NewStub(channel)),
        request_(std::move(request)),
        stop_(stop),
        claimed_(claimed),
        result_(result),
        batch_(static_cast<size_t>(std::min(options.batch, options.window))) {}

  void Run() {
    while (!stop_.load(std::memory_order_relaxed)) {
      grpc::Status status = RunStream();
      if (status.ok()) return;
      ++result_.errors[CodeName(status.error_code())];
      result_.last_error = status.error_message();
      if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  struct Sent {
    uint64_t sequence;  // the client's, in the job name
    Clock::time_point at;
    bool answered = false;
  };

  // One stream until it ends; its unanswered submissions go to resend_.
  grpc::Status RunStream() {
    grpc::ClientContext context;
    CallSettings settings = options_.call;
    settings.deadline = std::chrono::hours(24);  // a stream lives for the run
    // The stream itself carries no credential: each message does.
    settings.munge = false;
    if (absl::Status prepared =
            settings.Prepare(context, v1::SubmitStreamRequest());
        !prepared.ok()) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                          prepared.ToString());
    }
    auto stream = stub_->SubmitStream(&context);
    sent_.clear();
    unanswered_ = 0;
    reader_done_ = false;
    std::thread reader([&] { ReadAcks(*stream); });
    v1::SubmitStreamRequest message;
    bool more = true;
    while (more && !stop_.load(std::memory_order_relaxed)) {
      message.clear_submissions();
      bool pause = false;
      {
        std::unique_lock lock(mutex_);
        room_.wait(lock, [&] {
          return reader_done_ ||
                 unanswered_ + batch_ <= static_cast<size_t>(options_.window);
        });
        if (reader_done_) break;
        pause = std::exchange(busy_, false);
        more = FillLocked(message);
      }
      if (pause) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (message.submissions_size() == 0) {
        if (more) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      ++messages_;
      const bool misbind = messages_ == options_.misbind_message;
      if (misbind)
        message.mutable_submissions(0)->mutable_spec()->add_script_args("x");
      if (absl::Status signed_ = options_.call.Sign(message); !signed_.ok()) {
        std::lock_guard lock(mutex_);
        ++result_.errors["credential"];
        result_.last_error = signed_.ToString();
        break;
      }
      // The credential vouches for the message with that argument; the
      // message goes without it.
      if (misbind)
        message.mutable_submissions(0)
            ->mutable_spec()
            ->mutable_script_args()
            ->RemoveLast();
      if (!stream->Write(message)) break;  // the stream ended; see Finish
    }
    stream->WritesDone();
    reader.join();
    grpc::Status status = stream->Finish();
    std::lock_guard lock(mutex_);
    for (const Sent& submission : sent_) {
      if (!submission.answered) resend_.push_back(submission.sequence);
    }
    return status;
  }

  // Adds up to batch_ submissions to `message`: first those to send again.
  // False when --count submissions are claimed and all answered.
  bool FillLocked(v1::SubmitStreamRequest& message) {
    for (size_t i = 0; i < batch_; ++i) {
      uint64_t sequence;
      if (!resend_.empty()) {
        sequence = resend_.back();
        resend_.pop_back();
      } else if (options_.count > 0 &&
                 claimed_.fetch_add(1) >= options_.count) {
        --claimed_;
        return !(unanswered_ == 0 && message.submissions_size() == 0);
      } else {
        sequence = next_sequence_++;
      }
      v1::SubmitRequest* submission = message.add_submissions();
      *submission = request_;
      submission->mutable_spec()->set_name(
          JobName(options_.tag, index_, sequence));
      if (options_.invalid_every > 0 &&
          sequence % options_.invalid_every == 0) {
        submission->mutable_spec()->set_nodes(2);
        submission->mutable_spec()->set_ntasks(1);
      }
      sent_.push_back({sequence, Clock::now()});
      ++unanswered_;
    }
    return true;
  }

  void ReadAcks(grpc::ClientReaderWriter<v1::SubmitStreamRequest,
                                         v1::SubmitStreamReply>& stream) {
    v1::SubmitStreamReply reply;
    while (stream.Read(&reply)) {
      const Clock::time_point now = Clock::now();
      const double unix_now = UnixSeconds();
      std::lock_guard lock(mutex_);
      for (const v1::SubmitAck& ack : reply.acks()) {
        Sent& submission = sent_.at(ack.sequence());
        submission.answered = true;
        --unanswered_;
        if (ack.code() == 0) {
          result_.latencies_us.push_back(
              std::chrono::duration<double, std::micro>(now - submission.at)
                  .count());
          result_.acks.push_back({ack.job_id(), submission.sequence, unix_now});
          continue;
        }
        const auto code = static_cast<grpc::StatusCode>(ack.code());
        ++result_.errors[CodeName(code)];
        result_.last_error = ack.error();
        if (code == grpc::StatusCode::RESOURCE_EXHAUSTED) {
          resend_.push_back(submission.sequence);
          busy_ = true;
        }
      }
      room_.notify_one();
    }
    std::lock_guard lock(mutex_);
    reader_done_ = true;
    room_.notify_one();
  }

  const SubmitOptions& options_;
  const int index_;
  std::unique_ptr<v1::ClientService::Stub> stub_;
  const v1::SubmitRequest request_;
  const std::atomic<bool>& stop_;
  std::atomic<uint64_t>& claimed_;
  ClientResult& result_;
  const size_t batch_;
  uint64_t next_sequence_ = 1;

  uint64_t messages_ = 0;  // written so far, by Run's thread
  std::mutex mutex_;
  std::condition_variable room_;
  std::vector<Sent> sent_;        // this stream's, by its sequence
  std::vector<uint64_t> resend_;  // client sequences to send again
  size_t unanswered_ = 0;
  bool reader_done_ = false;
  bool busy_ = false;
};

void RunStreamClient(const SubmitOptions& options, int index,
                     std::shared_ptr<grpc::Channel> channel,
                     v1::SubmitRequest request, const std::atomic<bool>& stop,
                     std::atomic<uint64_t>& claimed, ClientResult& result) {
  StreamClient(options, index, std::move(channel), std::move(request), stop,
               claimed, result)
      .Run();
}

int RunSubmit(const SubmitOptions& options,
              const std::vector<std::string>& words) {
  absl::StatusOr<v1::SubmitRequest> request = BatchRequest(words);
  if (!request.ok()) {
    std::cerr << "gantry-submit-bench: " << request.status().message() << "\n";
    return 2;
  }
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < (options.shared_channel ? 1 : options.clients); ++i) {
    channels.push_back(MakeChannel(options.target, !options.shared_channel,
                                   /*reconnect_ms=*/20));
  }
  // Connected before the clock starts: the figure is about submissions,
  // not TCP handshakes.
  for (const auto& channel : channels) {
    channel->WaitForConnected(std::chrono::system_clock::now() +
                              std::chrono::seconds(10));
  }
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> claimed{0};
  std::vector<ClientResult> results(options.clients);
  std::vector<std::thread> threads;
  const double cpu_before = CpuSeconds();
  const Clock::time_point started = Clock::now();
  for (int i = 0; i < options.clients; ++i) {
    threads.emplace_back(
        options.stream ? RunStreamClient : RunClient, std::cref(options), i,
        channels[options.shared_channel ? 0 : i], *request, std::cref(stop),
        std::ref(claimed), std::ref(results[i]));
  }
  if (options.seconds > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(options.seconds));
    stop = true;
  }
  for (std::thread& thread : threads) thread.join();
  const double elapsed =
      std::chrono::duration<double>(Clock::now() - started).count();
  const double cpu = CpuSeconds() - cpu_before;

  std::vector<double> latencies;
  std::map<std::string, uint64_t> errors;
  std::string last_error;
  for (const ClientResult& result : results) {
    latencies.insert(latencies.end(), result.latencies_us.begin(),
                     result.latencies_us.end());
    for (const auto& [code, n] : result.errors) errors[code] += n;
    if (!result.last_error.empty()) last_error = result.last_error;
  }
  if (!options.acks_path.empty()) {
    std::ofstream out(options.acks_path);
    for (int i = 0; i < options.clients; ++i) {
      for (const Ack& ack : results[i].acks) {
        out << ack.job_id << ' ' << JobName(options.tag, i, ack.sequence) << ' '
            << absl::StrFormat("%.6f", ack.unix_time) << '\n';
      }
    }
    if (!out.flush()) {
      std::cerr << "gantry-submit-bench: cannot write " << options.acks_path
                << "\n";
      return 2;
    }
  }
  if (!options.latencies_path.empty()) {
    std::ofstream out(options.latencies_path);
    for (double us : latencies) out << static_cast<uint64_t>(us) << '\n';
  }
  std::sort(latencies.begin(), latencies.end());
  nlohmann::json summary = {
      {"clients", options.clients},
      {"shared_channel", options.shared_channel},
      {"stream", options.stream},
      {"auth", options.call.munge ? "munge" : "none"},
      {"acknowledged", latencies.size()},
      {"seconds", elapsed},
      {"per_second", latencies.size() / elapsed},
      {"latency_ms",
       {{"p50", Percentile(latencies, 0.5) / 1000},
        {"p90", Percentile(latencies, 0.9) / 1000},
        {"p99", Percentile(latencies, 0.99) / 1000},
        {"max", latencies.empty() ? 0 : latencies.back() / 1000}}},
      {"errors", errors},
      {"last_error", last_error},
      {"cpu_seconds", cpu},
  };
  std::cout << summary.dump() << std::endl;
  // Every client stopped on an error it does not retry: say so in the code.
  for (const ClientResult& result : results) {
    for (const auto& [code, n] : result.errors) {
      if (code != "UNAVAILABLE" && code != "RESOURCE_EXHAUSTED") return 1;
    }
  }
  return 0;
}

// The acknowledgements of a submit run: job id -> names it was acknowledged
// for (more than one: the id was handed out twice).
absl::StatusOr<std::map<uint64_t, std::vector<std::string>>> ReadAcks(
    const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::map<uint64_t, std::vector<std::string>> acks;
  uint64_t id = 0;
  std::string name;
  double unix_time = 0;
  while (in >> id >> name >> unix_time) acks[id].push_back(name);
  if (!in.eof()) {
    return absl::InvalidArgumentError(absl::StrCat("malformed line in ", path));
  }
  return acks;
}

// Empty when the stored job is the submitted one (its name is checked by
// the caller; the environment is not shown by GetJob); else what differs.
// The controller fills in defaults (a node, a CPU per task), so 0 sent is
// compared as that default.
std::string SpecDifference(const v1::JobRecord& job,
                           const v1::SubmitRequest& sent) {
  const v1::JobSpec& got = job.spec();
  const v1::JobSpec& want = sent.spec();
  auto or_one = [](uint32_t value) { return value ? value : 1; };
  if (got.script() != want.script()) return "script";
  if (!std::equal(got.script_args().begin(), got.script_args().end(),
                  want.script_args().begin(), want.script_args().end())) {
    return "script_args";
  }
  if (got.working_dir() != want.working_dir()) return "working_dir";
  if (got.submit_dir() != want.submit_dir()) return "submit_dir";
  if (got.nodes() != or_one(want.nodes())) return "nodes";
  if (got.cpus_per_task() != or_one(want.cpus_per_task())) {
    return "cpus_per_task";
  }
  if (got.gpus_per_node() != want.gpus_per_node()) return "gpus_per_node";
  if (got.mem_per_node_mb() != want.mem_per_node_mb()) return "mem_per_node_mb";
  if (job.uid() != sent.uid()) return "uid";
  return "";
}

int RunVerify(const std::string& target, const std::string& acks_path,
              const CallSettings& call, int threads,
              const std::vector<std::string>& words) {
  absl::StatusOr<v1::SubmitRequest> sent = BatchRequest(words);
  absl::StatusOr<std::map<uint64_t, std::vector<std::string>>> acks =
      ReadAcks(acks_path);
  for (const absl::Status& status : {sent.status(), acks.status()}) {
    if (!status.ok()) {
      std::cerr << "gantry-submit-bench: " << status.message() << "\n";
      return 2;
    }
  }
  std::vector<std::pair<uint64_t, std::string>> todo;  // id, name
  uint64_t acknowledged = 0, duplicates = 0;
  for (const auto& [id, names] : *acks) {
    acknowledged += names.size();
    if (names.size() > 1) ++duplicates;
    todo.emplace_back(id, names.front());
  }
  std::shared_ptr<grpc::Channel> channel = MakeChannel(target, false, 20);
  std::atomic<size_t> next{0};
  std::atomic<uint64_t> missing{0}, mismatched{0}, failed{0};
  std::mutex examples_mutex;
  std::vector<std::string> examples;
  auto note = [&](std::string text) {
    std::lock_guard<std::mutex> lock(examples_mutex);
    if (examples.size() < 5) examples.push_back(std::move(text));
  };
  for (const auto& [id, names] : *acks) {
    if (names.size() > 1) {
      note(absl::StrCat("job ", id, " acknowledged ", names.size(), " times (",
                        names[0], ", ", names[1], ")"));
    }
  }
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      auto stub = v1::ClientService::NewStub(channel);
      for (size_t i = next++; i < todo.size(); i = next++) {
        const auto& [id, name] = todo[i];
        grpc::ClientContext context;
        v1::GetJobRequest request;
        request.set_job_id(id);
        if (absl::Status prepared = call.Prepare(context, request);
            !prepared.ok()) {
          ++failed;
          note(prepared.ToString());
          continue;
        }
        v1::GetJobResponse response;
        grpc::Status status = stub->GetJob(&context, request, &response);
        if (status.error_code() == grpc::StatusCode::NOT_FOUND) {
          ++missing;
          note(absl::StrCat("job ", id, " (", name, ") is missing"));
        } else if (!status.ok()) {
          ++failed;
          note(absl::StrCat("job ", id, ": ", CodeName(status.error_code()),
                            ": ", status.error_message()));
        } else if (response.job().spec().name() != name) {
          ++mismatched;
          note(absl::StrCat("job ", id, " is named ",
                            response.job().spec().name(), ", acknowledged as ",
                            name));
        } else if (std::string diff = SpecDifference(response.job(), *sent);
                   !diff.empty()) {
          ++mismatched;
          note(absl::StrCat("job ", id, " (", name, ") differs in ", diff));
        }
      }
    });
  }
  for (std::thread& worker : workers) worker.join();
  nlohmann::json summary = {
      {"acknowledged", acknowledged},
      {"unique_ids", todo.size()},
      {"duplicate_ids", duplicates},
      {"missing", missing.load()},
      {"mismatched", mismatched.load()},
      {"failed_lookups", failed.load()},
      {"examples", examples},
  };
  std::cout << summary.dump() << std::endl;
  const bool clean =
      duplicates == 0 && missing == 0 && mismatched == 0 && failed == 0;
  return clean ? 0 : 1;
}

int RunProbe(const std::string& target, const CallSettings& call,
             double timeout_seconds) {
  // A fresh channel (and connection) for each attempt, failing fast: a
  // channel that was refused waits out a reconnect backoff (100 ms at
  // least) before it tries again, which would be added to the figure.
  CallSettings attempt = call;
  attempt.deadline = std::chrono::milliseconds(2000);
  attempt.wait_for_ready = false;
  const double deadline = UnixSeconds() + timeout_seconds;
  uint64_t attempts = 0;
  double status_at = 0;
  std::shared_ptr<grpc::Channel> channel;
  while (UnixSeconds() < deadline) {
    ++attempts;
    channel = MakeChannel(target, /*own_connection=*/true, 100);
    auto stub = v1::ClientService::NewStub(channel);
    grpc::ClientContext context;
    const v1::ClusterStatusRequest status_request;
    if (absl::Status prepared = attempt.Prepare(context, status_request);
        !prepared.ok()) {
      std::cerr << "gantry-submit-bench: " << prepared.message() << "\n";
      return 2;
    }
    v1::ClusterStatusResponse response;
    if (stub->ClusterStatus(&context, status_request, &response).ok()) {
      status_at = UnixSeconds();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (status_at == 0) {
    std::cerr << "gantry-submit-bench: no answer within " << timeout_seconds
              << " s\n";
    return 1;
  }
  auto stub = v1::ClientService::NewStub(channel);
  // The whole queue, page by page, as `gantry queue` lists it.
  v1::ListJobsRequest request;
  int queue_jobs = 0;
  do {
    grpc::ClientContext context;
    if (absl::Status prepared = call.Prepare(context, request);
        !prepared.ok()) {
      std::cerr << "gantry-submit-bench: " << prepared.message() << "\n";
      return 2;
    }
    v1::ListJobsResponse jobs;
    grpc::Status listed = stub->ListJobs(&context, request, &jobs);
    if (!listed.ok()) {
      std::cerr << "gantry-submit-bench: ListJobs: " << listed.error_message()
                << "\n";
      return 1;
    }
    queue_jobs += jobs.jobs_size();
    request.set_page_token(jobs.next_page_token());
  } while (!request.page_token().empty());
  nlohmann::json summary = {
      {"status_unix", status_at},
      {"queue_unix", UnixSeconds()},
      {"queue_jobs", queue_jobs},
      {"attempts", attempts},
  };
  std::cout << summary.dump() << std::endl;
  return 0;
}

}  // namespace
}  // namespace gantry::bench

int main(int argc, char** argv) {
  using namespace gantry::bench;
  // Everything after "--" is `gantry batch` words, which CLI11 must not see.
  std::vector<std::string> batch_words;
  int own_argc = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      batch_words.assign(argv + i + 1, argv + argc);
      own_argc = i;
      break;
    }
  }
  CLI::App app{"Submission benchmark client for gantryd (tests/bench)"};
  app.require_subcommand(1);
  std::string target;
  std::string auth = "munge";
  app.add_option("--controller", target, "gantryd address")->required();
  app.add_option("--auth", auth,
                 "munge (credential from $GANTRY_MUNGE_SOCKET "
                 "or the default munged) or none")
      ->check(CLI::IsMember({"munge", "none"}));

  SubmitOptions submit;
  CLI::App* submit_command =
      app.add_subcommand("submit", "Submit from N clients; print figures");
  submit_command->add_option("--clients", submit.clients)
      ->check(CLI::Range(1, 4096));
  submit_command->add_option("--seconds", submit.seconds,
                             "stop after this long");
  submit_command->add_option("--count", submit.count,
                             "stop once this many are acknowledged");
  submit_command->add_option("--acks", submit.acks_path);
  submit_command->add_option("--latencies", submit.latencies_path);
  submit_command->add_option("--tag", submit.tag, "job name prefix");
  submit_command->add_flag("--shared-channel", submit.shared_channel,
                           "all clients on one channel and connection");
  submit_command->add_flag("--stream", submit.stream,
                           "each client submits on one SubmitStream call");
  submit_command
      ->add_option("--batch", submit.batch,
                   "submissions per stream message (gantryd takes "
                   "at most 1,000)")
      ->check(CLI::Range(1, 100'000));
  submit_command
      ->add_option("--window", submit.window,
                   "unanswered submissions per stream")
      ->check(CLI::Range(1, 1'000'000));
  submit_command->add_option("--invalid-every", submit.invalid_every,
                             "with --stream: make every Nth submission one "
                             "gantryd refuses");
  submit_command->add_option("--misbind-message", submit.misbind_message,
                             "with --stream: send each client's Nth message "
                             "with a credential made for another message");

  std::string acks_path;
  int verify_threads = 8;
  CLI::App* verify_command = app.add_subcommand(
      "verify", "Check that every acknowledged job is stored as submitted");
  verify_command->add_option("--acks", acks_path)->required();
  verify_command->add_option("--threads", verify_threads)
      ->check(CLI::Range(1, 256));

  double probe_timeout = 60;
  CLI::App* probe_command = app.add_subcommand(
      "probe", "Wait for gantryd to answer; print when it did");
  probe_command->add_option("--timeout", probe_timeout);

  try {
    app.parse(own_argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  CallSettings call;
  call.munge = auth == "munge";
  if (const char* socket = std::getenv(gantry::kMungeSocketVariable)) {
    call.munge_socket = socket;
  }
  if (*submit_command) {
    if ((submit.seconds > 0) == (submit.count > 0)) {
      std::cerr << "gantry-submit-bench: give one of --seconds and --count\n";
      return 2;
    }
    submit.target = target;
    submit.call = call;
    return RunSubmit(submit, batch_words);
  }
  if (*verify_command) {
    return RunVerify(target, acks_path, call, verify_threads, batch_words);
  }
  return RunProbe(target, call, probe_timeout);
}
