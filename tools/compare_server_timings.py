#!/usr/bin/env python3
"""Compare llmbench's client-side times with a server's own per-request timings.

Usage: compare_server_timings.py RECORDS.jsonl [RECORDS.jsonl ...]

Reads the per-request JSONL that `llmbench run --result-dir` writes. For servers that report
their own timings (llama.cpp's `timings.prompt_ms` / `timings.predicted_ms`, stored as
server_prompt_ms / server_predicted_ms), prints per file:
  - TTFT (client: first output chunk - sent) minus the server's prompt_ms,
  - E2EL (client: last output chunk - sent) minus prompt_ms + predicted_ms,
  - output tokens (server usage) vs output chunks received.
The differences are what the client adds: HTTP parsing, tokenization, loopback, scheduling.
Only the Python standard library is used.
"""
import json
import statistics
import sys


def pct(values, q):
    """numpy-default linear percentile."""
    v = sorted(values)
    if not v:
        return float("nan")
    rank = (len(v) - 1) * q / 100.0
    lo = int(rank)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (rank - lo)


def main(paths):
    for path in paths:
        ttft_d, e2el_d, n_ok, tok_equal, chunks_vs_usage = [], [], 0, 0, []
        with open(path, encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                if r.get("warmup") or not r.get("ok") or not r["chunks"]:
                    continue
                n_ok += 1
                sent = r["sent_ns"]
                first, last = r["chunks"][0][0], r["chunks"][-1][0]
                pm, dm = r.get("server_prompt_ms", -1), r.get("server_predicted_ms", -1)
                if pm >= 0:
                    ttft_d.append((first - sent) / 1e6 - pm)
                if pm >= 0 and dm >= 0:
                    e2el_d.append((last - sent) / 1e6 - (pm + dm))
                chunks_vs_usage.append(len(r["chunks"]) - r["output_tokens"])
                tok_equal += int(r["output_tokens"] == r["max_tokens"])
        print(f"{path}: {n_ok} completed requests")
        if ttft_d:
            print(f"  TTFT - server prompt_ms:       mean {statistics.mean(ttft_d):7.3f} ms, "
                  f"p50 {pct(ttft_d, 50):7.3f}, p99 {pct(ttft_d, 99):7.3f}, "
                  f"min {min(ttft_d):7.3f}, max {max(ttft_d):7.3f}")
        if e2el_d:
            print(f"  E2EL - (prompt_ms+predicted_ms): mean {statistics.mean(e2el_d):7.3f} ms, "
                  f"p50 {pct(e2el_d, 50):7.3f}, p99 {pct(e2el_d, 99):7.3f}, "
                  f"min {min(e2el_d):7.3f}, max {max(e2el_d):7.3f}")
        print(f"  output tokens == max_tokens requested: {tok_equal}/{n_ok}; "
              f"chunks - usage tokens: min {min(chunks_vs_usage, default=0)}, "
              f"max {max(chunks_vs_usage, default=0)}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
