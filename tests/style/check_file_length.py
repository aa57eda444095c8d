#!/usr/bin/env python3
"""Fails when a source file of the repository is longer than 800 lines.

A file that long holds more than one job; split it by concern (as
daemon/main.cc's flags went to daemon/gantryd_flags.cc). Counted: the C++
sources and headers, Python, shell, protobuf and CMake files that git
tracks; not documentation, data or fuzz corpora, nor others' files kept
as they are (a third_party/ folder).

Usage: check_file_length.py [SOURCE_ROOT]   (default: the repository
holding it)
"""

import os
import subprocess
import sys

MAX_LINES = 800
SUFFIXES = (".cc", ".h", ".py", ".sh", ".proto", ".cmake")


def counted(path):
    name = os.path.basename(path)
    return name == "CMakeLists.txt" or name.endswith(SUFFIXES)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..")
    files = subprocess.run(["git", "-C", root, "ls-files"], check=True,
                           capture_output=True, text=True).stdout.split("\n")
    too_long = []
    for path in filter(None, files):
        if not counted(path) or "third_party/" in path:
            continue
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue  # deleted in the working tree, not yet committed
        with open(full, "rb") as source:
            lines = source.read().count(b"\n")
        if lines > MAX_LINES:
            too_long.append((lines, path))
    for lines, path in sorted(too_long, reverse=True):
        print(f"{path}: {lines} lines (at most {MAX_LINES}): split it by "
              "concern")
    return 1 if too_long else 0


if __name__ == "__main__":
    sys.exit(main())
