#!/usr/bin/env python3
"""Shared state between threads is checked by clang's -Wthread-safety.

Three rules, over common/, daemon/, agent/ and cli/:

1. Threads share state through common/mutex.h (Mutex, MutexLock, CondVar:
   std::mutex underneath, with the annotations clang reads), never through
   a bare std::mutex, std::lock_guard, std::unique_lock or
   std::condition_variable, which the analysis cannot see.
2. Every Mutex member (or global) guards something it names: some ABSL_GUARDED_BY,
   ABSL_PT_GUARDED_BY or ABSL_EXCLUSIVE_LOCKS_REQUIRED in the same file
   names it.
3. Every source that uses them, directly or through the headers it
   includes, compiles with clang -fsyntax-only -Wthread-safety
   -Werror=thread-safety, with its own compile command (from
   compile_commands.json, as style.tidy takes them).

Usage: check_thread_safety.py [--rules-only] BUILD_DIR SOURCE_ROOT [PATH...]
--rules-only checks rules 1 and 2 (a second; the quick tier runs it);
PATHs (relative to SOURCE_ROOT) limit the analysis to those sources.
Exits 4 (skipped) without clang++ (rules 1 and 2 are checked regardless).
"""
import concurrent.futures
import os
import re
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_tidy import CHECKED_ROOTS, commands_by_source  # noqa: E402

SKIPPED = 4
WRAPPER = "common/mutex.h"
BARE = re.compile(r"std::(mutex|lock_guard|unique_lock|scoped_lock|"
                  r"shared_mutex|shared_lock|recursive_mutex|"
                  r"condition_variable(_any)?)\b")
# Data members (name_) and globals (g_name): a function's local Mutex
# cannot be named in an annotation.
MUTEX_MEMBER = re.compile(
    r"^\s*(?:mutable\s+)?Mutex\s+(\w+_|g_\w+)\s*(?:\{\})?;", re.M)
NAMED_BY = r"ABSL_(?:PT_)?GUARDED_BY|ABSL_EXCLUSIVE_LOCKS_REQUIRED"
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
COMMENT = re.compile(r"//[^\n]*")


def sources_under(root):
    for top in CHECKED_ROOTS:
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith((".cc", ".h")):
                    path = os.path.join(directory, name)
                    yield os.path.relpath(path, root)


def rule_findings(texts):
    """Rules 1 and 2: one line per finding."""
    findings = []
    for relative, text in sorted(texts.items()):
        if relative == WRAPPER:
            continue
        code = COMMENT.sub("", text)
        for match in BARE.finditer(code):
            line = code.count("\n", 0, match.start()) + 1
            findings.append(f"{relative}:{line}: {match.group(0)}: use "
                            f"Mutex, MutexLock or CondVar ({WRAPPER})")
        for match in MUTEX_MEMBER.finditer(code):
            name = re.escape(match.group(1))
            if not re.search(rf"(?:{NAMED_BY})\([^)]*\b{name}\b", code):
                line = code.count("\n", 0, match.start()) + 1
                findings.append(
                    f"{relative}:{line}: Mutex {match.group(1)} guards "
                    f"nothing: name it in ABSL_GUARDED_BY on what it guards")
    return findings


def sources_that_share_state(texts):
    """The .cc files that can touch guarded state: those that include
    common/mutex.h or a header that does (a class's members may be
    written in several sources). Following includes further would parse
    about twice as many sources, none of which reaches a guarded member
    (they are private)."""
    def shares(path):
        return '#include "common/mutex.h"' in texts.get(path, "")
    return sorted(path for path, text in texts.items()
                  if path.endswith(".cc") and (shares(path) or any(
                      shares(included) for included in INCLUDE.findall(text))))


def preprocessor_arguments(arguments):
    """What a syntax check needs of a compile command: -I, -isystem, -D
    and -std (gcc's code generation and warning options do not matter)."""
    kept = []
    taking_next = False
    for argument in arguments:
        if taking_next:
            kept.append(argument)
            taking_next = False
        elif argument == "-isystem":
            kept.append(argument)
            taking_next = True
        elif argument.startswith(("-I", "-D", "-std=", "-isystem")):
            kept.append(argument)
    return kept


def main():
    arguments = sys.argv[1:]
    rules_only = "--rules-only" in arguments
    arguments = [argument for argument in arguments
                 if argument != "--rules-only"]
    build_dir, root = (os.path.abspath(p) for p in arguments[:2])
    only = set(arguments[2:])
    texts = {}
    for relative in sources_under(root):
        with open(os.path.join(root, relative), encoding="utf-8") as f:
            texts[relative] = f.read()
    findings = rule_findings(texts)
    for finding in findings:
        print(finding)
    if rules_only:
        print(f"check_thread_safety: {len(findings)} rule findings")
        return 1 if findings else 0
    clang = shutil.which("clang++")
    if clang is None:
        print("check_thread_safety: clang++ is not installed: "
              "the analysis itself is skipped")
        return 1 if findings else SKIPPED
    commands = commands_by_source(build_dir)
    sources = [path for path in sources_that_share_state(texts)
               if not only or path in only]

    def check(relative):
        path = os.path.join(root, relative)
        if path not in commands:
            return None, False
        directory, command = commands[path]
        arguments = preprocessor_arguments(shlex.split(command)[1:])
        result = subprocess.run(
            [clang, "-fsyntax-only", "-Wno-everything", "-Wthread-safety",
             "-Werror=thread-safety", *arguments, path],
            cwd=directory, capture_output=True, text=True)
        if result.returncode == 0:
            return None, True
        return f"== {relative}\n{result.stderr.strip()}", True

    failed = 0
    checked = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        for text, compiled in pool.map(check, sources):
            checked += compiled
            if text:
                print(text, flush=True)
                failed += 1
    print(f"check_thread_safety: {len(findings)} rule findings; "
          f"{checked} sources analysed, {failed} with warnings")
    return 1 if findings or failed else 0


if __name__ == "__main__":
    sys.exit(main())
