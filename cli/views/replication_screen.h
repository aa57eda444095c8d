// The replication part of `gantry status` (gantryd --etcd): which
// controller leads, each controller's role and how far behind the leader
// its copy of the state is, and each etcd member's health; as screen lines
// and as JSON. Thread-safe (pure).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gantry/v1/client.pb.h"

namespace gantry::cli {

// (label, text) lines for the status screen; none when replication is off.
std::vector<std::pair<std::string, std::string>> ReplicationLines(
    const v1::ReplicationStatus& replication);

// {"leader", "last_index", "controllers": [...], "etcd": [...]}; null when
// replication is off.
nlohmann::json ReplicationToJson(const v1::ReplicationStatus& replication);

}  // namespace gantry::cli
