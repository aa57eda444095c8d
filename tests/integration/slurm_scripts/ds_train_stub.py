"""Checks what DeepSpeed's launcher would: this task's host is in the
hostfile with as many slots as tasks run there, and the ranks add up."""
import os
import sys

hostfile = sys.argv[sys.argv.index("--hostfile") + 1]
slots = {}
with open(hostfile) as f:
    for line in f:
        host, slot = line.split()
        slots[host] = int(slot.split("=")[1])
me = os.environ["SLURMD_NODENAME"]
rank = int(os.environ["SLURM_PROCID"])
local = int(os.environ["SLURM_LOCALID"])
world = int(os.environ["SLURM_NTASKS"])
hosts = list(slots)
expected_rank = hosts.index(me) * slots[me] + local
ok = (me in slots and local < slots[me] and rank == expected_rank
      and world == sum(slots.values())
      and os.environ["MASTER_ADDR"] == hosts[0])
print(f"ds rank={rank} local={local} host={me} world={world} "
      f"{'ok' if ok else 'MISMATCH'}", flush=True)
sys.exit(0 if ok else 1)
