#!/usr/bin/env python3
"""Writes docs/reference.md: every command and option, every configuration
key and every metric in one page.

The commands and options are the programs' own --help (gantry and each of
its subcommands, nested ones too, the Slurm names the gantry-slurm-compat
package installs, gantryd, gantry-agent, gantry-sim, gantry-fleet); the
configuration keys are those of the shipped packaging/gantry.toml, with its
words (as gantry.toml(5) has them). The metric table is written by hand: this script
keeps what stands between its two markers, and integration.metrics fails
when a daemon serves a metric the table does not name.

Usage:
  write_reference.py BUILD_DIR            rewrite docs/reference.md
  write_reference.py --check BUILD_DIR    exit 1 when it is out of date
                                          (style.reference runs this)
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "packaging", "man"))
from gantry_toml_page import parse  # noqa: E402

REFERENCE = os.path.join(ROOT, "docs", "reference.md")
CONFIG = os.path.join(ROOT, "packaging", "gantry.toml")
METRICS_BEGIN = "<!-- metrics: written by hand, kept by write_reference.py -->"
METRICS_END = "<!-- end of metrics -->"
# The names packaging/CMakeLists.txt installs (GANTRY_SLURM_NAMES).
SLURM_NAMES_LINE = re.compile(r"set\(GANTRY_SLURM_NAMES ([a-z ]+)\)")
SUBCOMMAND = re.compile(r"^  ([a-z][a-z-]*)  +(.*)$")


def help_text(program, path, *words):
    """`program words... --help`, run as `program` (its usage line names
    argv[0]), with no configuration or controller from this machine."""
    environment = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
                   "GANTRY_CONFIG": "/nonexistent/gantry.toml"}
    result = subprocess.run([program, *words, "--help"], executable=path,
                            capture_output=True, text=True, env=environment,
                            timeout=60)
    if result.returncode != 0:
        raise SystemExit(f"{program} {' '.join(words)} --help failed "
                         f"({result.returncode}): {result.stderr.strip()}")
    return result.stdout.rstrip()


def subcommands(text):
    """[(name, summary)] listed under "Subcommands:" in a --help text."""
    if "\nSubcommands:\n" not in text:
        return []
    listing = text.split("\nSubcommands:\n", 1)[1]
    found = []
    for line in listing.splitlines():
        match = SUBCOMMAND.match(line)
        if match:
            found.append((match.group(1), match.group(2)))
    return found


def block(text):
    return f"```text\n{text}\n```\n"


def command_sections(gantry):
    """gantry's help, then each subcommand's (and theirs), as sections."""
    top = help_text("gantry", gantry)
    out = ["## gantry\n", block(top)]

    # Each command's help is run once: its section, then its subcommands.
    def walk(words, text, depth):
        for name, _ in subcommands(text):
            path = [*words, name]
            heading = "#" * min(depth, 4)
            out.append(f"{heading} gantry {' '.join(path)}\n")
            child = help_text("gantry", gantry, *path)
            out.append(block(child))
            walk(path, child, depth + 1)

    walk([], top, 3)
    return out


def slurm_section(gantry):
    with open(os.path.join(ROOT, "packaging", "CMakeLists.txt")) as f:
        names = SLURM_NAMES_LINE.search(f.read()).group(1).split()
    out = ["## Slurm's names\n",
           "The gantry-slurm-compat package installs these as links to "
           "gantry; each answers with Slurm's options and output.\n"]
    for name in names:
        out.append(f"### {name}\n")
        out.append(block(help_text(name, gantry)))
    return out


def config_section():
    with open(CONFIG, encoding="utf-8") as f:
        tables = parse(f.read())
    out = ["## gantry.toml\n",
           "`/etc/gantry/gantry.toml` (`$GANTRY_CONFIG`; gantry.toml(5)): "
           "each daemon reads its own table, the CLI `[client]`. A key "
           "is its program's command-line option of the same name; the "
           "command line wins.\n"]
    for table, keys in tables:
        out.append(f"### [{table}]\n")
        for key, default, comments in keys:
            out.append(f"- **`{key}`** = `{default}`")
            words = []
            example = []
            for comment in comments:
                if comment.startswith("  "):
                    example.append(comment[2:])
                else:
                    words.append(comment.strip())
            if words:
                out.append(f"  {' '.join(words)}")
            if example:
                out.append("  ```text\n" + "\n".join(
                    f"  {line}" for line in example) + "\n  ```")
        out.append("")
    return out


def metrics_section(current):
    if METRICS_BEGIN in current and METRICS_END in current:
        kept = current.split(METRICS_BEGIN, 1)[1].split(METRICS_END, 1)[0]
    else:
        kept = "\n"
    return ["## Metrics\n", METRICS_BEGIN + kept + METRICS_END + "\n"]


def render(build_dir, current):
    gantry = os.path.join(build_dir, "cli", "gantry")
    daemons = [("gantryd", os.path.join(build_dir, "daemon", "gantryd")),
               ("gantry-agent", os.path.join(build_dir, "agent",
                                             "gantry-agent")),
               ("gantry-sim", os.path.join(build_dir, "daemon", "simulator",
                                           "gantry-sim")),
               ("gantry-fleet", os.path.join(build_dir, "agent", "simulated",
                                             "gantry-fleet"))]
    out = ["# Reference\n",
           "Every command and option, every configuration key and every "
           "metric. Written by `packaging/write_reference.py` from the "
           "programs' own `--help` and the shipped `packaging/gantry.toml` "
           "(`style.reference` fails when this page is out of date: run "
           "`python3 packaging/write_reference.py build`); the metric "
           "table is written by hand and `integration.metrics` fails when "
           "a daemon serves a metric it does not name. Guides: "
           "[user guide](user-guide.md), [admin guide](admin-guide.md).\n",
           "- [gantry](#gantry) and its subcommands",
           "- [Slurm's names](#slurms-names)",
           "- [gantryd](#gantryd), [gantry-agent](#gantry-agent), "
           "[gantry-sim](#gantry-sim), [gantry-fleet](#gantry-fleet)",
           "- [gantry.toml](#gantrytoml)",
           "- [Metrics](#metrics)\n"]
    out += command_sections(gantry)
    out += slurm_section(gantry)
    for name, path in daemons:
        out += [f"## {name}\n", block(help_text(name, path))]
    out += config_section()
    out += metrics_section(current)
    return "\n".join(out)


def main():
    arguments = sys.argv[1:]
    check = "--check" in arguments
    arguments = [a for a in arguments if a != "--check"]
    if len(arguments) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    current = ""
    if os.path.exists(REFERENCE):
        with open(REFERENCE, encoding="utf-8") as f:
            current = f.read()
    written = render(os.path.abspath(arguments[0]), current)
    if check:
        if written != current:
            print("docs/reference.md is out of date: run "
                  "python3 packaging/write_reference.py BUILD_DIR")
            return 1
        print("docs/reference.md is current")
        return 0
    with open(REFERENCE, "w", encoding="utf-8") as f:
        f.write(written)
    print(f"wrote {REFERENCE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
