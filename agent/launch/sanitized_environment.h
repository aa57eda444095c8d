// The environment a rank starts with, built from nothing but the job's
// request: the submitter's exported environment, the identity the rank runs
// as, and the variables Gantry sets for the rank. Nothing of the agent's own
// environment (its LD_PRELOAD, LD_LIBRARY_PATH, credentials, config) reaches
// a rank; USER, LOGNAME and SHELL describe the user the rank runs as on this
// node, and HOME is the submitter's (the user's home when the job exports
// none).
//
// Thread-safe (a pure function).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agent/launch/rank_identity.h"

namespace gantry::agent {

// "KEY=value" strings for execve, sorted by key. In order of precedence,
// lowest first: HOME from `identity` when the job has none, `job` (the
// exported submit environment, HOME included, as Slurm's --export=ALL),
// USER, LOGNAME and SHELL from `identity` (where known), a default PATH
// when the job has none, then `rank` (GANTRY_*, RANK, MASTER_ADDR, ...).
std::vector<std::string> SanitizedRankEnvironment(
    const std::map<std::string, std::string>& job,
    const std::map<std::string, std::string>& rank,
    const RankIdentity& identity);

}  // namespace gantry::agent
