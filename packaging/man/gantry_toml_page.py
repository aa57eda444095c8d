#!/usr/bin/env python3
"""Writes gantry.toml(5) from packaging/man/gantry.toml.5.in and the keys of
packaging/gantry.toml, so the page lists every key the shipped file does,
with the same default and words, and cannot fall behind it.

Usage: gantry_toml_page.py CONFIG TEMPLATE VERSION OUTPUT

In CONFIG, a table starts with "[name]"; a key is a comment line
"# key = default" (one space after '#'); the comment lines above it, back
to the previous key or table, describe it; lines indented further
("#   ...") are examples, kept as they are.
"""

import re
import sys

KEY = re.compile(r"^# ([a-z][a-z0-9-]*) = (.*)$")
TABLE = re.compile(r"^\[([a-z]+)\]$")


def roff_text(text):
    """Escapes a line of running text for roff."""
    text = text.replace("\\", "\\e")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def parse(config_text):
    """[(table, [(key, default, [comment lines])])] in file order."""
    tables = []
    comments = []
    for line in config_text.split("\n"):
        table = TABLE.match(line)
        if table:
            tables.append((table.group(1), []))
            comments = []
            continue
        if not tables:
            continue  # the file's own header, before the first table
        key = KEY.match(line)
        if key:
            tables[-1][1].append((key.group(1), key.group(2), comments))
            comments = []
        elif line.startswith("#"):
            comments.append(line[1:].removeprefix(" "))
        elif not line.strip():
            comments = []
    return tables


def key_entries(tables):
    out = []
    for table, keys in tables:
        out.append(f'.SS "[{table}]"')
        for key, default, comments in keys:
            out.append(".TP")
            out.append(f"\\fB{key}\\fR = {roff_text(default)}")
            in_example = False
            for comment in comments:
                example = comment.startswith("  ")
                if example and not in_example:
                    out.append(".RS\n.nf")
                elif not example and in_example:
                    out.append(".fi\n.RE")
                in_example = example
                out.append(roff_text(comment.strip() if not example
                                     else comment[2:]))
            if in_example:
                out.append(".fi\n.RE")
    return "\n".join(out)


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    config_path, template_path, version, output_path = sys.argv[1:]
    with open(config_path, encoding="utf-8") as f:
        tables = parse(f.read())
    if not any(keys for _, keys in tables):
        print(f"{config_path}: no keys found", file=sys.stderr)
        return 1
    with open(template_path, encoding="utf-8") as f:
        page = f.read()
    page = page.replace("@VERSION@", version).replace(
        "@KEYS@", key_entries(tables))
    with open(output_path, "w", encoding="utf-8") as f:
        f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
