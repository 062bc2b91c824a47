#!/usr/bin/env python3
"""Compares the results documents of two llmbench builds (bench/results_identity/compare.sh).

Usage: compare.py BEFORE_DIR AFTER_DIR

Each document is read with every number kept as its literal text, so two documents compare
equal exactly when their bytes (as llmbench writes them: sorted keys, 2-space indent) are equal
outside the excluded fields. The rules, stated once:

- Every document: `date` (the wall clock at the start), `git_sha` and `tool_version` (the build).
- `simulate-*`: `sim_wall_s` (wall time of the simulation). Nothing else: the simulation runs in
  virtual time, so every other byte must match.
- `simulate-trace_cap` only (a dataset with its own schedule and a concurrency cap): the fields
  that the shared open-loop rule corrects (tests/unit/cli/session_points_test.cpp,
  `kOpenLoopFixFields`): every statistic of `ttft_sched`, `e2el_sched` and `queue_wait`
  (mean_/median_/std_/min_/max_/p<q>_<metric>_ms). They are printed, before and after.
- `run-*` (real loopback timing, which varies from run to run even against the fixed timing):
  the built-in server's port (`base_url`, also in `config_effective`) and clock (the `created`
  time of each model in `server_models`); and outside
  `config_requested` and `config_effective`, every measured time or rate and whatever is derived
  from them: keys ending in `_ms`, `_s` or `_ns`, `duration`, keys holding `throughput`,
  `goodput` or `_per_s`, `max_concurrent_requests`, `connections_opened`, and the subtrees
  `telemetry`, `windows`, `spikes`, `batching`, `stability`, `stable` and `p99_ci`; in the
  texts of `verdict` (its reasons quote the measured time: "measured for 0.62 s"), the numbers.
  The configuration, the counts (requests, tokens, failures by kind, mismatches) and every key's
  presence and type are compared exactly.
"""

import json
import re
import sys
from pathlib import Path

ALWAYS = {"date", "git_sha", "tool_version"}
SIM_ONLY = {"sim_wall_s"}
FIX_KEY = re.compile(r"^(mean|median|std|min|max|p[0-9.]+)_(ttft_sched|e2el_sched|queue_wait)_ms$")
RUN_SUBTREES = {"telemetry", "windows", "spikes", "batching", "stability", "stable", "p99_ci"}
RUN_TIMING = re.compile(r"(_ms|_s|_ns)$|^duration$|throughput|goodput|_per_s|"
                        r"^max_concurrent_requests$|^connections_opened$")


def load(path):
    return json.loads(path.read_text(), parse_float=str, parse_int=str)


def excluded(name, key, path):
    """Whether `key` at `path` (a tuple of keys from the root) is outside the comparison."""
    top = len(path) == 0
    if key in ALWAYS and top:
        return True
    if name.startswith("simulate-"):
        if key in SIM_ONLY and top:
            return True
        return name == "simulate-trace_cap.json" and top and FIX_KEY.match(key) is not None
    # run-*
    if key == "base_url" and (top or path == ("config_effective",)):
        return True
    if key == "created" and path[:1] == ("server_models",):
        return True
    if path and path[0] in ("config_requested", "config_effective", "server_models"):
        return False
    return (top and key in RUN_SUBTREES) or RUN_TIMING.search(key) is not None


NUMBER = re.compile(r"[0-9]+(\.[0-9]+)?")


def masked(name, path, value):
    """`value` with its numbers masked where it is a run's verdict text (timing-derived)."""
    if name.startswith("run-") and path[:1] == ("verdict",) and isinstance(value, str):
        return NUMBER.sub("#", value)
    return value


def diff(name, a, b, path, out):
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if excluded(name, key, path):
                continue
            if key not in a or key not in b:
                out.append(f"{'/'.join(path + (key,))}: only in {'after' if key in b else 'before'}")
                continue
            diff(name, a[key], b[key], path + (key,), out)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{'/'.join(path)}: {len(a)} items before, {len(b)} after")
            return
        for i, (x, y) in enumerate(zip(a, b)):
            diff(name, x, y, path + (str(i),), out)
    elif type(a) is not type(b) or masked(name, path, a) != masked(name, path, b):
        out.append(f"{'/'.join(path)}: {a!r} before, {b!r} after")


def main():
    before, after = Path(sys.argv[1]), Path(sys.argv[2])
    names = sorted(p.name for p in before.glob("*.json"))
    if not names or names != sorted(p.name for p in after.glob("*.json")):
        print(f"compare: not the same documents in {before} and {after}")
        return 1
    failed = False
    for name in names:
        a, b = load(before / name), load(after / name)
        out = []
        diff(name, a, b, (), out)
        fixed = [k for k in sorted(set(a) | set(b))
                 if name == "simulate-trace_cap.json" and FIX_KEY.match(k) and a.get(k) != b.get(k)]
        print(f"{name}: {'identical outside the rules' if not out else 'DIFFERS'}"
              + (f"; {len(fixed)} open-loop fix field(s) changed" if fixed else ""))
        for k in fixed[:6]:
            print(f"  fixed {k}: {a.get(k)} -> {b.get(k)}")
        for line in out[:20]:
            print(f"  {line}")
        failed = failed or bool(out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
