#include "daemon/replication/replication_log.h"

#include <algorithm>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace gantry::replication {
namespace {

constexpr char kBehindTruncationPayload[] =
    "type.gantry/replication.BehindTruncation";

}  // namespace

ReplicationLog::ReplicationLog(EtcdClient& etcd, ReplicationKeys keys,
                               RecordSeal& seal, size_t max_value_bytes)
    : etcd_(etcd),
      keys_(std::move(keys)),
      seal_(seal),
      max_value_bytes_(max_value_bytes) {}

absl::Status ReplicationLog::AppendPart(uint64_t index, const std::string& key,
                                        const std::string& value,
                                        int64_t leader_revision,
                                        bool is_log_key) {
  etcdserverpb::TxnRequest txn;
  CompareCreated(txn, keys_.leader(), leader_revision);
  CompareCreated(txn, key, /*revision=*/0);  // absent
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  // On failure, read both so the reason is known without another trip.
  txn.add_failure()->mutable_request_range()->set_key(keys_.leader());
  txn.add_failure()->mutable_request_range()->set_key(key);
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  if (!response.ok()) return response.status();
  if (response->succeeded()) return absl::OkStatus();
  const etcdserverpb::RangeResponse& leader =
      response->responses(0).response_range();
  if (leader.kvs_size() == 0 ||
      leader.kvs(0).create_revision() != leader_revision) {
    return absl::FailedPreconditionError(
        "this controller is no longer the leader (the leader key in etcd "
        "changed)");
  }
  const etcdserverpb::RangeResponse& existing =
      response->responses(1).response_range();
  if (existing.kvs_size() != 1) {
    return absl::UnavailableError(absl::StrCat(
        "the log key ", key, " changed while being appended; retrying"));
  }
  if (existing.kvs(0).value() == value) {
    return absl::OkStatus();  // an earlier try landed (sealing is
                              // deterministic)
  }
  return ReplaceForged(index, existing.kvs(0), value, leader_revision,
                       is_log_key);
}

absl::Status ReplicationLog::ReplaceForged(uint64_t index,
                                           const mvccpb::KeyValue& existing,
                                           const std::string& value,
                                           int64_t leader_revision,
                                           bool is_log_key) {
  if (is_log_key) {
    absl::StatusOr<std::string> opened =
        seal_.Open(existing.key(), existing.value());
    if (opened.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the log key ", existing.key(),
                       " in etcd already holds another "
                       "batch"));
    }
    // Overwritten since it was created: a controller may have written the
    // real entry there, and followers may hold it. Replacing it would make
    // them diverge; stop instead.
    if (existing.version() != 1) {
      return absl::FailedPreconditionError(absl::StrCat(
          "log entry ", index, " in etcd (", existing.key(),
          ") was altered by someone other than a controller; the log cannot "
          "go on past it: ",
          opened.status().message()));
    }
  }
  // Created by someone else before this leader got to the index (or a part
  // written while the entry's log key is still absent): no controller has
  // applied it, so this leader's own value takes its place.
  etcdserverpb::TxnRequest txn;
  CompareCreated(txn, keys_.leader(), leader_revision);
  etcdserverpb::Compare* same = txn.add_compare();
  same->set_key(existing.key());
  same->set_target(etcdserverpb::Compare::MOD);
  same->set_result(etcdserverpb::Compare::EQUAL);
  same->set_mod_revision(existing.mod_revision());
  if (!is_log_key) CompareCreated(txn, keys_.log(index), 0);
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(existing.key());
  put->set_value(value);
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  if (!response.ok()) return response.status();
  if (!response->succeeded()) {
    return absl::UnavailableError(
        absl::StrCat("the forged value of ", existing.key(),
                     " changed while being replaced; retrying"));
  }
  log::Warn("replaced a forged value in the log in etcd with this leader's",
            {{"key", existing.key()}, {"index", index}});
  return absl::OkStatus();
}

