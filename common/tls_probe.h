// Whether a controller address answers a TLS handshake: how a client that
// dialled it in plain TCP (no CA given) and failed tells "this controller
// speaks TLS, give a CA" from any other connection failure. gRPC reports
// the plaintext client's failure only as a closed or reset connection.
//
// Blocking (a connect and one handshake, each bounded by `timeout`); call
// it off any event loop. Thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace gantry {

// Whether `target` (a gRPC target: "HOST:PORT", "ipv4:IP:PORT",
// "dns:///HOST:PORT", "[IPv6]:PORT") completes a TLS handshake (its
// certificate is not checked: only whether it speaks TLS): true if so,
// false when it accepted the connection and is not TLS, nullopt when
// there is nothing to ask (a unix target, an address that does not resolve,
// no connection).
std::optional<bool> SpeaksTls(const std::string& target,
                              std::chrono::milliseconds timeout);

}  // namespace gantry
