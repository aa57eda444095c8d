"""The Debian packages (packaging/DebianPackages.cmake), built with CPack
from this build dir into a temp dir.

- Contents and control fields, with dpkg-deb: binaries, units, sysusers.d
  and tmpfiles.d snippets, the conffile, bash completion, man pages, the
  Slurm-name links, and dependencies (computed by dpkg-shlibdeps).
- The bash completion knows every subcommand and option of `gantry`.
- Installed into a Debian 12 root (debootstrap, minbase) with apt, which
  fetches the packages' dependencies: the three programs run, the gantry
  user exists, the files are in place. The base root is cached for a day
  under $GANTRY_TEST_CACHE (default /var/tmp/gantry-test-cache). This part
  skips with a message when it cannot run: not root, no debootstrap, or the
  Debian archive named in this machine's apt sources is unreachable.
"""

import atexit
import datetime
import glob
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.request

import gantry_cluster
from gantry_cluster import build_dir

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUITE = "bookworm"
DEBOOTSTRAP_TIMEOUT = 200  # s
ROOT_BUDGET = 330  # s for the whole root part, so the test stays < 6 min
# The names gantry-slurm-compat links to gantry (packaging/CMakeLists.txt).
SLURM_NAMES = ("sbatch", "srun", "salloc", "sattach", "squeue", "scancel", "sinfo",
               "scontrol", "sacct", "sstat", "sreport", "sprio", "sshare",
               "sdiag")


def run(*args, timeout=120, **kwargs):
    return subprocess.run(list(args), capture_output=True, text=True,
                          check=True, timeout=timeout, **kwargs)


_built = {}


def gantry_subcommands():
    """The subcommands `gantry --help` lists."""
    top = run(os.path.join(build_dir(), "cli", "gantry"), "--help").stdout
    return re.findall(r"^\s{2,}([a-z]+)\s{2,}\S",
                      top.split("Subcommands:")[-1], re.M)


def built_debs():
    """{package name: .deb path}, built by CPack once per run into a temp
    dir (removed at exit), not into the build dir."""
    if not _built:
        tmp = tempfile.mkdtemp(prefix="gantry-debs-", dir="/var/tmp")
        atexit.register(shutil.rmtree, tmp, ignore_errors=True)
        config = os.path.join(build_dir(), "CPackConfig.cmake")
        run("cpack", "-G", "DEB", "--config", config, "-B", tmp, cwd=tmp,
            timeout=300)
        for path in glob.glob(os.path.join(tmp, "debs", "*.deb")):
            _built[os.path.basename(path).split("_")[0]] = path
    return _built


def debian_mirror():
    """The Debian archive this machine's apt fetches SUITE from
    (GANTRY_DEBIAN_MIRROR wins), or None."""
    if os.environ.get("GANTRY_DEBIAN_MIRROR"):
        return os.environ["GANTRY_DEBIAN_MIRROR"]
    paths = sorted(glob.glob("/etc/apt/sources.list.d/*.sources")) + \
        sorted(glob.glob("/etc/apt/sources.list.d/*.list")) + \
        ["/etc/apt/sources.list"]
    for path in paths:
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            continue
        # deb822 stanzas ("URIs: ...", "Suites: bookworm ...") ...
        for stanza in re.split(r"\n\s*\n", text):
            uris = re.search(r"^URIs:\s*(\S+)", stanza, re.M)
            suites = re.search(r"^Suites:(.*)$", stanza, re.M)
            if uris and suites and SUITE in suites.group(1).split():
                return uris.group(1).rstrip("/")
        # ... or one-line entries ("deb URI bookworm main").
        for uri, suite in re.findall(
                r"^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)", text, re.M):
            if suite == SUITE:
                return uri.rstrip("/")
    return None


class DebianPackagesTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        for tool in ("cpack", "dpkg-deb", "dpkg-shlibdeps"):
            if shutil.which(tool) is None:
                raise unittest.SkipTest(f"{tool} is not installed")
        cls.debs = built_debs()
        cls.help2man = os.path.isdir(
            os.path.join(build_dir(), "packaging", "man", "man8"))

    def contents(self, package):
        """{path: link target or ''} of the package's files."""
        listing = run("dpkg-deb", "-c", self.debs[package]).stdout
        files = {}
        for line in listing.splitlines():
            name = line.split(None, 5)[5]
            path, _, target = name.partition(" -> ")
            files[path.lstrip(".")] = target
        return files

    def field(self, package, name):
        return run("dpkg-deb", "-f", self.debs[package], name).stdout.strip()

    def test_four_packages(self):
        self.assertEqual(sorted(self.debs), [
            "gantry-agent", "gantry-client", "gantry-controller",
            "gantry-slurm-compat"])

    def test_controller(self):
        files = self.contents("gantry-controller")
        for path in ("/usr/sbin/gantryd", "/usr/sbin/gantry-etcd-setup",
                     "/lib/systemd/system/gantryd.service",
                     "/usr/lib/sysusers.d/gantry.conf",
                     "/usr/lib/tmpfiles.d/gantry-controller.conf"):
            self.assertIn(path, files)
        if self.help2man:
            self.assertIn("/usr/share/man/man8/gantryd.8.gz", files)
        depends = self.field("gantry-controller", "Depends")
        self.assertIn("gantry-client (= ", depends)
        # RocksDB is linked statically; its compression libraries are not.
        for library in ("libgrpc++", "libprotobuf", "libmunge2", "libzstd1",
                        "libc6", "libsystemd0"):
            self.assertIn(library, depends)
        info = run("dpkg-deb", "-I", self.debs["gantry-controller"]).stdout
        for script in ("postinst", "prerm", "postrm"):
            self.assertRegex(info, rf"\b{script}\b")

    def test_agent(self):
        files = self.contents("gantry-agent")
        for path in ("/usr/sbin/gantry-agent", "/usr/sbin/gantry-fleet",
                     "/lib/systemd/system/gantry-agent.service",
                     "/usr/lib/tmpfiles.d/gantry-agent.conf"):
            self.assertIn(path, files)
        if self.help2man:
            self.assertIn("/usr/share/man/man8/gantry-agent.8.gz", files)
            self.assertIn("/usr/share/man/man8/gantry-fleet.8.gz", files)
        depends = self.field("gantry-agent", "Depends")
        for library in ("gantry-client (= ", "libhwloc", "libibverbs",
                        "libsystemd0"):
            self.assertIn(library, depends)

    def test_client_and_conffile(self):
        files = self.contents("gantry-client")
        for path in ("/usr/bin/gantry", "/etc/gantry/gantry.toml",
                     "/usr/share/bash-completion/completions/gantry"):
            self.assertIn(path, files)
        if self.help2man:
            self.assertIn("/usr/share/man/man1/gantry.1.gz", files)
            # A page per subcommand, as `man gantry-queue` finds it.
            for sub in gantry_subcommands():
                self.assertIn(f"/usr/share/man/man1/gantry-{sub}.1.gz", files)
        conffiles = run("dpkg-deb", "-I", self.debs["gantry-client"],
                        "conffiles").stdout.split()
        self.assertEqual(conffiles, ["/etc/gantry/gantry.toml"])
        # The CLI links gRPC statically where Debian ships the archives
        # (GANTRY_STATIC_CLI); the package depends on it only otherwise.
        depends = self.field("gantry-client", "Depends")
        self.assertIn("libc6", depends)
        needed = run("readelf", "-d",
                     os.path.join(build_dir(), "cli", "gantry")).stdout
        if "libgrpc++" in needed:
            self.assertIn("libgrpc++", depends)
        else:
            self.assertNotIn("libgrpc", depends)

    def test_slurm_compat_links(self):
        files = self.contents("gantry-slurm-compat")
        for name in SLURM_NAMES:
            self.assertEqual(files.get(f"/usr/bin/{name}"), "gantry", name)
            self.assertEqual(files.get(
                f"/usr/share/bash-completion/completions/{name}"), "gantry",
                name)
            if self.help2man:
                self.assertIn(f"/usr/share/man/man1/{name}.1.gz", files)
        self.assertEqual(self.field("gantry-slurm-compat", "Architecture"),
                         "all")
        self.assertIn("gantry-client", self.field("gantry-slurm-compat",
                                                  "Depends"))
        self.assertIn("slurm-client", self.field("gantry-slurm-compat",
                                                 "Conflicts"))

    def test_completion_knows_every_subcommand_and_option(self):
        with open(os.path.join(REPO, "packaging", "bash-completion",
                               "gantry")) as f:
            completion = f.read()
        gantry = os.path.join(build_dir(), "cli", "gantry")
        subcommands = gantry_subcommands()
        self.assertIn("queue", subcommands)
        for sub in subcommands:
            self.assertRegex(completion, rf"\b{sub}\b", sub)
            text = run(gantry, sub, "--help").stdout
            for option in set(re.findall(r"(?<![\w-])(--?[a-zA-Z][\w-]*)",
                                         text)):
                if option in ("--controller", "-h"):
                    continue  # global
                self.assertRegex(completion, rf"(?<![\w-]){option}(?![\w-])",
                                 f"gantry {sub} {option}")

    def test_completion_completes(self):
        library = "/usr/share/bash-completion/bash_completion"
        if not os.path.exists(library):
            self.skipTest("bash-completion is not installed")
        script = os.path.join(REPO, "packaging", "bash-completion", "gantry")
        cases = {
            "gantry q": "queue",
            "gantry --controller h:1 ca": "cancel cache",
            "gantry queue --a": "--all --account --array",
            "gantry topology ": "import",
            "gantry topology import --format i": "ibnetdiscover",
            "gantry batch --ch": "--chdir --checkpoint-dir",
            "gantry cancel --signal US": "USR1 USR2",
            "gantry queue -t P": "PD",
            "gantry nodes -t dr": "drain drng",
            "gantry h": "hold hostnames handover hostlist",
            "gantry rel": "release",
            "gantry batch --wr": "--wrap",
            "gantry cache ": "list prefetch evict",
            "gantry cache evict --n": "--nodes --no-wait",
            "gantry cache prefetch --t": "--timeout",
            "gantry cache --d": "--dataset",
        }
        for line, expected in cases.items():
            words = line.split(" ")
            program = (
                f"source {library}; source {script}; "
                "COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
                "COMP_LINE=\"$*\"; COMP_POINT=${#COMP_LINE}; _gantry; "
                "echo \"${COMPREPLY[*]}\"")
            result = run("bash", "-c", program, "bash", *words)
            self.assertEqual(result.stdout.strip(), expected, line)


