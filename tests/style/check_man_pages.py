#!/usr/bin/env python3
"""The man pages the packages install render cleanly and say what a reader
needs: gantryd(8), gantry-agent(8) and gantry-fleet(8) carry their
hand-written sections (EXAMPLES, ENVIRONMENT, FILES) beside the options
from --help, and
gantry.toml(5) names every key the shipped packaging/gantry.toml has.

Usage: check_man_pages.py BUILD_DIR SOURCE_ROOT
Exits 4 (skipped) when the build made no man pages (no help2man)."""

import gzip
import os
import re
import subprocess
import sys

SKIPPED = 4
PAGES = {
    "man8/gantryd.8.gz": ["EXAMPLES", "ENVIRONMENT", "FILES", "SEE ALSO",
                          "OPTIONS"],
    "man8/gantry-agent.8.gz": ["EXAMPLES", "ENVIRONMENT", "FILES",
                               "SEE ALSO", "OPTIONS"],
    "man8/gantry-fleet.8.gz": ["EXAMPLES", "ENVIRONMENT", "FILES",
                               "SEE ALSO", "OPTIONS"],
    "man5/gantry.toml.5.gz": ["KEYS", "EXAMPLES", "ENVIRONMENT", "FILES",
                              "SEE ALSO"],
}


def render(path):
    """The page as man shows it (plain text), and groff's warnings."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        source = f.read()
    warnings = subprocess.run(["groff", "-man", "-ww", "-z"], input=source,
                              capture_output=True, text=True).stderr
    text = subprocess.run(["groff", "-man", "-Tutf8", "-P-cbou"],
                          input=source, capture_output=True,
                          text=True).stdout
    return text, warnings


def shipped_keys(config_path):
    keys = []
    table = None
    with open(config_path, encoding="utf-8") as f:
        for line in f:
            header = re.match(r"^\[([a-z]+)\]$", line.strip())
            if header:
                table = header.group(1)
            key = re.match(r"^# ([a-z][a-z0-9-]*) = ", line)
            if key and table:
                keys.append((table, key.group(1)))
    return keys


def main():
    build, source = sys.argv[1], sys.argv[2]
    man_dir = os.path.join(build, "packaging", "man")
    if not os.path.isdir(man_dir):
        print("check_man_pages: no man pages built (help2man missing)")
        return SKIPPED
    problems = []
    rendered = {}
    for page, sections in PAGES.items():
        path = os.path.join(man_dir, page)
        if not os.path.exists(path):
            problems.append(f"{page}: not built")
            continue
        text, warnings = render(path)
        rendered[page] = text
        if warnings.strip():
            problems.append(f"{page}: groff warns: {warnings.strip()}")
        headings = set(re.findall(r"^([A-Z][A-Z ]+)$", text, re.M))
        for section in sections:
            if section not in headings:
                problems.append(f"{page}: no {section} section")
    config_page = rendered.get("man5/gantry.toml.5.gz", "")
    keys = shipped_keys(os.path.join(source, "packaging", "gantry.toml"))
    if len(keys) < 50:
        problems.append(f"packaging/gantry.toml: only {len(keys)} keys read")
    for table, key in keys:
        if not re.search(rf"^\s+{re.escape(key)} = ", config_page, re.M):
            problems.append(f"gantry.toml(5): key {key} of [{table}] missing")
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print(f"check_man_pages: {len(PAGES)} pages, {len(keys)} keys documented")
    return 0


if __name__ == "__main__":
    sys.exit(main())
