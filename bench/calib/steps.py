#!/usr/bin/env python3
"""Per-step evidence of a llama-server run, from llmbench's records (`run --save-result`).

llama-server streams one token per running slot at the end of each engine step, so the
clients' token times show the steps: emissions within --gap-ms of each other belong to one step.
A step in which some request got its first token carried (the end of) a prompt; the others are
decode steps. Prints, per records file: steps, the median decode step, the prompt-bearing steps
(count, mean, max), and the stalls — steps longer than 3x the median step, prompt chunks that
ended no prompt included — with their share of the run's wall time.

Usage: steps.py [--gap-ms 2] RECORDS.jsonl...
"""
import json
import statistics
import sys


def steps_of(path, gap_ns):
    firsts, times = set(), []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("warmup") or not r.get("chunks"):
                continue
            firsts.add(r["chunks"][0][0])
            times += [c[0] for c in r["chunks"]]
    times.sort()
    steps = []  # [end time of the step's first emission, carries a first token]
    for t in times:
        if steps and t - steps[-1][1] < gap_ns:
            steps[-1][1] = t
            steps[-1][2] |= t in firsts
        else:
            steps.append([t, t, t in firsts])
    return steps


def main(argv):
    gap_ms = 2.0
    if len(argv) > 1 and argv[0] == "--gap-ms":
        gap_ms, argv = float(argv[1]), argv[2:]
    print(f"{'records':40} {'steps':>6} {'decode ms':>10} {'prompt steps':>12} "
          f"{'mean ms':>8} {'max ms':>8} {'stalls':>6} {'share':>6}")
    for path in argv:
        s = steps_of(path, gap_ms * 1e6)
        decode, prompt = [], []
        for prev, cur in zip(s, s[1:]):
            (prompt if cur[2] else decode).append((cur[0] - prev[0]) / 1e6)
        wall = (s[-1][0] - s[0][0]) / 1e6 if len(s) > 1 else 0.0
        gaps = decode + prompt
        limit = 3 * statistics.median(gaps) if gaps else 0
        stalls = [g for g in gaps if g > limit]
        name = path.rsplit("/", 1)[-1].replace(".records.jsonl", "")
        print(f"{name:40} {len(s):6d} "
              f"{statistics.median(decode) if decode else 0:10.1f} {len(prompt):12d} "
              f"{statistics.mean(prompt) if prompt else 0:8.1f} {max(prompt, default=0):8.1f} "
              f"{len(stalls):6d} {sum(stalls) / wall if wall else 0:6.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
