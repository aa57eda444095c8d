// TLS as a client that shows a certificate of its own (mutual TLS), as
// gantryd does to etcd (--client-cert-auth), and the reading of a
// certificate with its key that it shares with gantryd's TLS listener
// (tls_credentials.h). Implemented in tls_credentials.cc.
//
// Thread-safe (no shared state).
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"

namespace gantry {

// A certificate (chain) and its private key, as PEM text.
struct KeyPair {
  std::string certificate_chain;
  std::string private_key;
};

// Reads and checks a certificate and its key. Errors (INVALID_ARGUMENT,
// naming the file): a file that cannot be read; a certificate or key that
// is not PEM; a key that does not belong to the certificate.
absl::StatusOr<KeyPair> ReadKeyPair(const std::string& cert_path,
                                    const std::string& key_path);

// A client's credentials for a server that asks for a client certificate
// (etcd with --client-cert-auth): the server is checked against `ca_path`
// and this client shows `cert_path` with `key_path`. Errors: ReadKeyPair's,
// and the CA file's (cannot be read, no PEM certificate).
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>>
MutualTlsChannelCredentials(const std::string& ca_path,
                            const std::string& cert_path,
                            const std::string& key_path);

}  // namespace gantry
