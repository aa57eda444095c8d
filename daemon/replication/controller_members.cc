#include "daemon/replication/controller_members.h"

#include "absl/strings/str_cat.h"

namespace gantry::replication {

std::string SealMember(const RecordSeal& seal, const std::string& key,
                       const v1::ControllerMember& member) {
  return seal.Seal(key, member.SerializeAsString());
}

absl::StatusOr<v1::ControllerMember> OpenMember(RecordSeal& seal,
                                                const mvccpb::KeyValue& kv) {
  absl::StatusOr<std::string> opened = seal.Open(kv.key(), kv.value());
  if (!opened.ok()) return opened.status();
  v1::ControllerMember member;
  if (!member.ParseFromString(*opened)) {
    return absl::DataLossError(
        absl::StrCat("etcd key ", kv.key(), " holds no controller record"));
  }
  return member;
}

absl::StatusOr<std::vector<v1::ControllerMember>> ReadControllerMembers(
    EtcdClient& etcd, const ReplicationKeys& keys, RecordSeal& seal) {
  etcdserverpb::RangeRequest request;
  request.set_key(keys.members());
  request.set_range_end(PrefixEnd(keys.members()));
  absl::StatusOr<etcdserverpb::RangeResponse> response = etcd.Range(request);
  if (!response.ok()) return response.status();
  std::vector<v1::ControllerMember> members;
  for (const mvccpb::KeyValue& kv : response->kvs()) {
    absl::StatusOr<v1::ControllerMember> member = OpenMember(seal, kv);
    if (member.ok()) members.push_back(std::move(*member));
  }
  return members;
}

}  // namespace gantry::replication
