"""Prints `llmbench probe comm`'s all-reduce beside torch.distributed's and the acceptance checks.

Usage: python3 bench/comm/compare.py comm.json torch.csv GPUS. Per size: both bus bandwidths and
their ratio; then every fit's largest error at a measured size. Checks: the 1 GB all-reduce's bus
bandwidth within 10 % of torch's; every fitted curve within 15 % of every measured size. Exit 0
when both hold, 1 otherwise.
"""

import csv
import json
import sys


def main() -> int:
    comm_path, torch_path, gpus = sys.argv[1], sys.argv[2], int(sys.argv[3])
    comm = json.load(open(comm_path))["comm"]
    torch_rows = {int(r["bytes"]): r for r in csv.DictReader(open(torch_path))}
    fit = next(f for f in comm["fits"]
               if f["collective"] == "all_reduce" and f["dtype"] == "bf16" and f["gpus"] == gpus)
    print(f"all_reduce bf16 over {gpus} GPUs: llmbench probe comm (NCCL {comm['nccl_version']}) "
          f"against torch.distributed")
    print(f"{'size (B)':>12} {'probe us':>10} {'torch us':>10} {'probe busbw':>12} "
          f"{'torch busbw':>12} {'ratio':>7}")
    one_gb = None
    for p in fit["points"]:
        t = torch_rows.get(p["bytes"])
        if t is None:
            continue
        ratio = p["busbw_gb_s"] / float(t["busbw_gb_s"])
        print(f"{p['bytes']:>12} {p['mean_us']:>10.2f} {float(t['mean_us']):>10.2f} "
              f"{p['busbw_gb_s']:>12.2f} {float(t['busbw_gb_s']):>12.2f} {ratio:>7.3f}")
        if p["bytes"] == 1 << 30:
            one_gb = ratio
    worst = 0.0
    print("\nfitted curves (largest |error| at a measured size):")
    for f in comm["fits"]:
        e = max(abs(p["error"]) for p in f["points"])
        worst = max(worst, e)
        print(f"  {f['collective']:>14} {f['dtype']:>8} {f['gpus']} GPUs: {len(f['segments'])} "
              f"segment(s), {100 * e:.1f} %; one line {f['latency_us']:.2f} us + S / "
              f"{f['bandwidth_gb_s'] or float('inf'):.2f} GB/s ({100 * f['max_error']:.1f} %)")
    ok_bw = one_gb is not None and abs(one_gb - 1) <= 0.10
    ok_fit = worst <= 0.15
    print(f"\n1 GB all-reduce busbw within 10 % of torch.distributed: "
          f"{'HELD' if ok_bw else 'NOT HELD'} (ratio {one_gb})")
    print(f"fitted curves within 15 % of every measured size: {'HELD' if ok_fit else 'NOT HELD'} "
          f"(worst {100 * worst:.1f} %)")
    return 0 if ok_bw and ok_fit else 1


if __name__ == "__main__":
    sys.exit(main())
