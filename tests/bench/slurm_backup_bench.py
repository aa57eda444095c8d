"""Slurm's backup controller, measured as ha_bench.py measures Gantry's
standby: a primary and a backup slurmctld (SlurmctldHost twice, one
StateSaveLocation on the local disk), --nodes slurmds, and `sbatch --hold
--wrap true` in a loop; the primary is killed with kill -9 and the figure
is the time from the kill to the first sbatch answered after it. The
primary is then started again (it takes control back from the backup)
before the next round. Afterwards every acknowledged job id is looked up
with squeue: acknowledged jobs lost (the backup starts from the state the
primary last saved).

Slurm tells its controllers apart by host name and binds SlurmctldPort on
every address: on one machine each slurmctld runs in its own UTS and mount
namespace (`unshare`), named ctla / ctlb, with a private /etc/hosts that
resolves those names to 127.0.0.1 / 127.0.0.2, and
CommunicationParameters=NoCtldInAddrAny so that each binds only its own
address. The rest of the configuration is the anchor lab's
(../shared/tools/slurm-anchor/slurm.conf.in) without GPUs and topology.
Needs root, slurmctld, slurmd and munged (apt-get install slurmctld slurmd
munge). Prints figures; exits 1 only if the lab cannot be set up.

Run: python3 tests/bench/slurm_backup_bench.py
       [--timeouts 5,120] [--rounds 3] [--nodes 8]
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration"))
from gantry_cluster import wait_for  # noqa: E402
from munge_daemon import Munged  # noqa: E402

ANCHOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "..", "shared", "tools", "slurm-anchor")
CTLD_PORT = 16917   # the anchor lab's are 16817 and 17001-17128
SLURMD_PORT0 = 17201
CONTROLLERS = {"ctla": "127.0.0.1", "ctlb": "127.0.0.2"}


def render(lab, nodes, timeout):
    with open(os.path.join(ANCHOR, "slurm.conf.in")) as f:
        text = f.read()
    values = {"LAB": lab, "CTLD_PORT": CTLD_PORT,
              "NODE_RANGE": f"n[001-{nodes:03d}]",
              "PORT_RANGE": f"[{SLURMD_PORT0}-{SLURMD_PORT0 + nodes - 1}]",
              "CPUS": 64, "SOCKETS": 2, "CORES_PER_SOCKET": 32, "GPUS": 0}
    for key, value in values.items():
        text = text.replace(f"@{key}@", str(value))
    hosts = "\n".join(f"SlurmctldHost={name}({address})"
                      for name, address in CONTROLLERS.items())
    text = re.sub(r"^SlurmctldHost=.*$", hosts, text, flags=re.M)
    text = re.sub(r"^GresTypes=.*\n", "", text, flags=re.M)
    text = text.replace(" Gres=gpu:0", "")
    text = re.sub(r"^TopologyPlugin=.*$", "TopologyPlugin=topology/none", text,
                  flags=re.M)
    text += (f"SlurmctldTimeout={timeout}\n"
             "CommunicationParameters=NoCtldInAddrAny\n")
    path = os.path.join(lab, "etc", "slurm.conf")
    with open(path, "w") as f:
        f.write(text)
    return path


class SlurmLab:
    """munged, two slurmctlds and the slurmds in a temp dir; every process
    stopped by pid."""

    def __init__(self, nodes, timeout):
        self.dir = tempfile.mkdtemp(prefix="slurm-backup-", dir="/tmp")
        os.chmod(self.dir, 0o755)  # munged insists others can reach its socket
        for sub in ("etc", "state", "log", "run", "spool"):
            os.makedirs(os.path.join(self.dir, sub))
        self.nodes = [f"n{i:03d}" for i in range(1, nodes + 1)]
        self.conf = render(self.dir, nodes, timeout)
        # The template's AuthInfo names this socket.
        self.munged = Munged(os.path.join(self.dir, "munge-run"))
        self.env = {**os.environ, "SLURM_CONF": self.conf}
        self.ctld = {}     # name -> Popen
        self.slurmd = []   # Popen

    def start_ctld(self, name):
        run = os.path.join(self.dir, f"run-{name}")
        os.makedirs(run, exist_ok=True)
        hosts = os.path.join(self.dir, f"hosts-{name}")
        with open(hosts, "w") as f:
            f.write("127.0.0.1 localhost\n" + "".join(
                f"{a} {n}\n" for n, a in CONTROLLERS.items()))
        script = (f"hostname {name} && mount --bind {hosts} /etc/hosts && "
                  f"mount --bind {run} {self.dir}/run && exec slurmctld -D "
                  f"-f {self.conf} -L {self.dir}/log/slurmctld-{name}.log")
        log = open(os.path.join(self.dir, "log", f"{name}.out"), "ab")
        self.ctld[name] = subprocess.Popen(
            ["unshare", "--uts", "--mount", "--propagation", "private",
             "sh", "-c", script], env=self.env, stdout=log, stderr=log)
        log.close()

    def ping(self):
        result = subprocess.run(["scontrol", "ping"], env=self.env,
                                capture_output=True, text=True, timeout=60)
        return result.stdout

    def start(self):
        self.start_ctld("ctla")
        wait_for(lambda: "ctla is UP" in self.ping(), 60, "the primary")
        self.start_ctld("ctlb")
        wait_for(lambda: "ctlb is UP" in self.ping(), 60, "the backup")
        for node in self.nodes:
            os.makedirs(os.path.join(self.dir, "spool", node), exist_ok=True)
            self.slurmd.append(subprocess.Popen(
                ["slurmd", "-D", "-f", self.conf, "-N", node], env=self.env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

    def sbatch(self):
        return subprocess.run(
            ["sbatch", "--hold", "--parsable", "-o", "/dev/null", "--wrap",
             "true"], env=self.env, capture_output=True, text=True,
            timeout=600, cwd=self.dir)

    def job_ids(self):
        result = subprocess.run(["squeue", "-h", "-t", "all", "-o", "%i"],
                                env=self.env, capture_output=True, text=True,
                                timeout=120, check=True)
        return {int(line) for line in result.stdout.split() if line.isdigit()}

    def stop(self):
        processes = [*self.ctld.values(), *self.slurmd]
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self.munged.stop()


class SbatchLoad:
    """sbatch in a loop from a thread: acknowledged ids and when."""

    def __init__(self, lab):
        self.lab = lab
        self.acks = []   # (asked, answered, id), monotonic
        self.refused = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            asked = time.monotonic()
            result = self.lab.sbatch()
            text = result.stdout.strip().split(";")[0]
            if result.returncode == 0 and text.isdigit():
                self.acks.append((asked, time.monotonic(), int(text)))
            else:
                self.refused.append(result.stderr.strip())
                time.sleep(0.05)

    def answered_after(self, killed_at):
        for asked, answered, _ in self.acks:
            if asked > killed_at:
                return answered - killed_at
        return None


def ctld_up(lab, name):
    return f"{name} is UP" in lab.ping()


def hand_back(lab):
    """Starts the killed primary again: it asks the backup for control and
    the backup returns to standby. Returns False when the backup did not
    (it is then killed and started again, so the next round has one)."""
    lab.start_ctld("ctla")
    wait_for(lambda: ctld_up(lab, "ctla"), 300, "the primary back in control")
    try:
        wait_for(lambda: ctld_up(lab, "ctlb"), 60, "the backup in standby")
        return True
    except AssertionError:
        lab.ctld["ctlb"].send_signal(signal.SIGKILL)
        lab.ctld["ctlb"].wait(timeout=10)
        lab.start_ctld("ctlb")
        wait_for(lambda: ctld_up(lab, "ctlb"), 300, "the backup restarted")
        return False


def measure(timeout, rounds, nodes):
    lab = SlurmLab(nodes, timeout)
    gaps, stuck = [], 0
    try:
        lab.start()
        load = SbatchLoad(lab)
        load.thread.start()
        for round_number in range(rounds):
            count = len(load.acks)
            wait_for(lambda: len(load.acks) >= count + 3, 300,
                     "sbatch answered")
            killed_at = time.monotonic()
            lab.ctld["ctla"].send_signal(signal.SIGKILL)
            lab.ctld["ctla"].wait(timeout=10)
            gaps.append(wait_for(lambda: load.answered_after(killed_at),
                                 timeout * 3 + 300, "sbatch answered again"))
            returned = hand_back(lab)
            stuck += not returned
            print(f"  SlurmctldTimeout={timeout}: kill -9 {round_number + 1}: "
                  f"sbatch answered again after {gaps[-1]:.2f} s"
                  + ("" if returned else "; the backup did not return to "
                     "standby after handing control back (restarted)"),
                  flush=True)
        load.stop.set()
        load.thread.join(timeout=600)
        stored = lab.job_ids()
        acked = [job_id for _, _, job_id in load.acks]
        lost = [j for j in acked if j not in stored]
        return {"gaps": gaps, "acknowledged": len(acked), "lost": lost,
                "twice": len(acked) - len(set(acked)),
                "refused": len(load.refused), "stuck": stuck}
    finally:
        lab.stop()
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(lab.dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--timeouts", default="5,120",
                        help="SlurmctldTimeout values, comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=8)
    args = parser.parse_args()
    for tool in ("slurmctld", "slurmd", "sbatch", "unshare"):
        if not shutil.which(tool):
            print(f"slurm_backup_bench: {tool} is not installed "
                  "(apt-get install slurmctld slurmd munge)")
            sys.exit(4)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"Slurm backup controller ({subprocess.run(['slurmctld', '-V'], capture_output=True, text=True).stdout.strip()}), "
          f"{args.nodes} slurmds; {os.cpu_count()} CPUs; "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}; load average {load}",
          flush=True)
    results = {}
    for timeout in (int(t) for t in args.timeouts.split(",") if t):
        results[timeout] = measure(timeout, args.rounds, args.nodes)
    print(f"\n  {'SlurmctldTimeout':>16} {'rounds':>6} {'median s':>9} "
          f"{'worst s':>8} {'acked':>6} {'lost':>5} {'twice':>5} {'refused':>7} "
          f"{'backup stuck':>12}")
    for timeout, r in results.items():
        print(f"  {timeout:>16} {len(r['gaps']):>6} "
              f"{statistics.median(r['gaps']):>9.2f} {max(r['gaps']):>8.2f} "
              f"{r['acknowledged']:>6} {len(r['lost']):>5} {r['twice']:>5} "
              f"{r['refused']:>7} {r['stuck']:>12}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"  load average after: {load}")


if __name__ == "__main__":
    main()
