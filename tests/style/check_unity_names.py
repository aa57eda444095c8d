#!/usr/bin/env python3
"""Fails when two sources of one library define a file-local function of the
same name, or a source defines a file-local function named like a function
its library's headers declare.

Every library is a unity build (CMakeLists.txt): its sources are compiled
in batches of 8 as one translation unit, so an anonymous namespace is shared
by the batch. Two file-local functions of one name then either fail to
compile or, worse, overload each other: an unqualified call picks whichever
matches best. That happened: a steady-clock NowMs() in one CLI source was
called by another source meant to call the wall-clock NowMs() of
cli/client/command_support.h, and sacct's default time window ended in
1970. Which sources share a batch changes whenever a file is added, so the
rule is checked for the whole library, not the batches of today.

A library here is a source folder's files compiled together: agent/ with
its rooms, cli/ with its rooms, common/, and each daemon/ folder (a
controller feature folder is its own). Functions are found by their
definition lines (a name followed by "(" on a line that starts a
definition), inside `namespace {` ... `}  // namespace` blocks.

Usage: check_unity_names.py [SOURCE_ROOT]
"""

import collections
import os
import re
import sys

ANONYMOUS = re.compile(r"^namespace \{\n(.*?)^\}  // namespace\n", re.M | re.S)
DEFINITION = re.compile(
    r"^(?:inline |static |constexpr |template <[^>]*> )*"
    r"[A-Za-z_][\w:<>,\s\*&]*?[\s\*&]([A-Z]\w*)\(", re.M)


def library_of(relative):
    parts = relative.split("/")
    if parts[0] in ("agent", "cli", "common"):
        return parts[0]
    if parts[:3] == ["daemon", "controller", "features"] and len(parts) > 4:
        return "/".join(parts[:4])
    return "/".join(parts[:-1])


def scan(source_root):
    local = collections.defaultdict(lambda: collections.defaultdict(set))
    declared = collections.defaultdict(lambda: collections.defaultdict(set))
    for top in ("common", "daemon", "agent", "cli"):
        for directory, _, files in os.walk(os.path.join(source_root, top)):
            for name in sorted(files):
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, source_root)
                library = library_of(relative)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                if name.endswith(".h"):
                    outside = ANONYMOUS.sub("", text)
                    for match in DEFINITION.finditer(outside):
                        declared[library][match.group(1)].add(relative)
                elif name.endswith(".cc"):
                    for block in ANONYMOUS.finditer(text):
                        for match in DEFINITION.finditer(block.group(1)):
                            local[library][match.group(1)].add(relative)
    return local, declared


def main():
    source_root = (sys.argv[1] if len(sys.argv) > 1 else
                   os.path.join(os.path.dirname(__file__), "..", ".."))
    local, declared = scan(os.path.abspath(source_root))
    problems = []
    for library in sorted(local):
        for name, sources in sorted(local[library].items()):
            if len(sources) > 1:
                problems.append(f"{library}: {name} is file-local in "
                                f"{', '.join(sorted(sources))}")
            headers = declared[library].get(name)
            if headers:
                problems.append(f"{library}: {name} is file-local in "
                                f"{', '.join(sorted(sources))} and declared "
                                f"in {', '.join(sorted(headers))}")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check_unity_names: {len(problems)} clashes; a unity batch "
              "shares file-local names (give each a name of its own, or "
              "share one function through a header)")
        return 1
    print("check_unity_names: every file-local function name is its "
          "library's own")
    return 0


if __name__ == "__main__":
    sys.exit(main())
