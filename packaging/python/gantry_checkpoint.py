"""In-memory checkpoints for jobs run with `gantry batch --memory-checkpoints`.

Each rank keeps snapshots of its own state in its node's memory; Gantry's
agent copies every complete snapshot to a node under another leaf switch,
and when the job restarts after a failure, every rank finds the newest
snapshot that all ranks have restored into its directory before it starts:

    import gantry_checkpoint as memory

    step = memory.restore_step()          # None on a first start
    if step is not None:
        state = memory.load(step)         # this rank's snapshot of that step
        model.load_state_dict(state["model"]) ...
    ...
    if step % 50 == 0:
        memory.save(step, {"model": model.state_dict(), ...})

A snapshot is this rank's alone (data-parallel ranks may all save the same
state; sharded ones save their shard). Save every rank's snapshot at the
same steps: a restart restores the newest step every rank saved. Keep
writing persistent checkpoints (GANTRY_CHECKPOINT_DIR), less often: they
are what a restart falls back on when the memory copies of some rank are
lost with both nodes that held them.

The directory contract, for code that does not use this module:
$GANTRY_MEMORY_CHECKPOINT_DIR is the rank's directory; a snapshot is a
directory named step-N in it (N a decimal number), written under another
name and renamed to step-N when complete. Anything else is ignored.
$GANTRY_RESTORE_STEP names the step restored before the ranks start.
"""
import os
import pickle
import shutil
import sys
import time

__all__ = ["directory", "restore_step", "steps", "save", "load"]

_STATE_FILE = "state.pt"


def directory():
    """The rank's snapshot directory, or None when the job does not have
    in-memory checkpoints (not run with --memory-checkpoints, or the node
    cannot hold them)."""
    path = os.environ.get("GANTRY_MEMORY_CHECKPOINT_DIR", "")
    return path if path and os.path.isdir(path) else None


def restore_step():
    """The step Gantry restored for this attempt, or None."""
    text = os.environ.get("GANTRY_RESTORE_STEP", "")
    return int(text) if text.isdigit() else None


def steps():
    """The complete snapshot steps in this rank's directory, oldest first."""
    root = directory()
    if root is None:
        return []
    found = []
    for name in os.listdir(root):
        number = name[len("step-"):]
        if name.startswith("step-") and number.isdigit() and \
                os.path.isdir(os.path.join(root, name)):
            found.append(int(number))
    return sorted(found)


def _dump(state, path):
    try:
        import torch
    except ImportError:
        with open(path, "wb") as f:
            pickle.dump(state, f, protocol=pickle.HIGHEST_PROTOCOL)
        return
    torch.save(state, path)


def _undump(path, map_location):
    try:
        import torch
    except ImportError:
        with open(path, "rb") as f:
            return pickle.load(f)
    return torch.load(path, map_location=map_location)


def save(step, state, keep=2):
    """Writes `state` (anything torch.save, or pickle without torch, takes)
    as this rank's snapshot of `step`, then drops all but the newest `keep`
    snapshots. Returns the seconds the write took (the time training
    waited), or None when the job has no in-memory checkpoints."""
    root = directory()
    if root is None:
        return None
    if step < 0:
        raise ValueError(f"step must be 0 or more, not {step}")
    started = time.monotonic()
    final = os.path.join(root, f"step-{step}")
    partial = os.path.join(root, f".step-{step}.{os.getpid()}.tmp")
    shutil.rmtree(partial, ignore_errors=True)
    os.mkdir(partial, 0o700)
    _dump(state, os.path.join(partial, _STATE_FILE))
    # A complete snapshot appears under its name at once (rename), so the
    # agent never copies half of one.
    if os.path.isdir(final):
        shutil.rmtree(final)
    os.rename(partial, final)
    for old in steps()[:-max(keep, 1)]:
        shutil.rmtree(os.path.join(root, f"step-{old}"), ignore_errors=True)
    return time.monotonic() - started


def load(step=None, map_location=None):
    """This rank's snapshot of `step` (default: the restored one)."""
    if step is None:
        step = restore_step()
    root = directory()
    if step is None or root is None:
        raise FileNotFoundError("no in-memory checkpoint to load "
                                "(GANTRY_RESTORE_STEP is not set)")
    return _undump(os.path.join(root, f"step-{step}", _STATE_FILE),
                   map_location)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0)
    print(f"directory: {directory()}\nrestore step: {restore_step()}\n"
          f"snapshots: {steps()}")
