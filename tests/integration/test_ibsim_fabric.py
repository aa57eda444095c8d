#!/usr/bin/env python3
"""The switch tree from a simulated InfiniBand fabric.

ibsim (ibsim-utils) runs a fat tree written by this test: 2 spines, 4 leaves
with 4 hosts each, each leaf cabled twice to each spine, and a 17th host with
one HCA on leaf1 and one on leaf2 (two rails). opensm (run once) gives the
ports their LIDs, ibnetdiscover (infiniband-diags) walks the fabric through
the umad2sim preload, and gantry-topology-check reads the dump as the
controller does. Each simulation runs in a private network namespace
(`unshare -n`): ibsim listens on fixed abstract socket names.

Skips, saying why, when ibsim, opensm, ibnetdiscover, umad2sim, network
namespaces or the gantry-topology-check binary (tests/tools, or
$GANTRY_TOPOLOGY_CHECK) are missing. Installs nothing.
"""

import glob
import os
import shutil
import signal
import subprocess
import tempfile
import textwrap
import unittest

import gantry_cluster

SPINES = 2
LEAVES = 4
HOSTS_PER_LEAF = 4
PORTS_PER_SWITCH = 16
CABLES_PER_LEAF_SPINE = 2

EXPECTED_TREE = textwrap.dedent("""\
    topology: 6 switches, 2 levels, 17 nodes
    level 1 spine1 children=leaf1*2,leaf2*2,leaf3*2,leaf4*2
    level 1 spine2 children=leaf1*2,leaf2*2,leaf3*2,leaf4*2
    level 0 leaf1 parents=spine1*2,spine2*2 nodes=node[01-04,17]
    level 0 leaf2 parents=spine1*2,spine2*2 nodes=node[05-08,17]
    level 0 leaf3 parents=spine1*2,spine2*2 nodes=node[09-12]
    level 0 leaf4 parents=spine1*2,spine2*2 nodes=node[13-16]
    """)


def fat_tree_net():
    """An ibsim net file (ibnetdiscover syntax): switches and HCAs named by
    their node description, "nodeNN mlx5_R" for HCAs."""
    ports = {}  # node id -> [(local port, remote id, remote port)]

    def cable(a, pa, b, pb):
        ports.setdefault(a, []).append((pa, b, pb))
        ports.setdefault(b, []).append((pb, a, pa))

    host = 0
    for leaf in range(1, LEAVES + 1):
        for port in range(1, HOSTS_PER_LEAF + 1):
            host += 1
            cable(f"leaf{leaf}", port, f"node{host:02d} mlx5_0", 1)
    for rail, leaf in ((0, 1), (1, 2)):
        cable(f"leaf{leaf}", HOSTS_PER_LEAF + 1, f"node17 mlx5_{rail}", 1)
    for leaf in range(1, LEAVES + 1):
        up = 9
        for spine in range(1, SPINES + 1):
            for k in range(CABLES_PER_LEAF_SPINE):
                down = CABLES_PER_LEAF_SPINE * (leaf - 1) + k + 1
                cable(f"leaf{leaf}", up, f"spine{spine}", down)
                up += 1
    lines = []
    for node in sorted(ports, key=lambda n: (not n.startswith("s"), n)):
        kind, count = (("Switch", PORTS_PER_SWITCH)
                       if node.startswith(("spine", "leaf")) else ("Hca", 1))
        lines.append(f'{kind}\t{count} "{node}"')
        for local, remote, remote_port in sorted(ports[node]):
            lines.append(f'[{local}]\t"{remote}"[{remote_port}]')
        lines.append("")
    return "\n".join(lines)


def find_tool(name):
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")


def find_umad2sim():
    for pattern in ("/usr/lib/*/umad2sim/libumad2sim.so",
                    "/usr/lib/umad2sim/libumad2sim.so",
                    "/usr/lib64/umad2sim/libumad2sim.so"):
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def unshare_prefix():
    """The command prefix that gives a private network namespace here."""
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        try:
            if subprocess.run(prefix + ["true"], capture_output=True,
                              timeout=10).returncode == 0:
                return prefix
        except (OSError, subprocess.TimeoutExpired):
            pass
    return None


