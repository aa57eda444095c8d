#!/usr/bin/env python3
"""The examples in README.md and docs/*.md marked `sh runnable` run as
shown, against a real cluster (gantryd and two agents on loopback, Slurm's
command names on the PATH as the gantry-slurm-compat package puts them),
each block in a fresh directory with `bash -e`: an example that no longer
works fails here, so the docs cannot rot.

A block is marked by its fence's info string: ```sh runnable. Blocks
without the mark (site paths, package installs, several hosts) are text."""

import os
import re
import tempfile

from gantry_cluster import ClusterTestCase, main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FENCE = re.compile(r"^```(.*)$")


def documents():
    paths = [os.path.join(ROOT, "README.md")]
    docs = os.path.join(ROOT, "docs")
    if os.path.isdir(docs):
        paths += sorted(os.path.join(docs, name) for name in os.listdir(docs)
                        if name.endswith(".md"))
    return paths


def runnable_blocks(path):
    """(line number, text) of each ```sh runnable block in the file."""
    blocks = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    inside = None  # (start line, runnable?)
    body = []
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if match is None:
            if inside is not None:
                body.append(line)
            continue
        if inside is None:
            inside = (number, match.group(1).split() == ["sh", "runnable"])
            body = []
        elif match.group(1).strip() == "" and not body_open_heredoc(body):
            if inside[1]:
                blocks.append((inside[0], "\n".join(body) + "\n"))
            inside = None
        else:
            body.append(line)
    return blocks


def body_open_heredoc(body):
    """Whether the block so far has a heredoc still open (its text may
    hold a ``` line of its own)."""
    open_tag = None
    for line in body:
        if open_tag is None:
            match = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", line)
            if match:
                open_tag = match.group(1)
        elif line.strip() == open_tag:
            open_tag = None
    return open_tag is not None


class DocsExamplesTest(ClusterTestCase):
    @classmethod
    def setUpClass(cls):
        cls.cluster = cls.start_class_cluster(agents=2)
        cls.cluster.add_slurm_commands()

    def test_the_docs_have_runnable_examples(self):
        found = sum(len(runnable_blocks(path)) for path in documents())
        self.assertGreaterEqual(
            found, 3, "README.md's tour has three runnable blocks; were the "
            "marks (```sh runnable) lost?")

    def test_every_runnable_example_runs(self):
        for path in documents():
            for line, text in runnable_blocks(path):
                where = f"{os.path.relpath(path, ROOT)}:{line}"
                with self.subTest(example=where):
                    directory = tempfile.mkdtemp(
                        prefix="example-", dir=self.cluster.work_dir)
                    os.chmod(directory, 0o755)
                    result = self.cluster.sh(
                        f"cd {directory} && set -eo pipefail\n{text}",
                        timeout=120)
                    self.assertEqual(
                        result.returncode, 0,
                        f"the example at {where} failed "
                        f"(exit {result.returncode}):\n{text}\n"
                        f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")


if __name__ == "__main__":
    main()