absl::Status ReplicationLog::Append(uint64_t index, const std::string& batch,
                                    int64_t leader_revision) {
  v1::LogEntry entry;
  if (batch.size() <= max_value_bytes_) {
    entry.set_batch_bytes(batch.size());
    entry.set_batch(batch);
  } else {
    // Sealed whole under the entry's chunk prefix, then cut: a part moved
    // from another entry, or missing, fails the seal.
    const std::string sealed = seal_.Seal(keys_.chunk_prefix(index), batch);
    entry.set_batch_bytes(sealed.size());
    uint32_t parts = 0;
    for (size_t offset = 0; offset < sealed.size();
         offset += max_value_bytes_, ++parts) {
      absl::Status written = AppendPart(index, keys_.chunk(index, parts),
                                        sealed.substr(offset, max_value_bytes_),
                                        leader_revision, false);
      if (!written.ok()) return written;
    }
    entry.set_chunks(parts);
  }
  const std::string key = keys_.log(index);
  return AppendPart(index, key, seal_.Seal(key, entry.SerializeAsString()),
                    leader_revision, true);
}

absl::Status BehindTruncation(uint64_t wanted, uint64_t truncated_through) {
  absl::Status status = absl::OutOfRangeError(absl::StrCat(
      "log entry ", wanted,
      " was truncated from the log in etcd (entries up "
      "to ",
      truncated_through,
      " are gone): this controller needs a copy of the leader's state"));
  status.SetPayload(kBehindTruncationPayload, absl::Cord("1"));
  return status;
}

bool IsBehindTruncation(const absl::Status& status) {
  return status.GetPayload(kBehindTruncationPayload).has_value();
}

absl::StatusOr<ReplicationLog::Entry> ReplicationLog::Decode(
    const mvccpb::KeyValue& kv) {
  return DecodeAt(kv, kv.mod_revision());
}

absl::StatusOr<ReplicationLog::Entry> ReplicationLog::DecodeAt(
    const mvccpb::KeyValue& kv, int64_t revision) {
  std::optional<uint64_t> index = keys_.LogIndexOf(kv.key());
  if (!index) {
    return absl::DataLossError(
        absl::StrCat("etcd key ", kv.key(), " is not a log entry"));
  }
  absl::StatusOr<std::string> opened = seal_.Open(kv.key(), kv.value());
  if (!opened.ok()) return opened.status();
  v1::LogEntry entry;
  if (!entry.ParseFromString(*opened)) {
    return absl::DataLossError(
        absl::StrCat("etcd key ", kv.key(), " is not a log entry"));
  }
  std::string batch;
  if (entry.chunks() == 0) {
    batch = std::move(*entry.mutable_batch());
  } else {
    etcdserverpb::RangeRequest request;
    request.set_key(keys_.chunk_prefix(*index));
    request.set_range_end(PrefixEnd(keys_.chunk_prefix(*index)));
    // As of the entry's own revision: its parts may be truncated since.
    request.set_revision(revision);
    absl::StatusOr<etcdserverpb::RangeResponse> parts = etcd_.Range(request);
    if (parts.status().code() == absl::StatusCode::kOutOfRange) {
      // That revision was compacted meanwhile: read the log again.
      return absl::UnavailableError(absl::StrCat(
          "the parts of log entry ", *index,
          " were compacted while being read: ", parts.status().message()));
    }
    if (!parts.ok()) return parts.status();
    if (parts->kvs_size() != static_cast<int>(entry.chunks())) {
      return absl::DataLossError(
          absl::StrCat("log entry ", *index, " has ", parts->kvs_size(),
                       " of its ", entry.chunks(), " parts in etcd"));
    }
    std::string sealed;
    for (const mvccpb::KeyValue& part : parts->kvs()) sealed += part.value();
    if (sealed.size() != entry.batch_bytes()) {
      return absl::DataLossError(
          absl::StrCat("the parts of log entry ", *index, " hold ",
                       sealed.size(), " bytes, not ", entry.batch_bytes()));
    }
    absl::StatusOr<std::string> whole =
        seal_.Open(keys_.chunk_prefix(*index), sealed);
    if (!whole.ok()) return whole.status();
    batch = std::move(*whole);
  }
  Entry decoded;
  decoded.index = *index;
  if ((entry.chunks() == 0 && batch.size() != entry.batch_bytes()) ||
      !decoded.batch.ParseFromString(batch)) {
    return absl::DataLossError(
        absl::StrCat("log entry ", *index, " in etcd does not parse"));
  }
  return decoded;
}

