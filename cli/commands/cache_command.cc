#include "cli/commands/cache_command.h"

#include <pwd.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/client/command_support.h"
#include "cli/client/controller_client.h"
#include "cli/commands/batch_command.h"
#include "cli/views/cache_view.h"
#include "common/dataset_spec.h"
#include "common/hostlist.h"
#include "common/request_limits.h"

namespace gantry::cli {
namespace {

// What the subcommands parse into; must outlive the parse.
struct CacheSubcommands {
  CLI::App* cache = nullptr;
  CLI::App* list = nullptr;
  CLI::App* prefetch = nullptr;
  CLI::App* evict = nullptr;
  std::vector<std::string> nodes;  // hostlists
  std::string user;
  std::string dataset;  // list: NAME; prefetch: NAME:PATH; evict: NAME
  bool json = false;
  bool no_wait = false;
  uint32_t timeout_seconds = 3600;
};

constexpr char kCommand[] = "cache";

// --user: a name, or a uid (an admin may name a user that exists only on
// the nodes, or no longer).
absl::StatusOr<uint32_t> UidOf(const std::string& user) {
  if (const passwd* entry = getpwnam(user.c_str())) return entry->pw_uid;
  uint32_t uid = 0;
  if (absl::SimpleAtoi(user, &uid)) return uid;
  return absl::InvalidArgumentError(
      absl::StrCat("--user: no user named ", user));
}

// Names looked up once each.
UserNameOf UserNames() {
  auto cache = std::make_shared<std::map<uint32_t, std::string>>();
  return [cache](uint32_t uid) {
    auto it = cache->find(uid);
    if (it != cache->end()) return it->second;
    const passwd* entry = getpwuid(uid);
    std::string name = entry ? entry->pw_name : absl::StrCat(uid);
    cache->emplace(uid, name);
    return name;
  };
}

absl::Status AddNodes(const std::vector<std::string>& expressions,
                      google::protobuf::RepeatedPtrField<std::string>& nodes) {
  for (const std::string& expression : expressions) {
    absl::StatusOr<std::vector<std::string>> names =
        ExpandHostlist(expression, limits::kMaxCacheRequestNodes);
    if (!names.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--nodes: invalid node list \"", expression,
                       "\": ", names.status().message()));
    }
    for (std::string& name : *names) *nodes.Add() = std::move(name);
  }
  return absl::OkStatus();
}

// --nodes and --user into a listing or an eviction.
template <class Request>
absl::Status Choose(const CacheSubcommands& commands, Request& request) {
  if (absl::Status added = AddNodes(commands.nodes, *request.mutable_nodes());
      !added.ok()) {
    return added;
  }
  if (!commands.user.empty()) {
    absl::StatusOr<uint32_t> uid = UidOf(commands.user);
    if (!uid.ok()) return uid.status();
    request.set_owner_uid(*uid);
  }
  return absl::OkStatus();
}

int List(ControllerClient& client, const CacheSubcommands& commands) {
  v1::ListDatasetCacheRequest request;
  request.set_user(CurrentUser());
  if (absl::Status chosen = Choose(commands, request); !chosen.ok()) {
    return Fail(kCommand, chosen);
  }
  if (!commands.dataset.empty()) {
    if (absl::Status name = CheckDatasetName(commands.dataset); !name.ok()) {
      return Fail(kCommand, absl::InvalidArgumentError(
                                absl::StrCat("--dataset: ", name.message())));
    }
    request.set_dataset(commands.dataset);
  }
  v1::ListDatasetCacheResponse response;
  if (absl::Status status = client.ListDatasetCache(request, response);
      !status.ok()) {
    return Fail(kCommand, status);
  }
  const UserNameOf names = UserNames();
  if (commands.json) {
    std::cout << CacheListJson(response, names).dump(2) << "\n";
  } else {
    std::cout << CacheListText(response, names);
  }
  return 0;
}

// Sends a prefetch or an eviction, waiting for the nodes as the options
// say, and prints how it went on each node; 1 if any node failed.
template <class Request>
int Act(absl::Status (ControllerClient::*call)(const Request&,
                                               v1::DatasetCacheActionResponse&),
        ControllerClient& client, Request& request,
        const CacheSubcommands& commands, bool prefetch) {
  const uint32_t wait = commands.no_wait ? 0 : commands.timeout_seconds;
  request.set_wait_seconds(wait);
  v1::DatasetCacheActionResponse response;
  if (absl::Status status = (client.*call)(request, response); !status.ok()) {
    return Fail(kCommand, status);
  }
  const CacheActionReport report = CacheActionText(response, prefetch, wait);
  if (commands.json) {
    std::cout << CacheActionJson(response, UserNames()).dump(2) << "\n";
  } else {
    std::cout << report.text;
  }
  return report.failed ? 1 : 0;
}

int Prefetch(ControllerClient& client, const CacheSubcommands& commands) {
  absl::StatusOr<DatasetDeclaration> dataset =
      ParseDatasetOption(commands.dataset);
  if (!dataset.ok()) return Fail(kCommand, dataset.status());
  // A relative PATH is taken from here, as --dataset takes it.
  std::error_code error;
  const std::filesystem::path here = std::filesystem::current_path(error);
  absl::StatusOr<std::string> path =
      DatasetPathForSpec(*dataset, here.string());
  if (!path.ok()) return Fail(kCommand, path.status());
  if (commands.nodes.empty()) {
    return Fail(kCommand, absl::InvalidArgumentError(
                              "a prefetch needs the nodes to copy to: "
                              "--nodes=HOSTLIST"));
  }
  v1::PrefetchDatasetRequest request;
  request.set_user(CurrentUser());
  request.mutable_dataset()->set_name(dataset->name);
  request.mutable_dataset()->set_path(*path);
  if (dataset->version_by_content) {
    request.mutable_dataset()->set_version_by(v1::DATASET_VERSION_BY_CONTENT);
  }
  if (absl::Status added = AddNodes(commands.nodes, *request.mutable_nodes());
      !added.ok()) {
    return Fail(kCommand, added);
  }
  return Act(&ControllerClient::PrefetchDataset, client, request, commands,
             /*prefetch=*/true);
}

