#include "agent/system/spawn_signals.h"

#include <signal.h>

namespace gantry::agent {

void ResetSignalsOnSpawn(posix_spawnattr_t& attributes) {
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attributes, &all);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  short flags = 0;
  posix_spawnattr_getflags(&attributes, &flags);
  posix_spawnattr_setflags(&attributes,
                           static_cast<short>(flags | POSIX_SPAWN_SETSIGDEF |
                                              POSIX_SPAWN_SETSIGMASK));
}

}  // namespace gantry::agent
