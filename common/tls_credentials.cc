#include "common/tls_credentials.h"

#include "common/client_certificate.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/private_key_file.h"

namespace gantry {
namespace {

absl::StatusOr<std::string> ReadPemFile(const std::string& path,
                                        const char* what) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read the ", what, " ", path, ": ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot read the ", what, " ", path, ": ", std::strerror(errno)));
  }
  return text.str();
}

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Deleter {
  void operator()(X509* certificate) const { X509_free(certificate); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using Bio = std::unique_ptr<BIO, BioDeleter>;
using Certificate = std::unique_ptr<X509, X509Deleter>;
using PrivateKey = std::unique_ptr<EVP_PKEY, KeyDeleter>;

Bio MemoryBio(const std::string& text) {
  return Bio(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// The first certificate of a PEM text.
Certificate FirstCertificate(const std::string& pem) {
  Bio bio = MemoryBio(pem);
  Certificate certificate(
      bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
  ERR_clear_error();
  return certificate;
}

absl::StatusOr<std::string> ReadCaFile(const std::string& path) {
  absl::StatusOr<std::string> roots = ReadPemFile(path, "CA file");
  if (!roots.ok()) return roots.status();
  if (!FirstCertificate(*roots)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the CA file ", path, " holds no PEM certificate"));
  }
  return roots;
}

}  // namespace

absl::StatusOr<KeyPair> ReadKeyPair(const std::string& cert_path,
                                    const std::string& key_path) {
  absl::StatusOr<std::string> chain = ReadPemFile(cert_path, "certificate");
  if (!chain.ok()) return chain.status();
  // Refused when others may read it (common/private_key_file.h).
  absl::StatusOr<std::string> key_text =
      ReadPrivateKeyFile(key_path, "the private key");
  if (!key_text.ok()) return key_text.status();
  Certificate certificate = FirstCertificate(*chain);
  if (!certificate) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the certificate ", cert_path, " holds no PEM certificate"));
  }
  Bio key_bio = MemoryBio(*key_text);
  PrivateKey key(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr,
                                                   nullptr, nullptr)
                         : nullptr);
  ERR_clear_error();
  if (!key) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the private key ", key_path, " holds no unencrypted PEM private key"));
  }
  if (X509_check_private_key(certificate.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        absl::StrCat("the private key ", key_path,
                     " does not belong to the certificate ", cert_path));
  }
  return KeyPair{.certificate_chain = std::move(*chain),
                 .private_key = std::move(*key_text)};
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>>
ServerCredentialsFromFiles(const std::string& cert_path,
                           const std::string& key_path) {
  if (cert_path.empty() && key_path.empty()) {
    return grpc::InsecureServerCredentials();
  }
  if (cert_path.empty() || key_path.empty()) {
    return absl::InvalidArgumentError(
        "TLS needs both --tls-cert and --tls-key (the certificate and its "
        "private key), or neither for plain TCP");
  }
  absl::StatusOr<KeyPair> pair = ReadKeyPair(cert_path, key_path);
  if (!pair.ok()) return pair.status();
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  options.pem_key_cert_pairs.push_back(
      {pair->private_key, pair->certificate_chain});
  return grpc::SslServerCredentials(options);
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MutualTlsChannelCredentials(const std::string& ca_path,
                            const std::string& cert_path,
                            const std::string& key_path) {
  absl::StatusOr<std::string> roots = ReadCaFile(ca_path);
  if (!roots.ok()) return roots.status();
  absl::StatusOr<KeyPair> pair = ReadKeyPair(cert_path, key_path);
  if (!pair.ok()) return pair.status();
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = *roots;
  options.pem_private_key = pair->private_key;
  options.pem_cert_chain = pair->certificate_chain;
  return grpc::SslCredentials(options);
}

ClientTls ClientTlsFromEnvironment() {
  ClientTls tls;
  if (const char* ca = std::getenv(kTlsCaVariable)) tls.ca_path = ca;
  if (const char* name = std::getenv(kTlsServerNameVariable)) {
    tls.server_name = name;
  }
  return tls;
}

bool IsUnixTarget(const std::string& target) {
  return target.rfind("unix:", 0) == 0 ||
         target.rfind("unix-abstract:", 0) == 0;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const std::string& target, const ClientTls& tls,
    grpc::ChannelArguments& args) {
  if (IsUnixTarget(target) || tls.ca_path.empty()) {
    return grpc::InsecureChannelCredentials();
  }
  absl::StatusOr<std::string> roots = ReadCaFile(tls.ca_path);
  if (!roots.ok()) return roots.status();
  if (!tls.server_name.empty()) {
    args.SetSslTargetNameOverride(tls.server_name);
  }
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = *roots;
  return grpc::SslCredentials(options);
}

std::string TlsConnectHint(const std::string& target, const ClientTls& tls) {
  if (IsUnixTarget(target)) return "";
  if (tls.ca_path.empty()) {
    return absl::StrCat(
        "; if the controller uses TLS, give its CA with --tls-ca or ",
        kTlsCaVariable);
  }
  return absl::StrCat("; TLS with the CA ", tls.ca_path,
                      ": check that it signed the controller's certificate, "
                      "and that the certificate names the host of ",
                      target, " (or set --tls-server-name / ",
                      kTlsServerNameVariable, ")");
}

}  // namespace gantry
