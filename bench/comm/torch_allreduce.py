"""torch.distributed NCCL all-reduce bus bandwidth, beside `llmbench probe comm` (run_device.sh).

Launch with one process per GPU: `python3 -m torch.distributed.run --standalone
--nproc_per_node=N bench/comm/torch_allreduce.py --out torch.csv`. Same sizes and the same timing
as the probe (telemetry/nccl.hpp): after warm-up, `iters` all-reduces back to back with a CUDA
event between consecutive ones; an iteration's time is the mean over ranks of its event time; the
mean over iterations gives algbw = S / t and busbw = algbw * 2(n-1)/n (nccl-tests
doc/PERFORMANCE.md). torch's all_reduce works in place (the probe's is out of place; NCCL runs
both the same way). Keep NCCL_NVLS_ENABLE=0 in the environment (run_device.sh sets it).
"""

import argparse
import csv
import os

import torch
import torch.distributed as dist


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-bytes", type=int, default=4096)
    ap.add_argument("--max-bytes", type=int, default=1 << 30)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup-iters", type=int, default=5)
    ap.add_argument("--dtype", choices=["bf16", "fp16"], default="bf16")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if os.environ.get("NCCL_NVLS_ENABLE") != "0":
        raise SystemExit("NCCL_NVLS_ENABLE must be 0 (NVLink multicast stays off)")

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[a.dtype]
    buf = torch.zeros(a.max_bytes // 2, dtype=dtype, device="cuda")
    rows = []
    size = a.min_bytes
    while size <= a.max_bytes:
        x = buf[: size // 2]
        for _ in range(a.warmup_iters):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        marks = [torch.cuda.Event(enable_timing=True) for _ in range(a.iters + 1)]
        for i in range(a.iters):
            marks[i].record()
            dist.all_reduce(x)
        marks[a.iters].record()
        torch.cuda.synchronize()
        us = torch.tensor([marks[i].elapsed_time(marks[i + 1]) * 1e3 for i in range(a.iters)],
                          dtype=torch.float64, device="cuda")
        dist.all_reduce(us)  # per iteration: the mean over ranks
        us /= world
        mean = us.mean().item()
        algbw = size / (mean * 1e3)
        rows.append({"bytes": size, "mean_us": mean,
                     "p99_us": torch.quantile(us, 0.99).item(), "algbw_gb_s": algbw,
                     "busbw_gb_s": algbw * 2 * (world - 1) / world})
        size *= 2
    if rank == 0:
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        print(f"torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
              f"{world} GPUs, {a.dtype}: {len(rows)} sizes written to {a.out}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
