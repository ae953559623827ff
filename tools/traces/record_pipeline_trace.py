#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Record a real pipeline-parallel step with torch.profiler, one Chrome trace per rank, for `ppsim trace`.

Two ways, by what the installed PyTorch has:
  --runtime torch   torch.distributed.pipelining (PyTorch >= 2.4): its own Schedule classes, whose
                    runtime names every action's range "PP:<action>" (schedules.py,
                    _get_profiler_function_name). Needs a GPU per rank for the GPU checks (nccl).
  --runtime loop    a 1F1B or GPipe loop written here over torch.distributed send/recv (any PyTorch
                    with gloo, CPU only), naming its ranges as torch's runtime does: PP:<stage>F<mb>,
                    PP:<stage>B<mb>, PP:<stage>RECV_F<mb>, PP:<stage>SEND_B<mb>, ...

  record_pipeline_trace.py --out DIR [--ranks 4] [--microbatches 8] [--schedule 1f1b|gpipe|interleaved-1f1b|zbv]
                           [--runtime loop|torch] [--steps 2] [--width 256] [--layers 2]

Writes DIR/rank-<r>.json for each rank; `ppsim trace DIR` reads them.
"""
import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, record_function


def stage_module(width, layers, seed):
    torch.manual_seed(seed)
    blocks = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(width, width), torch.nn.GELU()]
    return torch.nn.Sequential(*blocks)


def loop_order(schedule, rank, ranks, m):
    """The 1F1B or GPipe order of one rank as ("F"|"B", micro-batch) pairs (Narayanan et al. 2021, PipeDream-Flush)."""
    if schedule == "gpipe":
        return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
    warmup = min(ranks - rank - 1, m)
    order = [("F", i) for i in range(warmup)]
    f, b = warmup, 0
    while b < m:
        if f < m:
            order.append(("F", f))
            f += 1
        order.append(("B", b))
        b += 1
    return order


def run_loop(rank, args, prof):
    ranks = args.ranks
    module = stage_module(args.width, args.layers, rank)
    batch = 16
    inputs = {}
    outputs = {}
    pending = []  # sends leave asynchronously, as torch's runtime sends them (batch_isend_irecv)
    for _ in range(args.steps):
        for op, mb in loop_order(args.schedule, rank, ranks, args.microbatches):
            if op == "F":
                if rank == 0:
                    x = torch.randn(batch, args.width)
                else:
                    x = torch.empty(batch, args.width)
                    with record_function(f"PP:{rank}RECV_F{mb}"):
                        dist.recv(x, src=rank - 1)
                x.requires_grad_(rank > 0)
                with record_function(f"PP:{rank}F{mb}"):
                    y = module(x)
                inputs[mb], outputs[mb] = x, y
                if rank < ranks - 1:
                    with record_function(f"PP:{rank}SEND_F{mb}"):
                        pending.append(dist.isend(y.detach(), dst=rank + 1))
            else:
                x, y = inputs.pop(mb), outputs.pop(mb)
                if rank < ranks - 1:
                    grad = torch.empty_like(y)
                    with record_function(f"PP:{rank}RECV_B{mb}"):
                        dist.recv(grad, src=rank + 1)
                else:
                    grad = None
                with record_function(f"PP:{rank}B{mb}"):
                    if grad is None:
                        y.square().mean().backward()
                    else:
                        y.backward(grad)
                if rank > 0:
                    with record_function(f"PP:{rank}SEND_B{mb}"):
                        pending.append(dist.isend(x.grad, dst=rank - 1))
        for work in pending:
            work.wait()
        pending.clear()
        prof.step()


def run_torch(rank, args, prof):
    from torch.distributed import pipelining as pp  # PyTorch >= 2.4

    classes = {"1f1b": "Schedule1F1B", "gpipe": "ScheduleGPipe", "interleaved-1f1b": "ScheduleInterleaved1F1B",
               "zbv": "ScheduleZBVZeroBubble"}
    device = torch.device("cuda", rank % torch.cuda.device_count()) if torch.cuda.is_available() else torch.device("cpu")
    chunks = 2 if args.schedule in ("interleaved-1f1b", "zbv") else 1
    stages = []
    for c in range(chunks):
        index = rank + c * args.ranks if args.schedule != "zbv" else (rank if c == 0 else 2 * args.ranks - 1 - rank)
        module = stage_module(args.width, args.layers, index).to(device)
        stages.append(pp.PipelineStage(module, index, args.ranks * chunks, device))
    loss = lambda output, target: output.square().mean()
    cls = getattr(pp, classes[args.schedule])
    schedule = cls(stages if chunks > 1 else stages[0], n_microbatches=args.microbatches, loss_fn=loss)
    batch = torch.randn(16 * args.microbatches, args.width, device=device)
    indices = [stage.stage_index for stage in stages]
    holds_first, holds_last = 0 in indices, args.ranks * chunks - 1 in indices
    for _ in range(args.steps):
        # The first stage takes the batch, the last the target (which this loss ignores).
        inputs = [batch] if holds_first else []
        if holds_last:
            schedule.step(*inputs, target=torch.zeros_like(batch))
        else:
            schedule.step(*inputs)
        prof.step()


def worker(rank, args):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    backend = "nccl" if args.runtime == "torch" and torch.cuda.is_available() else "gloo"
    dist.init_process_group(backend, rank=rank, world_size=args.ranks)
    torch.set_num_threads(1)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if torch.cuda.is_available() else [])
    with profile(activities=activities) as prof:
        (run_torch if args.runtime == "torch" else run_loop)(rank, args, prof)
    prof.export_chrome_trace(os.path.join(args.out, f"rank-{rank}.json"))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=8)
    parser.add_argument("--schedule", default="1f1b", choices=["1f1b", "gpipe", "interleaved-1f1b", "zbv"])
    parser.add_argument("--runtime", default="loop", choices=["loop", "torch"])
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--port", type=int, default=29511)
    args = parser.parse_args()
    if args.runtime == "loop" and args.schedule not in ("1f1b", "gpipe"):
        sys.exit("--runtime loop runs 1f1b and gpipe; the others need --runtime torch (PyTorch >= 2.4)")
    os.makedirs(args.out, exist_ok=True)
    mp.spawn(worker, args=(args,), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
