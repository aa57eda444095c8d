#include "daemon/rpc/authenticator.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "common/munge_credential.h"
#include "common/mutex.h"
#include "common/request_binding.h"
#include "common/rpc_methods.h"

namespace gantry {
namespace {

// The name of `uid` on this host; the number when it has none (a user known
// only on the login nodes still gets a job, which its nodes may refuse).
std::string UserName(uint32_t uid) {
  std::vector<char> buffer(16384);
  passwd entry{};
  passwd* found = nullptr;
  if (getpwuid_r(uid, &entry, buffer.data(), buffer.size(), &found) == 0 &&
      found != nullptr) {
    return found->pw_name;
  }
  return std::to_string(uid);
}

std::optional<passwd> LookUpUser(const std::string& name,
                                 std::vector<char>& buffer) {
  passwd entry{};
  passwd* found = nullptr;
  if (getpwnam_r(name.c_str(), &entry, buffer.data(), buffer.size(), &found) ==
          0 &&
      found != nullptr) {
    return entry;
  }
  return std::nullopt;
}

std::vector<gid_t> GroupsOf(const std::string& user, gid_t primary) {
  int count = 64;
  std::vector<gid_t> groups(count);
  if (getgrouplist(user.c_str(), primary, groups.data(), &count) < 0) {
    groups.resize(count);
    if (getgrouplist(user.c_str(), primary, groups.data(), &count) < 0) {
      return {primary};
    }
  }
  groups.resize(count);
  return groups;
}

std::optional<std::string_view> Metadata(const grpc::ServerContextBase& context,
                                         std::string_view key) {
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(grpc::string_ref(key.data(), key.size()));
  if (it == metadata.end()) return std::nullopt;
  return std::string_view(it->second.data(), it->second.size());
}

}  // namespace

// Entries live kTtl, so a user added, renamed or removed on the host is seen
// within that; the whole table is dropped past kMaxEntries.
class UserDirectory {
 public:
  struct Entry {
    uint32_t uid = 0;
    gid_t gid = 0;
    std::string name;
  };

  // The name of `uid`; the number when it has none.
  std::string NameOf(uint32_t uid) {
    const auto now = std::chrono::steady_clock::now();
    {
      MutexLock lock(mutex_);
      auto it = names_.find(uid);
      if (it != names_.end() && now < it->second.second) {
        return it->second.first;
      }
    }
    std::string name = UserName(uid);
    MutexLock lock(mutex_);
    if (names_.size() >= kMaxEntries) names_.clear();
    names_[uid] = {name, now + kTtl};
    return name;
  }

  // The user of that name, if the host knows one.
  std::optional<Entry> Find(const std::string& name) {
    const auto now = std::chrono::steady_clock::now();
    {
      MutexLock lock(mutex_);
      auto it = users_.find(name);
      if (it != users_.end() && now < it->second.second) {
        return it->second.first;
      }
    }
    std::vector<char> buffer(16384);
    std::optional<Entry> entry;
    if (std::optional<passwd> found = LookUpUser(name, buffer)) {
      entry = Entry{found->pw_uid, found->pw_gid, name};
    }
    MutexLock lock(mutex_);
    if (users_.size() >= kMaxEntries) users_.clear();
    users_[name] = {entry, now + kTtl};
    return entry;
  }

 private:
  static constexpr std::chrono::seconds kTtl{30};
  static constexpr size_t kMaxEntries = 10000;
  using Deadline = std::chrono::steady_clock::time_point;

  Mutex mutex_;
  std::map<uint32_t, std::pair<std::string, Deadline>> names_
      ABSL_GUARDED_BY(mutex_);
  std::map<std::string, std::pair<std::optional<Entry>, Deadline>> users_
      ABSL_GUARDED_BY(mutex_);
};

Authenticator::Authenticator(AuthOptions options,
                             std::optional<gid_t> admin_gid)
    : options_(std::move(options)),
      admin_gid_(admin_gid),
      users_(std::make_shared<UserDirectory>()) {}

bool IsAdmin(uint32_t uid, const std::vector<gid_t>& groups,
             std::optional<gid_t> admin_gid) {
  if (uid == 0) return true;
  return admin_gid.has_value() &&
         std::find(groups.begin(), groups.end(), *admin_gid) != groups.end();
}

absl::StatusOr<Authenticator> Authenticator::Create(AuthOptions options) {
  std::optional<gid_t> admin_gid;
  if (!options.admin_group.empty()) {
    std::vector<char> buffer(16384);
    group entry{};
    group* found = nullptr;
    if (getgrnam_r(options.admin_group.c_str(), &entry, buffer.data(),
                   buffer.size(), &found) != 0 ||
        found == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("admin group \"", options.admin_group,
                       "\" does not exist on this host"));
    }
    admin_gid = found->gr_gid;
  }
  return Authenticator(std::move(options), admin_gid);
}

