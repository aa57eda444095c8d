"""Sum one number from every rank and check the result on every rank.

Uses torch.distributed with the gloo backend when PyTorch is installed
(Debian: python3-torch); otherwise the same rendezvous and reduction over
plain TCP sockets, so the example runs on a bare machine too. Either way the
ranks meet at MASTER_ADDR:MASTER_PORT, which Gantry sets for the job.
"""
import os
import socket
import struct
import sys
import time

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
master_addr = os.environ["MASTER_ADDR"]
master_port = int(os.environ["MASTER_PORT"])
contribution = rank + 1
expected = world * (world + 1) // 2


def allreduce_with_torch():
    import torch
    import torch.distributed as dist

    if master_addr.startswith("127."):
        os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://{master_addr}:{master_port}",
        rank=rank,
        world_size=world,
    )
    tensor = torch.tensor([float(contribution)])
    dist.all_reduce(tensor)
    dist.destroy_process_group()
    return int(tensor.item()), "torch.distributed (gloo)"


def recv_exact(conn, size):
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError("peer closed the connection")
        data += chunk
    return data


def allreduce_with_sockets():
    if rank == 0:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((master_addr, master_port))
        server.listen(world)
        peers = []
        total = contribution
        for _ in range(world - 1):
            conn, _ = server.accept()
            total += struct.unpack("!q", recv_exact(conn, 8))[0]
            peers.append(conn)
        for conn in peers:
            conn.sendall(struct.pack("!q", total))
            conn.close()
        server.close()
        return total, "TCP sockets"
    deadline = time.time() + 60
    while True:
        try:
            conn = socket.create_connection((master_addr, master_port), timeout=5)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
    conn.sendall(struct.pack("!q", contribution))
    total = struct.unpack("!q", recv_exact(conn, 8))[0]
    conn.close()
    return total, "TCP sockets"


try:
    import torch  # noqa: F401

    total, backend = allreduce_with_torch()
except ImportError:
    total, backend = allreduce_with_sockets()

status = "ok" if total == expected else "WRONG"
print(f"rank {rank}: all-reduce sum = {total} (expected {expected}) via {backend}: {status}", flush=True)
sys.exit(0 if total == expected else 1)
