#include "daemon/replication/record_seal.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>

#include <array>

#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/private_key_file.h"

namespace gantry::replication {
namespace {

constexpr absl::string_view kMagic = "gs1";
constexpr size_t kNonceBytes = 12;
constexpr size_t kTagBytes = 16;
constexpr char kForgedPayload[] = "type.gantry/replication.ForgedRecord";
// A cluster key is a few dozen bytes; anything much larger is not one.
constexpr size_t kMaxClusterKeyBytes = 4096;

struct PkeyContextDeleter {
  void operator()(EVP_PKEY_CTX* context) const { EVP_PKEY_CTX_free(context); }
};
struct CipherContextDeleter {
  void operator()(EVP_CIPHER_CTX* context) const {
    EVP_CIPHER_CTX_free(context);
  }
};

// HKDF-SHA256 of the cluster key, one output per `purpose`. A failure of
// OpenSSL here is a broken installation: a crash, not a status.
std::string Derive(absl::string_view cluster_key, absl::string_view purpose) {
  std::unique_ptr<EVP_PKEY_CTX, PkeyContextDeleter> context(
      EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nullptr));
  std::string out(32, '\0');
  size_t length = out.size();
  constexpr absl::string_view kSalt = "gantry replication v1";
  if (!context || EVP_PKEY_derive_init(context.get()) != 1 ||
      EVP_PKEY_CTX_set_hkdf_md(context.get(), EVP_sha256()) != 1 ||
      EVP_PKEY_CTX_set1_hkdf_salt(
          context.get(), reinterpret_cast<const unsigned char*>(kSalt.data()),
          static_cast<int>(kSalt.size())) != 1 ||
      EVP_PKEY_CTX_set1_hkdf_key(
          context.get(),
          reinterpret_cast<const unsigned char*>(cluster_key.data()),
          static_cast<int>(cluster_key.size())) != 1 ||
      EVP_PKEY_CTX_add1_hkdf_info(
          context.get(), reinterpret_cast<const unsigned char*>(purpose.data()),
          static_cast<int>(purpose.size())) != 1 ||
      EVP_PKEY_derive(context.get(), reinterpret_cast<unsigned char*>(&out[0]),
                      &length) != 1 ||
      length != out.size()) {
    log::Error("OpenSSL cannot derive a key (HKDF-SHA256)");
    std::abort();
  }
  return out;
}

std::string Hmac(absl::string_view key, absl::string_view a,
                 absl::string_view b) {
  // Length-prefixed, so (a, b) pairs cannot collide by shifting bytes.
  std::string message = absl::StrCat(a.size(), ":", a, b);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()),
           message.size(), digest.data(), &length) == nullptr) {
    log::Error("OpenSSL cannot compute an HMAC-SHA256");
    std::abort();
  }
  return std::string(reinterpret_cast<const char*>(digest.data()), length);
}

const unsigned char* Bytes(absl::string_view text) {
  return reinterpret_cast<const unsigned char*>(text.data());
}

}  // namespace

absl::StatusOr<std::unique_ptr<RecordSeal>> RecordSeal::FromKeyFile(
    const std::string& path) {
  const std::string how_to_make =
      absl::StrCat("head -c 32 /dev/urandom > ", path, "; chmod 0600 ", path,
                   "; and copy it to every controller");
  // Private as every key a daemon reads (anyone who can read it can forge
  // the cluster's log in etcd).
  absl::StatusOr<std::string> key =
      ReadPrivateKeyFile(path, "the replication key");
  if (absl::IsNotFound(key.status())) {
    return absl::NotFoundError(absl::StrCat(
        key.status().message(), " (make one with: ", how_to_make, ")"));
  }
  if (!key.ok()) return key.status();
  if (key->size() > kMaxClusterKeyBytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("the replication key ", path, " is larger than ",
                     kMaxClusterKeyBytes, " bytes: is it the right file?"));
  }
  if (key->size() < kMinClusterKeyBytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("the replication key ", path, " holds ", key->size(),
                     " bytes; it needs at least ", kMinClusterKeyBytes,
                     " random bytes (", how_to_make, ")"));
  }
  return std::make_unique<RecordSeal>(*key);
}

RecordSeal::RecordSeal(absl::string_view cluster_key)
    : cipher_key_(Derive(cluster_key, "record cipher")),
      nonce_key_(Derive(cluster_key, "record nonce")),
      snapshot_token_(
          absl::BytesToHexString(Derive(cluster_key, "snapshot token"))) {}

