// How gantryd speaks to etcd: TLS with a client certificate (as Kubernetes
// speaks to its etcd), or, only when the admin says so, plain gRPC.
//
// etcd holds everything a controller acts on (the log of group commits,
// the leader record): whoever can write it can make the leader run a job
// as any user, and whoever can read it reads every job's script. So
// etcd must check who calls it (--client-cert-auth, a `gantry` role
// limited to the prefix), and gantryd must know it talks to the real etcd
// (its CA). Plain gRPC is refused unless --etcd-insecure is given, and
// then a warning says why it is unsafe.
//
// Thread-safe (no shared state).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/status/statusor.h"

namespace gantry::replication {

// gantryd's --etcd-ca, --etcd-cert, --etcd-key and --etcd-insecure.
struct EtcdTlsOptions {
  std::string ca_path;
  std::string cert_path;
  std::string key_path;
  bool insecure = false;
};

struct EtcdTransport {
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      grpc::InsecureChannelCredentials();
  bool tls = false;
};

// The credentials for `endpoints` (as given to --etcd: HOST:PORT,
// http://HOST:PORT or https://HOST:PORT). Errors (INVALID_ARGUMENT, saying
// which flag to give): no TLS and no --etcd-insecure; only some of the
// three files; --etcd-insecure with them; an https:// endpoint without
// them or an http:// one with them; a file that cannot be read, is not
// PEM, a key that is not its certificate's, or a key others may read.
absl::StatusOr<EtcdTransport> EtcdTransportFor(
    const std::vector<std::string>& endpoints, const EtcdTlsOptions& options);

}  // namespace gantry::replication
