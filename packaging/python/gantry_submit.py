"""Submit many Gantry batch jobs from Python on one connection.

One `gantry batch` process per job costs its start-up and a connection to
gantryd each (about 19 ms on a small machine); a sweep of thousands of jobs
is better sent at once. This module runs one `gantry batch-stream` process
for a whole list and returns each job's id:

    import gantry_submit

    jobs = [["-N", "2", "--time=10:00", "train.sh", "--lr", str(lr)]
            for lr in (0.1, 0.03, 0.01)]
    for words, result in zip(jobs, gantry_submit.submit_many(jobs)):
        if isinstance(result, gantry_submit.SubmitError):
            print("refused:", words, result)
        else:
            print("job", result)

    job_id = gantry_submit.submit(["--wrap", "python3 eval.py"])

A job is the list of words `gantry batch` takes (options, the script, its
arguments); each is prepared exactly as `gantry batch` prepares it: the
script's #SBATCH directives, SBATCH_* variables, the environment exported
(this process's, or `env`), paths relative to `cwd`. A script must be a file
or --wrap (standard input carries the list).

From a shell: python3 -m gantry_submit FILE (one gantry batch command line
per line of FILE, in shell syntax; "-" reads standard input).
"""
import json
import os
import shlex
import subprocess
import sys

__all__ = ["SubmitError", "submit_many", "submit"]


class SubmitError(Exception):
    """A job gantryd refused (or never answered for): the message says why."""

    def __init__(self, words, message):
        super().__init__(message)
        self.words = list(words)


def _gantry_command(gantry, controller):
    command = [gantry or os.environ.get("GANTRY_CLI", "gantry")]
    if controller:
        command.append(f"--controller={controller}")
    return command + ["batch-stream"]


def submit_many(jobs, gantry=None, controller=None, cwd=None, env=None,
                timeout=None):
    """Submits every job of `jobs` (each a list of gantry batch's words) on
    one connection. Returns a list in the order of `jobs`: each item is the
    job's id (an int), or a SubmitError for a job that was not stored.

    gantry: the gantry program (default: $GANTRY_CLI, else gantry on PATH).
    controller: gantryd's address (default: gantry's own: $GANTRY_CONTROLLER,
    the [client] table of /etc/gantry/gantry.toml, the local socket).
    cwd, env: the directory and environment the jobs are submitted from.
    timeout: seconds for the whole list (default: none).
    Raises OSError when gantry cannot be run at all."""
    jobs = [list(words) for words in jobs]
    for words in jobs:
        if not all(isinstance(word, str) for word in words):
            raise TypeError(f"a job's words must be strings: {words!r}")
    lines = "".join(json.dumps(words) + "\n" for words in jobs)
    finished = subprocess.run(
        _gantry_command(gantry, controller), input=lines, cwd=cwd, env=env,
        capture_output=True, text=True, timeout=timeout)
    results = [None] * len(jobs)
    for line in finished.stdout.splitlines():
        try:
            answer = json.loads(line)
            index = int(answer["line"]) - 1
        except (ValueError, KeyError, TypeError):
            continue
        if not 0 <= index < len(jobs):
            continue
        if "job_id" in answer:
            results[index] = int(answer["job_id"])
        else:
            results[index] = SubmitError(jobs[index], answer.get("error", ""))
    unanswered = finished.stderr.strip() or (
        f"gantry batch-stream exited with status {finished.returncode}")
    return [result if result is not None
            else SubmitError(jobs[index], f"no answer: {unanswered}")
            for index, result in enumerate(results)]


def submit(words, **options):
    """Submits one job (gantry batch's words); returns its id or raises
    SubmitError. Options as for submit_many."""
    result = submit_many([words], **options)[0]
    if isinstance(result, SubmitError):
        raise result
    return result


def _main(argv):
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        print("\nusage: python3 -m gantry_submit FILE|-")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    source = sys.stdin if argv[0] == "-" else open(argv[0], encoding="utf-8")
    with source:
        jobs = [shlex.split(line) for line in source
                if line.strip() and not line.lstrip().startswith("#")]
    failed = 0
    for words, result in zip(jobs, submit_many(jobs)):
        if isinstance(result, SubmitError):
            failed += 1
            print(f"error: {shlex.join(words)}: {result}", file=sys.stderr)
        else:
            print(result)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
