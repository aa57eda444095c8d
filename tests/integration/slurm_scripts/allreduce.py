"""A training step's collective: every worker adds its rank + 1."""
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
print(f"rank {rank}/{world} node_rank={os.environ['GROUP_RANK']} "
      f"sum={value.item():.0f}", flush=True)
dist.destroy_process_group()
