// Whether a controller address answers a TLS handshake: how a client that
// dialled it in plain TCP (no CA given) and failed tells "this controller
// speaks TLS, give a CA" from any other connection failure. gRPC reports
// the plaintext client's failure only as a closed or reset connection.
//
// Blocking (a connect and one handshake, each bounded by `timeout`); call
// it off any event loop. Thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace gantry {

// True when `target` (a gRPC target: "HOST:PORT", "ipv4:IP:PORT",
// "dns:///HOST:PORT", "[IPv6]:PORT") accepts a connection and completes a
// TLS handshake (its certificate is not checked: only whether it speaks
// TLS). False for a unix target, an address that does not resolve or
// answer, or a peer that is not TLS.
bool SpeaksTls(const std::string& target, std::chrono::milliseconds timeout);

}  // namespace gantry
