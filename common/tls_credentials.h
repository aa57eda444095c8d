// TLS on gantryd's TCP listener, and the clients' side of it (agents, the
// CLI, tools). MUNGE proves who sends a request, but over plain TCP the
// request itself (a job's script and environment) and the controller's
// launches travel in the clear; with TLS they are encrypted, and clients
// know they talk to the controller whose certificate their CA signed.
//
// gantryd: --tls-cert and --tls-key (PEM) turn TLS on for --listen; its
// unix socket stays plain (local, guarded by file permissions). Clients of a
// TCP target: a CA file (--tls-ca, or $GANTRY_TLS_CA for the CLI and so for
// job scripts) turns TLS on and verifies the controller's certificate
// against the target's host name, or against --tls-server-name /
// $GANTRY_TLS_SERVER_NAME when the certificate names the controller
// differently (a target given as an IP address). No CA: plain TCP, which a
// TLS listener refuses (the handshake fails).
//
// Files are read and checked here, at start, so a missing or unreadable
// file, a key that others may read (as ssh refuses one), or a key that does
// not match its certificate, is an error that names the file before
// anything listens or dials.
//
// Thread-safe (no shared state).
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"

namespace gantry {

// Where the CLI (and job scripts, which inherit it) find the CA file and
// the name to expect in the controller's certificate.
inline constexpr char kTlsCaVariable[] = "GANTRY_TLS_CA";
inline constexpr char kTlsServerNameVariable[] = "GANTRY_TLS_SERVER_NAME";

// The listener's credentials. Both paths empty: plaintext. Errors
// (INVALID_ARGUMENT, naming the file): one path without the other; a file
// that cannot be read; a key file that its group or others may access; a
// certificate or key that is not PEM; a key that does not belong to the
// certificate.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>>
ServerCredentialsFromFiles(const std::string& cert_path,
                           const std::string& key_path);

struct ClientTls {
  std::string ca_path;      // empty: plaintext
  std::string server_name;  // empty: the target's host
};

// `tls` from the environment ($GANTRY_TLS_CA, $GANTRY_TLS_SERVER_NAME).
ClientTls ClientTlsFromEnvironment();

// Whether `target` is a unix socket ("unix:PATH"), which never uses TLS.
bool IsUnixTarget(const std::string& target);

// The credentials of a channel to `target`; sets the expected server name
// in `args` when `tls` names one. A unix target, or no CA: plaintext.
// Errors (INVALID_ARGUMENT, naming the file): the CA file cannot be read or
// holds no PEM certificate.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ChannelCredentialsFor(
    const std::string& target, const ClientTls& tls,
    grpc::ChannelArguments& args);

// Added to a failed connection's message: what to check, depending on
// whether the client used TLS.
std::string TlsConnectHint(const std::string& target, const ClientTls& tls);

}  // namespace gantry