# Runs in the namespace: ibsim with its console on a fifo, opensm once,
# console commands, then ibnetdiscover into dump.out.
SIMULATION_SCRIPT = """\
set -u
cd "$WORK"
mkfifo console
ibsim -s net < console > ibsim.log 2>&1 &
SIM=$!
trap 'kill $SIM 2>/dev/null; wait $SIM 2>/dev/null' EXIT
exec 3>console
export LD_PRELOAD="$UMAD2SIM" SIM_HOST="node01 mlx5_0"
export OSM_TMP_DIR="$WORK/osm" OSM_CACHE_DIR="$WORK/osm-cache"
mkdir -p "$OSM_TMP_DIR" "$OSM_CACHE_DIR"
# ibsim needs a moment to listen; opensm fails fast until it does.
for attempt in $(seq 50); do
  timeout 60 "$OPENSM" -o -f "$WORK/opensm.log" > opensm.out 2>&1 && break
  sleep 0.2
done
while read -r command; do echo "$command" >&3; done < commands
sleep 0.3
timeout 60 "$IBNETDISCOVER" > dump.out 2> ibnetdiscover.err
"""


class IbsimFabricTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        missing = [tool for tool in ("ibsim", "opensm", "ibnetdiscover")
                   if find_tool(tool) is None]
        if missing:
            raise unittest.SkipTest(
                f"{', '.join(missing)} not installed (Debian: ibsim-utils, "
                "opensm, infiniband-diags)")
        cls.umad2sim = find_umad2sim()
        if cls.umad2sim is None:
            raise unittest.SkipTest(
                "libumad2sim.so not found (Debian: ibsim-utils)")
        cls.unshare = unshare_prefix()
        if cls.unshare is None:
            raise unittest.SkipTest(
                "cannot create a network namespace (unshare -n / -rn), which "
                "ibsim needs for its fixed socket names")
        cls.check = os.environ.get("GANTRY_TOPOLOGY_CHECK") or os.path.join(
            gantry_cluster.build_dir(), "tests", "tools",
            "gantry-topology-check")
        if not os.access(cls.check, os.X_OK):
            raise unittest.SkipTest(
                f"{cls.check} not built (tests/tools, added by "
                "add_subdirectory(tools) in tests/CMakeLists.txt)")

    def run(self, result=None):
        # The outcome is only known once the test ran: the temp dir is kept
        # (and its path printed) when the test failed or GANTRY_KEEP_TMP=1.
        self.work = tempfile.mkdtemp(prefix="gantry-ibsim-")
        if result is None:
            result = self.defaultTestResult()
        problems = len(result.failures) + len(result.errors)
        try:
            return super().run(result)
        finally:
            failed = len(result.failures) + len(result.errors) > problems
            if failed or os.environ.get("GANTRY_KEEP_TMP") == "1":
                print(f"\nkept {self.work}")
            else:
                shutil.rmtree(self.work, ignore_errors=True)

    def simulate(self, net, console_commands=()):
        """Runs the fabric and returns ibnetdiscover's output."""
        with open(os.path.join(self.work, "net"), "w") as f:
            f.write(net)
        with open(os.path.join(self.work, "commands"), "w") as f:
            f.write("".join(c + "\n" for c in console_commands))
        script = os.path.join(self.work, "simulate.sh")
        with open(script, "w") as f:
            f.write(SIMULATION_SCRIPT)
        env = dict(os.environ, WORK=self.work, UMAD2SIM=self.umad2sim,
                   OPENSM=find_tool("opensm"),
                   IBNETDISCOVER=find_tool("ibnetdiscover"))
        env.pop("LD_PRELOAD", None)
        process = subprocess.Popen(self.unshare + ["bash", script], env=env,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        try:
            output, _ = process.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            self.fail(f"the simulation did not finish; see {self.work}")
        dump_path = os.path.join(self.work, "dump.out")
        if process.returncode != 0 or not os.path.exists(dump_path):
            self.fail(f"simulation failed (rc {process.returncode}): "
                      f"{output}\nsee {self.work}")
        with open(dump_path) as f:
            return f.read()

    def topology_check(self, *args, expect_rc=0):
        run = subprocess.run([self.check, *args], capture_output=True,
                             text=True, timeout=60)
        self.assertEqual(run.returncode, expect_rc,
                         f"stdout: {run.stdout}\nstderr: {run.stderr}")
        return run

    def write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def report(self, stdout):
        """The "key: value" lines after the tree."""
        lines = {}
        for line in stdout.splitlines():
            key, sep, value = line.partition(": ")
            if sep and key in ("unserved", "unknown-agents", "detached",
                               "switch-adapters"):
                lines[key] = value
            elif line.endswith(":") and line[:-1] in ("unknown-agents",
                                                      "detached", "unserved"):
                lines[line[:-1]] = ""
        return lines

    def test_the_discovered_fat_tree_has_the_expected_switches_and_leaves(self):
        dump = self.simulate(fat_tree_net())
        self.assertIn('Switch\t16 "S-', dump)
        run = self.topology_check("--ibnetdiscover",
                                  self.write("dump.out", dump))
        tree = run.stdout.split("unserved:")[0]
        self.assertEqual(tree, EXPECTED_TREE)
        report = self.report(run.stdout)
        self.assertEqual(report["unserved"], "node[01-17]")  # no agents given
        self.assertEqual(report["unknown-agents"], "")
        self.assertEqual(report["detached"], "")
        self.assertEqual(report["switch-adapters"], "0")

    def test_the_net_file_itself_reads_as_the_same_tree(self):
        run = self.topology_check("--ibnetdiscover",
                                  self.write("net.in", fat_tree_net()))
        self.assertEqual(run.stdout.split("unserved:")[0], EXPECTED_TREE)

    def test_agents_are_matched_by_port_guid_or_name_and_the_rest_reported(self):
        dump_path = self.write("dump.out", self.simulate(fat_tree_net()))
        guids = {}
        for line in self.topology_check("--ibnetdiscover", dump_path,
                                        "--guids").stdout.splitlines():
            if line.startswith("guid "):
                _, guid, node = line.split()
                guids.setdefault(node, []).append(guid)
        self.assertEqual(len(guids["node17"]), 2)  # one HCA per rail
        # node03 runs an agent under another name, found by its port GUID;
        # node01 is found by name; every other host has no agent; "ghost"
        # is an agent the fabric does not know.
        run = self.topology_check(
            "--ibnetdiscover", dump_path,
            "--agent", f"gpu-node-3={guids['node03'][0]}",
            "--agent", "node01=",
            "--agent", "ghost=0x00000000deadbeef")
        self.assertIn(
            "level 0 leaf1 parents=spine1*2,spine2*2 "
            "nodes=node[01-02,04,17],gpu-node-3\n", run.stdout)
        report = self.report(run.stdout)
        self.assertEqual(report["unserved"], "node[02,04-17]")
        self.assertEqual(report["unknown-agents"], "ghost")

    def test_a_leaf_cut_off_from_the_spines_takes_its_hosts_out_of_the_tree(self):
        cut = [f'Unlink "leaf4"[{port}]' for port in range(9, 13)]
        dump_path = self.write("dump.out",
                               self.simulate(fat_tree_net(), cut))
        agents = []
        for n in range(1, 18):
            agents += ["--agent", f"node{n:02d}="]
        run = self.topology_check("--ibnetdiscover", dump_path, *agents)
        self.assertTrue(run.stdout.startswith(
            "topology: 5 switches, 2 levels, 13 nodes\n"), run.stdout)
        self.assertNotIn("leaf4", run.stdout)
        report = self.report(run.stdout)
        # The agents on the cut leaf are agents the fabric does not know.
        self.assertEqual(report["unknown-agents"], "node[13-16]")
        self.assertEqual(report["unserved"], "")

    def test_a_truncated_dump_is_refused_with_the_file_and_line(self):
        lines = self.simulate(fat_tree_net()).splitlines(keepends=True)
        path = self.write("cut.out", "".join(lines[: len(lines) // 2]))
        run = self.topology_check("--ibnetdiscover", path, expect_rc=1)
        self.assertEqual(run.stdout, "")
        self.assertRegex(run.stderr,
                         rf"^refused: {path}:\d+: .*truncated output\?")


if __name__ == "__main__":
    gantry_cluster.main()
