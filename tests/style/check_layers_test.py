#!/usr/bin/env python3
"""check_layers.py catches an upward include and passes a clean tree."""

import os
import subprocess
import sys
import tempfile
import unittest

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "check_layers.py")


def run_checker(tree):
    return subprocess.run([sys.executable, CHECKER, tree],
                          capture_output=True, text=True)


def write(root, relative, text):
    path = os.path.join(root, relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class CheckLayersTest(unittest.TestCase):
    def test_downward_and_third_party_includes_pass(self):
        with tempfile.TemporaryDirectory() as tree:
            write(tree, "daemon/controller/a.cc",
                  '#include "daemon/scheduler/placement.h"\n'
                  '#include "common/log.h"\n#include "absl/status/status.h"\n'
                  '#include "gantry/v1/types.pb.h"\n')
            write(tree, "agent/b.cc", '#include "common/log.h"\n')
            result = run_checker(tree)
            self.assertEqual(result.returncode, 0, result.stdout)

    def test_upward_include_names_file_line_and_layers(self):
        with tempfile.TemporaryDirectory() as tree:
            write(tree, "daemon/scheduler/a.cc",
                  '#include "common/log.h"\n\n'
                  '#include "daemon/controller/controller.h"\n')
            result = run_checker(tree)
            self.assertEqual(result.returncode, 1)
            self.assertIn("daemon/scheduler/a.cc:3", result.stdout)
            self.assertIn("may include only common, daemon/scheduler",
                          result.stdout)

    def test_agent_may_not_include_the_daemon(self):
        with tempfile.TemporaryDirectory() as tree:
            write(tree, "agent/a.h", '#include "daemon/store/store.h"\n')
            write(tree, "cli/b.cc", '#include "agent/agent.h"\n')
            result = run_checker(tree)
            self.assertEqual(result.returncode, 1)
            self.assertIn("agent/a.h:1", result.stdout)
            self.assertIn("cli/b.cc:1", result.stdout)

    def test_agent_rooms_include_down_only_and_never_the_fleet(self):
        with tempfile.TemporaryDirectory() as tree:
            write(tree, "agent/datasets/d.cc",
                  '#include "agent/launch/rank_identity.h"\n')
            write(tree, "agent/launch/l.cc",
                  '#include "agent/datasets/dataset_cache.h"\n')
            write(tree, "agent/agent.cc",
                  '#include "agent/datasets/dataset_cache.h"\n'
                  '#include "agent/simulated/simulated_fleet.h"\n')
            result = run_checker(tree)
            self.assertEqual(result.returncode, 1)
            self.assertIn("agent/launch/l.cc:1", result.stdout)
            self.assertIn("agent/agent.cc:2", result.stdout)
            self.assertNotIn("agent/agent.cc:1", result.stdout)
            self.assertNotIn("agent/datasets/d.cc", result.stdout)

    def test_the_core_may_not_name_a_feature(self):
        with tempfile.TemporaryDirectory() as tree:
            write(tree, "daemon/controller/features/goodput/g.cc",
                  '#include "daemon/controller/core/controller_feature.h"\n')
            write(tree, "daemon/controller/core/c.cc",
                  '#include "daemon/controller/features/goodput/g.h"\n')
            result = run_checker(tree)
            self.assertEqual(result.returncode, 1)
            self.assertIn("daemon/controller/core/c.cc:1", result.stdout)
            self.assertNotIn("goodput/g.cc", result.stdout)

    def test_a_feature_sees_the_core_not_the_facade(self):
        with tempfile.TemporaryDirectory() as tree:
            write(tree, "daemon/controller/features/goodput/g.cc",
                  '#include "daemon/controller/controller.h"\n')
            write(tree, "daemon/controller/core/c.cc",
                  '#include "daemon/controller/controller.h"\n')
            write(tree, "daemon/controller/controller.cc",
                  '#include "daemon/controller/core/controller_core.h"\n')
            result = run_checker(tree)
            self.assertEqual(result.returncode, 1)
            self.assertIn("goodput/g.cc:1", result.stdout)
            self.assertIn("daemon/controller/core/c.cc:1", result.stdout)
            self.assertNotIn("controller.cc", result.stdout)

    def test_a_new_directory_must_be_given_a_layer(self):
        with tempfile.TemporaryDirectory() as tree:
            write(tree, "daemon/newthing/a.cc", "int x;\n")
            result = run_checker(tree)
            self.assertEqual(result.returncode, 1)
            self.assertIn("directory is in no layer", result.stdout)


if __name__ == "__main__":
    unittest.main()
