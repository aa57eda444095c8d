// What a node calls itself and where others reach it, when the command line
// does not say: the agent's and the simulated fleet's defaults.
#pragma once

#include <string>

namespace gantry::agent {

// The short host name (up to the first '.'), else "localhost".
std::string ShortHostName();

// The first non-loopback IPv4 address of this machine, else 127.0.0.1.
std::string FirstNonLoopbackAddress();

}  // namespace gantry::agent
