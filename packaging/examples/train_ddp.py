"""A small deterministic data-parallel training run that survives restarts.

Every rank computes gradients on its shard of a synthetic batch, the
gradients are averaged with torch.distributed (gloo, CPU), and rank 0 writes
a checkpoint every --checkpoint-every steps the way Megatron-LM does:
CKPT/iter_%07d/state.pt, then CKPT/latest_checkpointed_iteration.txt, which
Gantry's agent reads to know the latest checkpoint. When Gantry restarts the
job after a failure it sets GANTRY_RESUME_FROM to that checkpoint, and the
run continues from it. Given the same world size, an interrupted run ends
with exactly the parameters of an uninterrupted one.

With --memory-checkpoint-every N (and the job submitted with
--memory-checkpoints) every rank also keeps a snapshot in its node's memory
every N steps through gantry_checkpoint; Gantry copies each to a node under
another switch, and a restart restores the newest one (GANTRY_RESTORE_STEP)
instead of reading the file system checkpoint, which is older.

Everything comes from the environment Gantry sets: RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT, GANTRY_CHECKPOINT_DIR, GANTRY_RESUME_FROM,
GANTRY_MEMORY_CHECKPOINT_DIR, GANTRY_RESTORE_STEP.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=60)
parser.add_argument("--checkpoint-every", type=int, default=10)
parser.add_argument("--step-seconds", type=float, default=0.1,
                    help="pause per step, so a run lasts long enough to interrupt")
parser.add_argument("--memory-checkpoint-every", type=int, default=0,
                    help="steps between in-memory snapshots (0: none)")
parser.add_argument("--print-every", type=int, default=0,
                    help="rank 0 prints every N steps (0: only at checkpoints)")
parser.add_argument("--width", type=int, default=32,
                    help="hidden units (the state grows with it)")
parser.add_argument("--result", default="final_params.txt")
args = parser.parse_args()

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
master = f"tcp://{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
checkpoint_dir = os.environ["GANTRY_CHECKPOINT_DIR"]
resume_from = os.environ.get("GANTRY_RESUME_FROM", "")
if os.environ["MASTER_ADDR"].startswith("127."):
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")

torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
model = torch.nn.Sequential(torch.nn.Linear(16, args.width), torch.nn.Tanh(),
                            torch.nn.Linear(args.width, 1)).double()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
first_step = 1
memory = None
if args.memory_checkpoint_every > 0:
    import gantry_checkpoint as memory
restored = memory.restore_step() if memory else None
if restored is not None:
    started = time.monotonic()
    state = memory.load(restored)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    first_step = state["step"] + 1
    print(f"rank {rank}: restoring step {restored} from memory "
          f"({(time.monotonic() - started) * 1000:.1f} ms)", flush=True)
elif resume_from:
    state = torch.load(os.path.join(resume_from, "state.pt"))
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    first_step = state["step"] + 1
    print(f"rank {rank}: resuming from {resume_from} at step {first_step}", flush=True)

dist.init_process_group("gloo", init_method=master, rank=rank, world_size=world)


def batch(step):
    """The step's global batch, the same whoever computes it."""
    generator = torch.Generator().manual_seed(1000 + step)
    x = torch.randn(8 * world, 16, generator=generator, dtype=torch.float64)
    y = torch.sin(x.sum(dim=1, keepdim=True))
    return x[rank * 8:(rank + 1) * 8], y[rank * 8:(rank + 1) * 8]


def save_checkpoint(step):
    path = os.path.join(checkpoint_dir, f"iter_{step:07d}")
    os.makedirs(path, exist_ok=True)
    torch.save({"step": step, "model": model.state_dict(),
                "optimizer": optimizer.state_dict()},
               os.path.join(path, "state.pt.tmp"))
    os.replace(os.path.join(path, "state.pt.tmp"), os.path.join(path, "state.pt"))
    marker = os.path.join(checkpoint_dir, "latest_checkpointed_iteration.txt")
    with open(marker + ".tmp", "w") as f:
        f.write(f"{step}\n")
    os.replace(marker + ".tmp", marker)


for step in range(first_step, args.steps + 1):
    x, y = batch(step)
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
        parameter.grad /= world
    optimizer.step()
    if rank == 0 and args.print_every > 0 and step % args.print_every == 0:
        print(f"step {step} done", flush=True)
    if memory and step % args.memory_checkpoint_every == 0:
        seconds = memory.save(step, {"step": step, "model": model.state_dict(),
                                     "optimizer": optimizer.state_dict()})
        if seconds is not None and rank == 0:
            print(f"step {step}: memory snapshot saved in {seconds * 1000:.1f} ms",
                  flush=True)
    if rank == 0 and step % args.checkpoint_every == 0:
        save_checkpoint(step)
        print(f"step {step}: loss {loss.item():.6f}, checkpoint written", flush=True)
    time.sleep(args.step_seconds)

dist.barrier()
if rank == 0:
    with open(args.result, "w") as f:
        for parameter in model.parameters():
            f.write(" ".join(v.hex() for v in parameter.detach().flatten().tolist()) + "\n")
    print(f"done after {args.steps} steps; parameters in {args.result}", flush=True)
dist.destroy_process_group()