class DebianRootTest(unittest.TestCase):
    """The packages installed into a fresh Debian 12 root."""

    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0:
            raise unittest.SkipTest("installing into a Debian root needs root")
        for tool in ("debootstrap", "cpack", "chroot"):
            if shutil.which(tool) is None:
                raise unittest.SkipTest(f"{tool} is not installed")
        cls.mirror = debian_mirror()
        if cls.mirror is None:
            raise unittest.SkipTest("no Debian archive in this machine's apt sources")
        try:
            urllib.request.urlopen(
                f"{cls.mirror}/dists/{SUITE}/Release", timeout=10).close()
        except OSError as error:
            raise unittest.SkipTest(
                f"the Debian archive ({cls.mirror}) is unreachable: {error}")
        cls.deadline = time.monotonic() + ROOT_BUDGET
        cls.tmp = tempfile.mkdtemp(prefix="gantry-debroot-", dir="/var/tmp")
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)
        cls.debs = sorted(built_debs().values())
        cls.root = os.path.join(cls.tmp, "root")
        run("cp", "-a", cls.base_root(), cls.root, timeout=120)
        cls.install()

    @classmethod
    def left(cls):
        return max(1, cls.deadline - time.monotonic())

    @classmethod
    def base_root(cls):
        """A minbase Debian root, built at most once a day."""
        cache = os.path.join(
            os.environ.get("GANTRY_TEST_CACHE", "/var/tmp/gantry-test-cache"),
            "debootstrap")
        os.makedirs(cache, exist_ok=True)
        name = f"{SUITE}-minbase-{datetime.date.today():%Y%m%d}"
        root = os.path.join(cache, name)
        # Packages apt fetched for earlier installs, kept beside the root.
        cls.archives = root + "-archives"
        os.makedirs(cls.archives, exist_ok=True)
        for old in os.listdir(cache):  # earlier days' roots and failures
            if old not in (name, os.path.basename(cls.archives)):
                shutil.rmtree(os.path.join(cache, old), ignore_errors=True)
        if not os.path.isdir(root):
            partial = root + ".partial"
            shutil.rmtree(partial, ignore_errors=True)
            try:
                run("debootstrap", "--variant=minbase", SUITE, partial,
                    cls.mirror, timeout=min(DEBOOTSTRAP_TIMEOUT, cls.left()))
            except subprocess.TimeoutExpired:
                raise unittest.SkipTest(
                    f"debootstrap from {cls.mirror} took over "
                    f"{DEBOOTSTRAP_TIMEOUT} s (slow archive or machine)")
            except subprocess.CalledProcessError as error:
                raise unittest.SkipTest(
                    f"debootstrap from {cls.mirror} failed: "
                    f"{error.stdout[-2000:]}{error.stderr[-2000:]}")
            os.rename(partial, root)
        return root

    @classmethod
    def install(cls):
        # Keep maintainer scripts from starting services in the root.
        policy = os.path.join(cls.root, "usr", "sbin", "policy-rc.d")
        with open(policy, "w") as f:
            f.write("#!/bin/sh\nexit 101\n")
        os.chmod(policy, 0o755)
        staged = os.path.join(cls.root, "tmp", "debs")
        os.makedirs(staged)
        for deb in cls.debs:
            shutil.copy(deb, staged)
        apt_archives = os.path.join(cls.root, "var", "cache", "apt", "archives")
        for deb in glob.glob(os.path.join(cls.archives, "*.deb")):
            shutil.copy(deb, apt_archives)
        proc = os.path.join(cls.root, "proc")
        run("mount", "-t", "proc", "proc", proc)
        try:
            env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                   "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"}
            run("chroot", cls.root, "apt-get", "update", "-qq", env=env,
                timeout=cls.left())
            names = " ".join(f"/tmp/debs/{os.path.basename(d)}" for d in cls.debs)
            run("chroot", cls.root, "sh", "-c",
                f"apt-get install -y -qq --no-install-recommends {names}",
                env=env, timeout=cls.left())
        finally:
            subprocess.run(["umount", proc], check=False)
        for deb in glob.glob(os.path.join(apt_archives, "*.deb")):
            if not os.path.basename(deb).startswith("gantry-"):
                shutil.copy(deb, cls.archives)

    def in_root(self, *args):
        return subprocess.run(["chroot", self.root, *args], capture_output=True,
                              text=True, timeout=60,
                              env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})

    def test_programs_run(self):
        for program in ("gantry", "gantryd", "gantry-agent", "gantry-fleet"):
            result = self.in_root(program, "--help")
            self.assertEqual(result.returncode, 0, f"{program}: {result.stderr}")
            self.assertIn("--", result.stdout)
        # The shipped config loads on the installed daemons.
        for program in ("gantryd", "gantry-agent", "gantry-fleet"):
            result = self.in_root(program, "--config=/etc/gantry/gantry.toml",
                                  "--check-config")
            self.assertEqual(result.returncode, 0, result.stderr)

    def assert_python_module(self, name, help_text):
        """`name` is where Debian's python3 finds it, and its --help runs."""
        module = os.path.join(self.root, "usr", "lib", "python3",
                              "dist-packages", name + ".py")
        self.assertTrue(os.path.isfile(module), module)
        result = self.in_root("python3", "-m", name, "--help")
        if result.returncode != 127:  # the root has no python3 to run it
            self.assertEqual(result.returncode, 0, result.stderr)
            self.assertIn(help_text, result.stdout)

    def test_memory_checkpoint_module_and_examples(self):
        # On a node, with the agent.
        self.assert_python_module("gantry_checkpoint",
                                  "GANTRY_MEMORY_CHECKPOINT_DIR")
        for example in ("train_ddp.py", "train_ddp.sbatch"):
            self.assertTrue(os.path.isfile(os.path.join(
                self.root, "usr", "share", "doc", "gantry", "examples",
                example)), example)

    def test_submit_module_with_the_client(self):
        self.assert_python_module("gantry_submit", "batch-stream")
        result = self.in_root("gantry", "batch-stream", "--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("SubmitStream", result.stdout)

    def test_slurm_names_run_gantry(self):
        result = self.in_root("sbatch", "--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("Usage: gantry batch", result.stdout)

    def test_gantry_user_and_directories(self):
        passwd = self.in_root("getent", "passwd", "gantry")
        self.assertEqual(passwd.returncode, 0, "no gantry user")
        self.assertIn(":/var/lib/gantry:", passwd.stdout)
        state = os.stat(os.path.join(self.root, "var", "lib", "gantry"))
        uid = int(passwd.stdout.split(":")[2])
        self.assertEqual((state.st_uid, state.st_mode & 0o777), (uid, 0o700))
        self.assertTrue(os.path.isdir(
            os.path.join(self.root, "var", "spool", "gantry")))

    def test_files_in_place(self):
        for path in ("etc/gantry/gantry.toml",
                     "lib/systemd/system/gantryd.service",
                     "lib/systemd/system/gantry-agent.service",
                     "usr/share/bash-completion/completions/gantry"):
            self.assertTrue(os.path.exists(os.path.join(self.root, path)), path)
        status = self.in_root("dpkg-query", "-W", "-f",
                              "${Package} ${Status}\n", "gantry-*").stdout
        self.assertEqual(status.count("install ok installed"), 4, status)


if __name__ == "__main__":
    gantry_cluster.main()
