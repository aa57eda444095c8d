"""Megatron's distributed initialisation from Slurm's variables, then one
all-reduce; prints what each rank saw."""
import os
import sys

import torch
import torch.distributed as dist

rank = int(os.environ["SLURM_PROCID"])
world = int(os.environ["SLURM_NTASKS"])
local_rank = int(os.environ["SLURM_LOCALID"])
dist.init_process_group("gloo", init_method="env://", rank=rank,
                        world_size=world)
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
print(f"rank={rank} world={world} local_rank={local_rank} "
      f"node={os.environ['SLURMD_NODENAME']} args={' '.join(sys.argv[1:])} "
      f"sum={value.item():.0f}", flush=True)
dist.destroy_process_group()