absl::StatusOr<ReplicationLog::Page> ReplicationLog::Read(uint64_t first,
                                                          size_t limit) {
  // The entries and the truncation mark in one transaction, so they are
  // seen at one revision.
  etcdserverpb::TxnRequest txn;
  etcdserverpb::RangeRequest& entries =
      *txn.add_success()->mutable_request_range();
  entries.set_key(keys_.log(first));
  entries.set_range_end(PrefixEnd(keys_.log_prefix()));
  entries.set_limit(static_cast<int64_t>(std::max<size_t>(limit, 1)));
  txn.add_success()->mutable_request_range()->set_key(keys_.truncated());
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  if (!response.ok()) return response.status();
  if (response->responses_size() != 2) {
    return absl::UnavailableError("etcd answered a log read incompletely");
  }
  const etcdserverpb::RangeResponse& found =
      response->responses(0).response_range();
  absl::StatusOr<uint64_t> truncated =
      ParseTruncated(response->responses(1).response_range());
  if (!truncated.ok()) return truncated.status();
  if (first <= *truncated) return BehindTruncation(first, *truncated);
  Page page;
  page.revision = response->header().revision();
  page.more = found.more();
  uint64_t expected = first;
  for (const mvccpb::KeyValue& kv : found.kvs()) {
    absl::StatusOr<Entry> entry = DecodeAt(kv, page.revision);
    if (!entry.ok() && IsForged(entry.status())) {
      // Never applied, never skipped: the page ends here, and the follower
      // waits for the leader to write this index (or truncate past it).
      page.more = false;
      break;
    }
    if (!entry.ok()) return entry.status();
    if (entry->index != expected) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the log in etcd has entry ", entry->index, " but not entry ",
          expected, " before it, nor a record of its truncation"));
    }
    ++expected;
    page.entries.push_back(std::move(*entry));
  }
  return page;
}

absl::StatusOr<uint64_t> ReplicationLog::ParseTruncated(
    const etcdserverpb::RangeResponse& range) const {
  if (range.kvs_size() == 0) return 0;
  absl::StatusOr<std::string> mark =
      seal_.Open(range.kvs(0).key(), range.kvs(0).value());
  // A forged mark (the alarm is raised) is no mark: readers past the real
  // one go on, and the leader's next truncation writes a sealed one over
  // it. Failing every read instead would stop every follower for good.
  if (!mark.ok() && IsForged(mark.status())) return 0;
  if (!mark.ok()) return mark.status();
  uint64_t through = 0;
  if (!absl::SimpleAtoi(*mark, &through)) {
    return absl::DataLossError(
        absl::StrCat("etcd key ", keys_.truncated(), " holds no log index"));
  }
  return through;
}

absl::StatusOr<uint64_t> ReplicationLog::TruncatedThrough() {
  etcdserverpb::RangeRequest request;
  request.set_key(keys_.truncated());
  absl::StatusOr<etcdserverpb::RangeResponse> response = etcd_.Range(request);
  if (!response.ok()) return response.status();
  return ParseTruncated(*response);
}

absl::StatusOr<int64_t> ReplicationLog::Truncate(uint64_t through,
                                                 int64_t leader_revision) {
  etcdserverpb::TxnRequest txn;
  CompareCreated(txn, keys_.leader(), leader_revision);
  etcdserverpb::DeleteRangeRequest& entries =
      *txn.add_success()->mutable_request_delete_range();
  entries.set_key(keys_.log_prefix());
  entries.set_range_end(keys_.log(through + 1));
  etcdserverpb::DeleteRangeRequest& parts =
      *txn.add_success()->mutable_request_delete_range();
  parts.set_key(keys_.chunks_begin());
  parts.set_range_end(keys_.chunk_prefix(through + 1));
  etcdserverpb::PutRequest& mark = *txn.add_success()->mutable_request_put();
  mark.set_key(keys_.truncated());
  mark.set_value(seal_.Seal(keys_.truncated(), absl::StrCat(through)));
  absl::StatusOr<etcdserverpb::TxnResponse> response = etcd_.Txn(txn);
  if (!response.ok()) return response.status();
  if (!response->succeeded()) {
    return absl::FailedPreconditionError(
        "this controller is no longer the leader (the leader key in etcd "
        "changed); the log was not truncated");
  }
  return response->header().revision();
}

}  // namespace gantry::replication