std::string RecordSeal::Seal(absl::string_view etcd_key,
                             absl::string_view plaintext) const {
  const std::string nonce =
      Hmac(nonce_key_, etcd_key, plaintext).substr(0, kNonceBytes);
  std::string sealed(kMagic);
  sealed += nonce;
  const size_t body = sealed.size();
  sealed.resize(body + plaintext.size() + kTagBytes);
  auto* out = reinterpret_cast<unsigned char*>(&sealed[body]);
  std::unique_ptr<EVP_CIPHER_CTX, CipherContextDeleter> context(
      EVP_CIPHER_CTX_new());
  int length = 0;
  int final_length = 0;
  if (!context ||
      EVP_EncryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr,
                         Bytes(cipher_key_), Bytes(nonce)) != 1 ||
      EVP_EncryptUpdate(context.get(), nullptr, &length, Bytes(etcd_key),
                        static_cast<int>(etcd_key.size())) != 1 ||
      EVP_EncryptUpdate(context.get(), out, &length, Bytes(plaintext),
                        static_cast<int>(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(context.get(), out + length, &final_length) != 1 ||
      EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                          out + plaintext.size()) != 1) {
    log::Error("OpenSSL cannot seal a record (AES-256-GCM)");
    std::abort();
  }
  return sealed;
}

absl::StatusOr<std::string> RecordSeal::Open(absl::string_view etcd_key,
                                             absl::string_view sealed) {
  if (sealed.size() < kMagic.size() + kNonceBytes + kTagBytes ||
      sealed.substr(0, kMagic.size()) != kMagic) {
    return Refuse(etcd_key, sealed, "it is not a sealed record");
  }
  const absl::string_view nonce = sealed.substr(kMagic.size(), kNonceBytes);
  const absl::string_view ciphertext =
      sealed.substr(kMagic.size() + kNonceBytes,
                    sealed.size() - kMagic.size() - kNonceBytes - kTagBytes);
  std::string tag(sealed.substr(sealed.size() - kTagBytes));
  std::string plaintext(ciphertext.size(), '\0');
  std::unique_ptr<EVP_CIPHER_CTX, CipherContextDeleter> context(
      EVP_CIPHER_CTX_new());
  int length = 0;
  int final_length = 0;
  auto* out = reinterpret_cast<unsigned char*>(plaintext.data());
  const bool opened =
      context &&
      EVP_DecryptInit_ex(context.get(), EVP_aes_256_gcm(), nullptr,
                         Bytes(cipher_key_), Bytes(nonce)) == 1 &&
      EVP_DecryptUpdate(context.get(), nullptr, &length, Bytes(etcd_key),
                        static_cast<int>(etcd_key.size())) == 1 &&
      EVP_DecryptUpdate(context.get(), out, &length, Bytes(ciphertext),
                        static_cast<int>(ciphertext.size())) == 1 &&
      EVP_CIPHER_CTX_ctrl(context.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes,
                          tag.data()) == 1 &&
      EVP_DecryptFinal_ex(context.get(), out + length, &final_length) == 1;
  if (!opened) {
    return Refuse(etcd_key, sealed,
                  "it was not sealed with this cluster's replication key for "
                  "this key (forged, altered, or moved from another key)");
  }
  return plaintext;
}

absl::Status RecordSeal::Refuse(absl::string_view etcd_key,
                                absl::string_view sealed,
                                absl::string_view why) {
  const std::string seen =
      absl::StrCat(etcd_key, "\n", Hmac(nonce_key_, "forged", sealed));
  bool first_time = false;
  {
    MutexLock lock(mutex_);
    // Bounded: a flood of forgeries must not grow memory without end.
    if (forged_seen_.size() >= 4096) forged_seen_.clear();
    first_time = forged_seen_.insert(seen).second;
    if (first_time) last_forged_key_ = std::string(etcd_key);
  }
  if (first_time) {
    forged_count_.fetch_add(1);
    log::Error(
        "ALARM: refused a record in etcd that no controller of this cluster "
        "wrote; someone with write access to etcd tried to tamper with the "
        "cluster",
        {{"key", std::string(etcd_key)}, {"why", std::string(why)}});
  }
  absl::Status status = absl::PermissionDeniedError(
      absl::StrCat("etcd key ", etcd_key, " was refused: ", why));
  status.SetPayload(kForgedPayload, absl::Cord("1"));
  return status;
}

std::string RecordSeal::last_forged_key() const {
  MutexLock lock(mutex_);
  return last_forged_key_;
}

bool IsForged(const absl::Status& status) {
  return status.GetPayload(kForgedPayload).has_value();
}

bool LooksSealed(absl::string_view value) {
  return absl::StartsWith(value, kMagic);
}

}  // namespace gantry::replication
