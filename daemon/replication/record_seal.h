// Seals what a replicated controller keeps in etcd, so that etcd need not
// be trusted: whoever can read etcd learns nothing of what is sealed (job
// scripts, arguments, environments), and whoever can write it cannot make
// a controller apply a log entry or believe a leader record it did not
// seal itself.
//
// The cluster key (--replication-key) is a file of random bytes, the same
// on every controller and kept outside etcd. From it HKDF-SHA256 derives
// one key per use: the AES-256-GCM key that seals records, the key that
// makes each record's nonce, and the snapshot token a standby shows the
// leader (snapshot_service.h), which is therefore never stored anywhere.
//
// A sealed record is "gs1" + nonce (12 bytes) + ciphertext + tag (16
// bytes). Its associated data is the etcd key it is stored under (which
// holds the prefix and, for the log, the index), so a record moved to
// another key, another index or another cluster's prefix does not open.
// The nonce is an HMAC of the key and the plaintext (a synthetic IV): the
// same record sealed twice is the same bytes, which keeps a retried append
// idempotent (replication_log.h), and two different records never share a
// nonce.
//
// A record that does not open is a forgery (or an alteration, or a replay
// at another key): Open refuses it, logs an alarm naming the key (once per
// distinct value), and counts it for `gantry status` and the metrics.
//
// Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/mutex.h"

namespace gantry::replication {

// Smallest cluster key accepted, in bytes.
inline constexpr size_t kMinClusterKeyBytes = 32;

class RecordSeal {
 public:
  // Reads the cluster key from `path`. Errors: NOT_FOUND / PERMISSION_DENIED
  // when it cannot be read; FAILED_PRECONDITION when group or others may
  // read or write it (the message gives the path and mode) or it holds
  // fewer than kMinClusterKeyBytes bytes.
  static absl::StatusOr<std::unique_ptr<RecordSeal>> FromKeyFile(
      const std::string& path);

  explicit RecordSeal(absl::string_view cluster_key);
  RecordSeal(const RecordSeal&) = delete;
  RecordSeal& operator=(const RecordSeal&) = delete;

  // `plaintext` sealed for storage under etcd key `etcd_key`.
  std::string Seal(absl::string_view etcd_key,
                   absl::string_view plaintext) const;

  // The plaintext of a record read from etcd key `etcd_key`. Errors:
  // PERMISSION_DENIED (IsForged) when it was not sealed with this cluster
  // key for that etcd key; the alarm is raised then.
  absl::StatusOr<std::string> Open(absl::string_view etcd_key,
                                   absl::string_view sealed);

  // The secret a standby shows the leader to copy its state (hex).
  const std::string& snapshot_token() const { return snapshot_token_; }

  // Records refused since start (each distinct value once), and the etcd
  // key of the last one (empty: none).
  uint64_t forged_count() const { return forged_count_.load(); }
  std::string last_forged_key() const;

 private:
  absl::Status Refuse(absl::string_view etcd_key, absl::string_view sealed,
                      absl::string_view why);

  std::string cipher_key_;  // 32 bytes
  std::string nonce_key_;   // 32 bytes
  std::string snapshot_token_;

  std::atomic<uint64_t> forged_count_{0};
  mutable Mutex mutex_;
  std::set<std::string> forged_seen_ ABSL_GUARDED_BY(mutex_);  // key + digest
  std::string last_forged_key_ ABSL_GUARDED_BY(mutex_);
};

// The error of Open for a record that did not open.
bool IsForged(const absl::Status& status);

// Whether `value` has the form of a sealed record (whether or not it
// opens). Values that earlier, unsealing versions of gantryd wrote never
// do (a serialized protobuf or a number never starts with the marker).
bool LooksSealed(absl::string_view value);

}  // namespace gantry::replication
