"""Hostlists exactly as Slurm's: thousands of generated expressions (seeded,
so every run checks the same ones) expanded by `gantry hostnames` and by
Debian's real `scontrol show hostnames`, and compressed by `gantry
hostlist` and by the real `scontrol show hostlist`, must give the same
names, the same expression, and fail on the same input.

The generator writes what people and Slurm write: prefixes with and without
digits, zero padding of every kind, several bracket groups, bracket lists
without a prefix, commas and spaces between items, duplicates and unsorted
names; plus the mistakes both must refuse (a range ending before it starts,
an empty or non-numeric range, text after the last bracket). Input that
Slurm silently turns into garbage (an unbalanced bracket) is left out: Gantry
refuses it on purpose (common/hostlist.h).

Skipped, with a message, where slurm-client's scontrol is absent.
"""

import concurrent.futures
import os
import random
import shutil
import subprocess
import tempfile
import unittest

import gantry_cluster
from gantry_cluster import build_dir

SEED = 20261204
EXPRESSIONS = 3000
NAME_LISTS = 2000

SLURM_CONF = """ClusterName=difftest
SlurmctldHost=localhost
AuthType=auth/none
CredType=cred/none
NodeName=node1 CPUs=1 State=UNKNOWN
PartitionName=debug Nodes=node1 Default=YES
"""


def real_scontrol():
    """Debian's scontrol, or None (absent, or gantry's own under that
    name, which gantry-slurm-compat installs)."""
    path = shutil.which("scontrol")
    if path is None:
        return None
    if "gantry" in os.path.realpath(path):
        return None
    return path


def number(rng, value_max=120):
    value = rng.randint(0, value_max)
    width = len(str(value)) + rng.choice([0, 0, 0, 1, 2])
    return str(value).zfill(width), value


def range_spec(rng):
    lo_text, lo = number(rng)
    form = rng.random()
    if form < 0.35:
        return lo_text
    if form < 0.4:
        return lo_text + "-"
    hi = lo + rng.randint(0, 12)
    hi_text = str(hi).zfill(rng.choice([0, len(lo_text), len(str(hi)) + 1]))
    return f"{lo_text}-{hi_text}"


def prefix(rng, allow_empty=True):
    choices = ["n", "node", "gpu-a", "x01b", "r1n", "a.b", "cn_", "a-"]
    if allow_empty:
        choices += ["", ""]
    return rng.choice(choices)


def bracket(rng):
    return "[" + ",".join(range_spec(rng)
                          for _ in range(rng.randint(1, 3))) + "]"


def mistake(rng):
    return rng.choice([
        lambda: f"n[{rng.randint(5, 9)}-{rng.randint(0, 4)}]",
        lambda: "n[]",
        lambda: f"n[{rng.randint(1, 9)},]",
        lambda: "n[a-b]",
        lambda: f"n[1-{rng.randint(2, 5)}]x",
        lambda: "n[1-2-3]",
        lambda: "n[-3]",
        lambda: "n[1-70000]",
    ])()


def item(rng):
    kind = rng.random()
    if kind < 0.25:
        name = prefix(rng, allow_empty=False)
        if rng.random() < 0.8:
            name += number(rng)[0]
        return name
    if kind < 0.9:
        return prefix(rng) + bracket(rng)
    if kind < 0.97:
        groups = rng.randint(2, 3)
        text = prefix(rng)
        for g in range(groups):
            text += "[" + ",".join(range_spec(rng) for _ in range(
                rng.randint(1, 2))) + "]"
            if g + 1 < groups:
                text += rng.choice(["b", "-n", "c0", "_"])
        return text
    return mistake(rng)


def expression(rng):
    separator = rng.choice([",", ",", " ", ", "])
    return separator.join(item(rng) for _ in range(rng.randint(1, 4)))


def name_list(rng):
    """Host names, as a user would paste them: unsorted, duplicated, padded
    in mixed ways, under a few prefixes."""
    prefixes = rng.sample(["n", "node", "a", "gpu", "x1y", ""], 2)
    names = []
    for _ in range(rng.randint(1, 12)):
        p = rng.choice(prefixes)
        if rng.random() < 0.1 and p:
            names.append(p)
            continue
        value = rng.randint(0, 30) if rng.random() < 0.8 else rng.randint(0, 200)
        names.append(p + str(value).zfill(rng.choice([0, 0, 2, 3])))
        if rng.random() < 0.5:
            # Runs: the next few numbers, the material of ranges.
            for step in range(1, rng.randint(1, 5)):
                names.append(p + str(value + step).zfill(
                    rng.choice([0, 0, 2])))
    return ",".join(names)


class HostlistDifferentialTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.scontrol = real_scontrol()
        if cls.scontrol is None:
            raise unittest.SkipTest(
                "Debian's scontrol (package slurm-client) is not installed: "
                "nothing to compare hostlists with")
        cls.tmp = tempfile.TemporaryDirectory(prefix="gantry-hostlist-")
        conf = os.path.join(cls.tmp.name, "slurm.conf")
        with open(conf, "w") as f:
            f.write(SLURM_CONF)
        cls.env = dict(os.environ, SLURM_CONF=conf)
        cls.gantry = os.path.join(build_dir(), "cli", "gantry")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def slurm(self, what, text):
        """(ok, lines) from the real scontrol: it reports a bad hostlist
        with "Invalid hostlist" (and exit code 0 for hostnames)."""
        done = subprocess.run([self.scontrol, "show", what, text],
                              capture_output=True, text=True, env=self.env,
                              timeout=30)
        output = done.stdout + done.stderr
        if done.returncode != 0 or "Invalid hostlist" in output:
            return False, []
        return True, done.stdout.split()

    def ours(self, what, text):
        done = subprocess.run([self.gantry, what, text], capture_output=True,
                              text=True, timeout=30)
        if done.returncode != 0:
            self.assertIn(f"gantry {what}: error: invalid hostlist",
                          done.stderr)
            return False, []
        return True, done.stdout.split()

    def compare(self, cases):
        """cases: [(scontrol word, gantry word, text)]; all differences are
        reported together."""
        def both(case):
            slurm_word, our_word, text = case
            return (case, self.slurm(slurm_word, text),
                    self.ours(our_word, text))

        differences = []
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            for case, slurm, ours in pool.map(both, cases):
                if slurm != ours:
                    differences.append(
                        f"{case[0]} {case[2]!r}: slurm {slurm} gantry {ours}")
        self.assertEqual(differences[:20], [],
                         f"{len(differences)} of {len(cases)} differ")

    def test_expansion_of_generated_expressions(self):
        rng = random.Random(SEED)
        exprs = [expression(rng) for _ in range(EXPRESSIONS)]
        errors = sum(1 for e in exprs if "[]" in e or "a-b" in e)
        self.assertGreater(errors, 0)  # the generator does make mistakes
        self.compare([("hostnames", "hostnames", e) for e in exprs])

    def test_compression_of_generated_expressions(self):
        rng = random.Random(SEED + 1)
        exprs = [expression(rng) for _ in range(EXPRESSIONS // 2)]
        self.compare([("hostlist", "hostlist", e) for e in exprs])

    def test_compression_of_name_lists(self):
        rng = random.Random(SEED + 2)
        lists = [name_list(rng) for _ in range(NAME_LISTS)]
        self.compare([("hostlist", "hostlist", names) for names in lists])

    def test_scontrol_name_answers_show_hostlist_and_hostnames(self):
        # As gantry-slurm-compat installs it: scontrol, a link to gantry.
        link = os.path.join(self.tmp.name, "scontrol")
        os.symlink(self.gantry, link)
        for words, expected in (
                (["show", "hostlist", "a1,a2,a3,b01"], "a[1-3],b01\n"),
                (["show", "hostnames", "[1,3-5]"], "1\n3\n4\n5\n")):
            done = subprocess.run([link, *words], capture_output=True,
                                  text=True, timeout=30)
            self.assertEqual((done.returncode, done.stdout), (0, expected),
                             done.stderr)

    def test_examples_from_the_issue(self):
        self.compare([
            ("hostnames", "hostnames", "[1,3-5]"),
            ("hostnames", "hostnames", "a[1-2]b[3-4]"),
            ("hostnames", "hostnames", "n1 n2,n[3-4]"),
            ("hostlist", "hostlist", "a1,a2,a3,b01"),
            ("hostlist", "hostlist", "a009,a010,a10,a9"),
        ])


if __name__ == "__main__":
    gantry_cluster.main()
