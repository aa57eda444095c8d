#!/usr/bin/env python3
"""Fails when a source file includes a header from a layer it may not use.

Every source directory belongs to one layer, and LAYERS below says which
layers each one may include. The compiler holds each target to the
headers of what it links (its include roots: gantry_include_root in the
top CMakeLists.txt), so an include of a library a target does not link
fails to compile; what it cannot tell is whether that link itself is
allowed. This test reads every #include "..." under common/, daemon/,
agent/ and cli/ and names each edge the table does not allow, with the
file and line, so the layering stays a fact rather than a description.

Usage: check_layers.py [SOURCE_ROOT]   (default: the repository holding it)
"""

import os
import re
import sys

# Layer -> the layers its files may include (besides its own). Generated
# code is a layer too: "gantry/v1/*.pb.h" is the wire contract (proto/),
# "etcd/..." etcd's API (proto/etcd, HA only). Anything else in quotes
# (absl, CLI11, toml++, prometheus, grpcpp) is a third-party library and
# is not a layer.
LAYERS = {
    # Shared by every binary: config, logging, hostlists, wire helpers.
    "common": {"proto"},
    # gantryd, from the bottom up.
    "daemon/scheduler": {"common"},
    "daemon/simulator": {"common", "daemon/scheduler"},
    "daemon/store": {"common", "proto"},
    "daemon/launch": {"common", "proto", "daemon/scheduler"},
    "daemon/replication": {"common", "proto", "etcd", "daemon/store"},
    # The controller's core: the tables and the classes over them.
    "daemon/controller/core": {
        "common", "proto", "daemon/scheduler", "daemon/store",
        "daemon/launch"},
    # Read-only views over a const state of the core.
    "daemon/controller/views": {
        "common", "proto", "daemon/scheduler", "daemon/store",
        "daemon/launch", "daemon/controller/core"},
    # The Controller, the facade over the core and the views.
    "daemon/controller": {
        "common", "proto", "daemon/scheduler", "daemon/store",
        "daemon/launch", "daemon/controller/core",
        "daemon/controller/views"},
    # Features beside the controller's core (core/controller_feature.h):
    # they see the core only; the core never names them.
    "daemon/controller/features": {
        "common", "proto", "daemon/scheduler", "daemon/store",
        "daemon/launch", "daemon/controller/core"},
    # The rpc layer hands a feature the requests it answers
    # (Controller::FindFeature).
    "daemon/rpc": {
        "common", "proto", "daemon/controller", "daemon/controller/core",
        "daemon/controller/features", "daemon/scheduler", "daemon/store",
        "daemon/launch"},
    # gantryd's main.cc wires the layers together.
    "daemon": {
        "common", "proto", "daemon/scheduler", "daemon/store",
        "daemon/launch", "daemon/replication", "daemon/controller",
        "daemon/controller/core", "daemon/controller/features",
        "daemon/rpc"},
    # The node agent's rooms, from the bottom up; like the CLI it shares
    # only common/ and the wire contract with gantryd.
    "agent/system": {"common", "proto"},
    "agent/discovery": {"common", "proto", "agent/system"},
    "agent/launch": {"common", "proto", "agent/system"},
    "agent/preflight": {"common", "proto", "agent/system"},
    "agent/datasets": {"common", "proto", "agent/system", "agent/launch"},
    "agent/checkpoint": {
        "common", "proto", "agent/system", "agent/launch", "agent/preflight"},
    "agent/link": {"common", "proto", "agent/launch"},
    # The Agent (agent/agent.h) and gantry-agent's main join the rooms;
    # simulated nodes (gantry-fleet) reuse the rooms beside it, never it.
    "agent": {
        "common", "proto", "agent/system", "agent/discovery", "agent/launch",
        "agent/preflight", "agent/datasets", "agent/checkpoint",
        "agent/link"},
    "agent/simulated": {
        "common", "proto", "agent/system", "agent/discovery", "agent/launch",
        "agent/preflight", "agent/link"},
    # The CLI's rooms, from the bottom up; cli/'s top (main.cc, the command
    # table) sees them all.
    "cli/client": {"common", "proto"},
    "cli/views": {"common", "proto"},
    "cli/slurm": {"common", "proto", "cli/views"},
    "cli/steps": {"common", "proto", "cli/client"},
    "cli/commands": {
        "common", "proto", "cli", "cli/client", "cli/views", "cli/slurm",
        "cli/steps"},
    "cli": {
        "common", "proto", "cli/client", "cli/views", "cli/slurm",
        "cli/steps", "cli/commands"},
}

CHECKED_ROOTS = ("common", "daemon", "agent", "cli")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def daemon_layer(parts):
    """daemon/X/... -> daemon/X; daemon/controller/features/...,
    daemon/controller/core/... and daemon/controller/views/... are layers
    of their own."""
    if (parts[1] == "controller" and len(parts) > 3
            and parts[2] in ("features", "core", "views")):
        return "daemon/controller/" + parts[2]
    return "daemon/" + parts[1] if len(parts) > 2 else "daemon"


def room_layer(parts):
    """agent/ROOM/... -> agent/ROOM, cli/ROOM/... -> cli/ROOM; the files at
    the top of agent/ or cli/ -> agent or cli."""
    return parts[0] + "/" + parts[1] if len(parts) > 2 else parts[0]


def layer_of_source(relative_path):
    parts = relative_path.split("/")
    if parts[0] == "daemon":
        return daemon_layer(parts)
    if parts[0] in ("agent", "cli"):
        return room_layer(parts)
    return parts[0]


def layer_of_include(header):
    """The layer an include names, or None for third-party headers."""
    parts = header.split("/")
    if len(parts) < 2:
        return None
    if parts[0] == "gantry":
        return "proto"
    if parts[0] == "etcd":
        return "etcd"
    if parts[0] == "daemon":
        return daemon_layer(parts)
    if parts[0] in ("agent", "cli"):
        return room_layer(parts)
    if parts[0] in CHECKED_ROOTS:
        return parts[0]
    return None


def violations(source_root):
    found = []
    checked = 0
    for top in CHECKED_ROOTS:
        for directory, _, files in os.walk(os.path.join(source_root, top)):
            for name in sorted(files):
                if not name.endswith((".cc", ".h")):
                    continue
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, source_root)
                layer = layer_of_source(relative)
                if layer not in LAYERS:
                    found.append(f"{relative}: directory is in no layer; "
                                 "add it to LAYERS in "
                                 "tests/style/check_layers.py")
                    continue
                allowed = LAYERS[layer] | {layer}
                checked += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        target = layer_of_include(match.group(1))
                        if target is not None and target not in allowed:
                            found.append(
                                f"{relative}:{number}: {layer} includes "
                                f"{match.group(1)} ({target}); {layer} may "
                                f"include only {', '.join(sorted(allowed))}")
    return found, checked


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    source_root = (sys.argv[1] if len(sys.argv) > 1 else
                   os.path.dirname(os.path.dirname(here)))
    found, checked = violations(source_root)
    if checked == 0 and not found:
        print(f"check_layers: no sources under {source_root}",
              file=sys.stderr)
        return 1
    for line in found:
        print(line)
    if found:
        print(f"check_layers: {len(found)} include(s) cross a layer "
              "boundary; see LAYERS in tests/style/check_layers.py",
              file=sys.stderr)
        return 1
    print(f"check_layers: {checked} files, every include within its layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
