"""The cluster's config file, packaging/gantry.toml (installed as
/etc/gantry/gantry.toml), read by the real daemons with --check-config.

- Every flag of gantryd and of gantry-agent (from --help) is in the
  shipped file, in its daemon's table, with the default --help shows.
- The shipped file loads (all keys commented: no settings), and so does a
  copy with every key uncommented.
- Mistakes stop a daemon with exit code 2 and a message naming the file's
  line: a key outside any table, an unknown table, an unknown key, a value
  of the wrong type or out of range.
"""

import os
import re
import subprocess
import tempfile
import unittest

import gantry_cluster
from gantry_cluster import build_dir

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHIPPED = os.path.join(REPO, "packaging", "gantry.toml")
DAEMONS = {"controller": "daemon/gantryd", "agent": "agent/gantry-agent",
           "fleet": "agent/simulated/gantry-fleet"}
# Options of the command line only: not settings.
NOT_KEYS = {"help", "version", "config", "check-config"}
# Defaults computed on the machine (--help shows this host's name); the
# file shows an example.
COMPUTED = {"node-name", "name", "advertise"}


def binary(table):
    return os.path.join(build_dir(), DAEMONS[table])


def help_flags(table):
    """{flag name: default shown by --help, or None}."""
    text = subprocess.run([binary(table), "--help"], capture_output=True,
                          text=True, check=True, timeout=30).stdout
    flags = {}
    for line in text.splitlines():
        # CLI11: "  --name TYPE[:CHECK][=DEFAULT]", then two spaces and the
        # description (or the description on the next line).
        column = re.split(r"\s{2,}", line.strip())[0]
        match = re.match(r"(?:-\w,)?--([a-z][a-z0-9-]*)(.*)$", column)
        if match and match.group(1) not in NOT_KEYS:
            spec = match.group(2)
            flags[match.group(1)] = (spec.rsplit("=", 1)[1] if "=" in spec
                                     else None)
    return flags


def shipped_keys():
    """{table: {key: value text}} of the commented `# key = value` lines."""
    tables, table = {}, None
    with open(SHIPPED) as f:
        for line in f:
            header = re.match(r"\[(\w+)\]\s*$", line)
            if header:
                table = tables.setdefault(header.group(1), {})
                continue
            key = re.match(r"# ([a-z][a-z0-9-]*) = (.*)$", line)
            if key and table is not None:
                table[key.group(1)] = key.group(2).strip()
    return tables


def check(table, path, *extra):
    return subprocess.run(
        [binary(table), f"--config={path}", "--check-config", *extra],
        capture_output=True, text=True, timeout=30)


class ShippedFileTest(unittest.TestCase):

    def test_every_flag_is_in_its_table_with_its_default(self):
        tables = shipped_keys()
        self.assertEqual(sorted(tables),
                         ["agent", "client", "controller", "fleet"])
        # The CLI's table (cli/client/client_config.h; test_client_config.py).
        self.assertEqual(sorted(tables["client"]),
                         ["controller", "tls-ca", "tls-server-name"])
        for table in DAEMONS:
            flags = help_flags(table)
            self.assertGreater(len(flags), 5, f"parsed {table} --help")
            missing = sorted(set(flags) - set(tables[table]))
            self.assertEqual(missing, [],
                             f"flags of {DAEMONS[table]} missing from "
                             f"[{table}] in packaging/gantry.toml")
            extra = sorted(set(tables[table]) - set(flags))
            self.assertEqual(extra, [], f"[{table}] keys that are no flags")
            for key, default in flags.items():
                if default is None or key in COMPUTED:
                    continue
                shown = tables[table][key].strip('"')
                if default.endswith(" ..."):
                    # A repeatable flag: CLI11 shows "[a,b] ...", the file
                    # a TOML list.
                    default = default[:-len(" ...")]
                    shown = "[" + ",".join(
                        item.strip().strip('"')
                        for item in shown.strip("[]").split(",")) + "]"
                if re.fullmatch(r"[0-9.]+", default):
                    self.assertEqual(float(shown), float(default),
                                     f"[{table}] {key}")
                else:
                    self.assertEqual(shown, default, f"[{table}] {key}")

    def test_shipped_file_loads_as_is(self):
        for table in DAEMONS:
            result = check(table, SHIPPED)
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn("configuration OK", result.stdout)

    def test_uncommented_copy_loads(self):
        with tempfile.TemporaryDirectory() as scratch:
            # --hwloc-xml must name an existing file.
            xml = os.path.join(scratch, "node.xml")
            open(xml, "w").close()
            with open(SHIPPED) as f:
                text = re.sub(r"^# ([a-z][a-z0-9-]*) = ", r"\1 = ", f.read(),
                              flags=re.M)
            text = text.replace('"/etc/gantry/node.xml"', f'"{xml}"')
            path = os.path.join(scratch, "gantry.toml")
            with open(path, "w") as f:
                f.write(text)
            for table in DAEMONS:
                result = check(table, path)
                self.assertEqual(result.returncode, 0, result.stderr)


class MistakesTest(unittest.TestCase):

    def refused(self, table, text, *expected):
        with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
            f.write(text)
            f.flush()
            result = check(table, f.name)
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        for part in expected:
            self.assertIn(part, result.stderr)
        return result.stderr

    def test_key_outside_any_table(self):
        for table in DAEMONS:
            self.refused(table, "# top\nlog-level = \"debug\"\n[agent]\n",
                         ':2: key "log-level" is outside any table')

    def test_unknown_table(self):
        for table in DAEMONS:
            self.refused(table, "[controller]\n[agnet]\nstop-grace = 1\n",
                         ":2: unknown table [agnet]")

    def test_unknown_key_in_own_table(self):
        self.refused("controller", "[controller]\n\nlisen = \"a:1\"\n",
                     ':3: unknown key "lisen" in [controller]')
        self.refused("agent", "[agent]\nstop-grase = 1\n",
                     ':2: unknown key "stop-grase" in [agent]')

    def test_other_daemons_table_is_skipped(self):
        # A key only gantryd has is fine in [controller] for the agent.
        with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
            f.write("[controller]\nkill-grace = 5\n[agent]\nstop-grace = 5\n")
            f.flush()
            for table in DAEMONS:
                result = check(table, f.name)
                self.assertEqual(result.returncode, 0, result.stderr)

    def test_bad_values_name_key_and_line(self):
        self.refused("controller", "[controller]\nkill-grace = 5000\n",
                     ':2: key "kill-grace" in [controller]')
        self.refused("controller", "[controller]\n\nlog-level = \"loud\"\n",
                     ':3: key "log-level" in [controller]')
        self.refused("agent", "[agent]\nstop-grace = \"soon\"\n",
                     ':2: key "stop-grace" in [agent]')
        self.refused("agent", "[agent]\nstop-grace = 1.5\n",
                     ':2: key "stop-grace" in [agent]')

    def test_command_line_is_checked_too(self):
        # The same exit code as a mistake in the file (daemon_flags.h), not
        # the flag parser's own (105 for a value out of range).
        result = check("controller", SHIPPED, "--kill-grace=-1")
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)
        self.assertIn("--kill-grace", result.stderr)
        result = check("agent", SHIPPED, "--no-such-flag")
        self.assertEqual(result.returncode, 2, result.stdout + result.stderr)


if __name__ == "__main__":
    gantry_cluster.main()