int Evict(ControllerClient& client, const CacheSubcommands& commands) {
  if (absl::Status name = CheckDatasetName(commands.dataset); !name.ok()) {
    return Fail(kCommand, name);
  }
  v1::EvictDatasetRequest request;
  request.set_user(CurrentUser());
  request.set_name(commands.dataset);
  if (absl::Status chosen = Choose(commands, request); !chosen.ok()) {
    return Fail(kCommand, chosen);
  }
  return Act(&ControllerClient::EvictDataset, client, request, commands,
             /*prefetch=*/false);
}

void AddListOptions(CLI::App& command, CacheSubcommands& commands) {
  command
      .add_option("--nodes,-w", commands.nodes,
                  "Only these nodes: a hostlist such as node[01-04]")
      ->allow_extra_args(false)
      ->option_text("HOSTLIST");
  command
      .add_option("--user,-u", commands.user,
                  "Only this user's copies (admins; a user sees only their "
                  "own)")
      ->option_text("NAME");
  command
      .add_option("--dataset", commands.dataset,
                  "Only the dataset of this NAME")
      ->option_text("NAME");
  command.add_flag("--json", commands.json, "Machine-readable output");
}

void AddWaitOptions(CLI::App& command, CacheSubcommands& commands) {
  command.add_flag("--no-wait", commands.no_wait,
                   "Return once the nodes are asked, without their answers");
  command
      .add_option("--timeout", commands.timeout_seconds,
                  "Seconds to wait for every node's answer (1 to 604800; "
                  "default 3600)")
      ->check(CLI::Range(1u, 7u * 24 * 3600))
      ->option_text("SECONDS");
  command.add_flag("--json", commands.json, "Machine-readable output");
}

void AddCacheSubcommands(CLI::App& app, CacheSubcommands& commands) {
  commands.cache = app.add_subcommand(
      "cache",
      "The datasets (--dataset) cached on the nodes: list them, prefetch "
      "one onto nodes before a job needs it, or evict one");
  commands.cache->footer(
      "Examples:\n"
      "  gantry cache                      your cached datasets, per node\n"
      "  gantry cache prefetch imagenet:/shared/imagenet --nodes=gpu[01-08]\n"
      "  gantry cache evict imagenet       drop it from every node holding it");
  AddListOptions(*commands.cache, commands);
  commands.list = commands.cache->add_subcommand(
      "list",
      "One line per cached dataset version per node (size, version, last "
      "use, jobs pinning it), and each node's cache use; the default");
  AddListOptions(*commands.list, commands);
  commands.prefetch = commands.cache->add_subcommand(
      "prefetch",
      "Copy a dataset into the caches of the given nodes now, as you, "
      "exactly as a job's --dataset would stage it");
  commands.prefetch
      ->add_option("NAME:PATH", commands.dataset,
                   "The dataset, as --dataset takes it")
      ->required();
  commands.prefetch
      ->add_option("--nodes,-w", commands.nodes,
                   "The nodes to copy to: a hostlist such as node[01-04]")
      ->allow_extra_args(false)
      ->option_text("HOSTLIST REQUIRED")
      ->required();
  AddWaitOptions(*commands.prefetch, commands);
  commands.evict = commands.cache->add_subcommand(
      "evict",
      "Drop your dataset NAME from the nodes' caches (every version no "
      "running or starting job uses)");
  commands.evict->add_option("NAME", commands.dataset, "The dataset's name")
      ->required();
  commands.evict
      ->add_option("--nodes,-w", commands.nodes,
                   "Only these nodes (default: every node holding it)")
      ->allow_extra_args(false)
      ->option_text("HOSTLIST");
  commands.evict
      ->add_option("--user,-u", commands.user,
                   "Another user's dataset (admins only)")
      ->option_text("NAME");
  AddWaitOptions(*commands.evict, commands);
  // An option of another subcommand is an error, not the cache's own.
  commands.prefetch->fallthrough(false);
  commands.evict->fallthrough(false);
  commands.list->fallthrough(false);
}

std::optional<int> RunCacheSubcommands(const std::string& controller,
                                       const CacheSubcommands& commands) {
  if (commands.cache == nullptr || !commands.cache->parsed()) {
    return std::nullopt;
  }
  ControllerClient client(ResolveControllerTarget(controller));
  if (commands.prefetch->parsed()) return Prefetch(client, commands);
  if (commands.evict->parsed()) return Evict(client, commands);
  return List(client, commands);
}

}  // namespace

void AddCacheCommands(CommandTable& commands) {
  auto parsed = std::make_shared<CacheSubcommands>();
  AddCacheSubcommands(commands.app(), *parsed);
  for (CLI::App* subcommand : {parsed->cache}) {
    commands.Add(subcommand, [parsed](const std::string& controller) {
      return *RunCacheSubcommands(controller, *parsed);
    });
  }
}

}  // namespace gantry::cli