Caller Authenticator::Describe(uint32_t uid, uint32_t gid,
                               std::string user) const {
  Caller caller;
  caller.uid = uid;
  caller.gid = gid;
  caller.user = std::move(user);
  // Group lists come from NSS (files, LDAP): only look them up when they
  // can change the answer, not on every request of every user.
  const bool groups_matter = uid != 0 && admin_gid_.has_value();
  caller.admin = IsAdmin(
      uid, groups_matter ? GroupsOf(caller.user, gid) : std::vector<gid_t>{},
      admin_gid_);
  return caller;
}

absl::StatusOr<Caller> Authenticator::Verify(
    std::optional<std::string_view> credential, std::string_view method,
    const google::protobuf::MessageLite* request) const {
  if (!credential || credential->empty()) {
    return absl::UnauthenticatedError(
        "request refused: it carries no MUNGE credential (this controller "
        "requires MUNGE authentication; is munged running on the client's "
        "host?)");
  }
  absl::StatusOr<MungeIdentity> identity =
      DecodeMungeCredential(options_.munge_socket, *credential);
  if (!identity.ok()) {
    // munged itself being unreachable is the controller's problem; say so
    // rather than blame the client.
    if (absl::IsUnavailable(identity.status())) {
      return absl::UnavailableError(
          absl::StrCat("the controller cannot check credentials: ",
                       identity.status().message()));
    }
    return absl::UnauthenticatedError(
        absl::StrCat("request refused: ", identity.status().message()));
  }
  if (request != nullptr) {
    const std::string mismatch =
        PayloadMismatch(identity->payload, method, *request);
    if (!mismatch.empty()) {
      return absl::UnauthenticatedError(
          absl::StrCat("request refused: ", mismatch));
    }
  } else if (identity->payload != MungePayloadFor(method)) {
    return absl::UnauthenticatedError(absl::StrCat(
        "request refused: the MUNGE credential was made for another request "
        "(",
        identity->payload.substr(0, 64), "), not ", MungePayloadFor(method)));
  }
  return Describe(identity->uid, identity->gid, users_->NameOf(identity->uid));
}

absl::StatusOr<Caller> Authenticator::AuthenticateCredential(
    std::string_view credential, std::string_view method,
    const google::protobuf::MessageLite& request) const {
  return Verify(credential, method, &request);
}

absl::StatusOr<Caller> Authenticator::AuthenticateClient(
    const grpc::ServerContextBase& context, std::string_view method,
    const google::protobuf::MessageLite& request, std::string_view claimed_user,
    int64_t claimed_uid) const {
  if (options_.use_munge) {
    return Verify(Metadata(context, kMungeMetadataKey), method, &request);
  }
  // Authentication off: believe the claim, but keep names and numbers
  // consistent with this host's user database where it knows them.
  const std::string name(claimed_user);
  if (name.empty()) {
    // Read-only calls claim no one; they get the least a user can be.
    return Caller{.uid = 65534, .gid = 65534, .user = "nobody", .admin = false};
  }
  std::optional<UserDirectory::Entry> entry = users_->Find(name);
  if (claimed_uid >= 0) {
    return Describe(static_cast<uint32_t>(claimed_uid),
                    entry ? entry->gid : static_cast<gid_t>(claimed_uid), name);
  }
  if (!entry) {
    return absl::UnauthenticatedError(
        absl::StrCat("request refused: unknown user \"", name, "\""));
  }
  return Describe(entry->uid, entry->gid, name);
}

absl::Status Authenticator::CheckMunged() const {
  const std::string payload = MungePayloadFor("self-check");
  absl::StatusOr<std::string> credential =
      EncodeMungeCredential(options_.munge_socket, payload);
  if (!credential.ok()) return credential.status();
  absl::StatusOr<MungeIdentity> identity =
      DecodeMungeCredential(options_.munge_socket, *credential);
  if (!identity.ok()) return identity.status();
  return absl::OkStatus();
}

absl::Status Authenticator::AuthenticateAgent(
    const grpc::ServerContextBase& context) const {
  if (!options_.use_munge) return absl::OkStatus();
  absl::StatusOr<Caller> caller = Verify(Metadata(context, kMungeMetadataKey),
                                         kAgentConnectMethod, nullptr);
  if (!caller.ok()) return caller.status();
  if (caller->uid != 0) {
    return absl::PermissionDeniedError(absl::StrCat(
        "agent refused: it runs as ", caller->user, " (uid ", caller->uid,
        "); gantry-agent must run as root to start ranks as their users"));
  }
  return absl::OkStatus();
}

}  // namespace gantry
