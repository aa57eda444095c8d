#!/usr/bin/env python3
"""clang-tidy (the repository's .clang-tidy) on the C++ sources a change
added or edited, failing on any finding in them.

Every source of the tree would take most of an hour on 2 cores (each one
parses gRPC's and protobuf's headers), so this checks the change: the .cc
files added or modified (not only moved) between GANTRY_TIDY_BASE (default
HEAD~1, the last commit) and the working tree, and the headers among them
(through the sources that include them). Before committing, name the
branch point: GANTRY_TIDY_BASE=origin/main.

The build is a unity build, so compile_commands.json holds the batch files
(Unity/unity_N_cxx.cxx), not the sources: each source is checked with the
command of the batch that includes it.

Usage: check_tidy.py BUILD_DIR SOURCE_ROOT
Exits 4 (skipped) without clang-tidy, a git checkout or a previous commit.
"""
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

SKIPPED = 4
CHECKED_ROOTS = ("common/", "daemon/", "agent/", "cli/")
UNITY_INCLUDE = re.compile(r'^#include "(/[^"]+)"$', re.M)


def changed_sources(source_root, base):
    """The .cc files under the checked roots that the change added or
    edited, or None when the base is not there (a one-commit clone)."""
    git = ["git", "-C", source_root]
    if subprocess.run(git + ["rev-parse", "--verify", "-q", base],
                      capture_output=True).returncode != 0:
        return None
    listed = subprocess.run(
        git + ["diff", "--name-only", "--diff-filter=AM", "-M", base],
        capture_output=True, text=True, check=True).stdout.split()
    untracked = subprocess.run(
        git + ["ls-files", "--others", "--exclude-standard"],
        capture_output=True, text=True, check=True).stdout.split()
    return sorted(path for path in set(listed) | set(untracked)
                  if path.endswith((".cc", ".h"))
                  and path.startswith(CHECKED_ROOTS))


def commands_by_source(build_dir):
    """{absolute source path: compile command} from compile_commands.json,
    the unity batches' commands given to each source they include."""
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    commands = {}
    for entry in entries:
        path = entry["file"]
        command = entry["command"]
        if "/Unity/unity_" in path:
            with open(path) as batch:
                for source in UNITY_INCLUDE.findall(batch.read()):
                    commands[source] = (entry["directory"],
                                        command.replace(path, source))
        else:
            commands[path] = (entry["directory"], command)
    return commands


def main():
    build_dir, source_root = (os.path.abspath(p) for p in sys.argv[1:3])
    tidy = shutil.which("clang-tidy")
    if tidy is None:
        print("check_tidy: clang-tidy is not installed")
        return SKIPPED
    base = os.environ.get("GANTRY_TIDY_BASE", "HEAD~1")
    sources = changed_sources(source_root, base)
    if sources is None:
        print(f"check_tidy: no {base} to compare with (a shallow clone?)")
        return SKIPPED
    headers = [path for path in sources if path.endswith(".h")]
    sources = [path for path in sources if path.endswith(".cc")]
    if not sources:
        print(f"check_tidy: no C++ source added or edited since {base}")
        return 0
    # Findings in headers count only in the headers the change touched
    # (each is checked through the changed sources that include it).
    # A header is seen by the path it was included through: in the source
    # tree, or through a target's include root (the top CMakeLists.txt's
    # gantry_include_root links each header into
    # BUILD/include_roots/TARGET/FOLDER/).
    roots = "(" + re.escape(source_root) + "|" + re.escape(
        os.path.join(build_dir, "include_roots")) + "/[^/]+)"
    header_filter = "^" + roots + "/(" + "|".join(
        re.escape(path) for path in headers) + ")$"
    commands = commands_by_source(build_dir)

    def check(relative):
        path = os.path.join(source_root, relative)
        if path not in commands:
            return f"check_tidy: {relative}: not in the build (skipped)", False
        directory, command = commands[path]
        # The compiler's own flags stay (the sources' -I, -D, -std); gcc's
        # warning options clang does not know are not errors.
        arguments = shlex.split(command)[1:]
        result = subprocess.run(
            [tidy, "--quiet", "--warnings-as-errors=*",
             f"--header-filter={header_filter if headers else '^$'}", path,
             "--", "-Wno-unknown-warning-option", *arguments],
            cwd=directory, capture_output=True, text=True)
        if result.returncode == 0:
            return None, False
        return (f"== {relative}\n{result.stdout.strip()}\n"
                f"{result.stderr.strip()}"), True

    findings = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        for text, found in pool.map(check, sources):
            if text:
                print(text, flush=True)
            findings += found
    print(f"check_tidy: {len(sources)} sources changed since {base}, "
          f"{findings} with findings")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
