#!/usr/bin/env python3
"""One-token against two-token decode steps of a llama-server over a growing KV window.

Fills every slot with P-token prompts (one output token each: the slots keep P + 1 cells), then
times decodes of a 64-token prompt alone (one token a step) and two at once (two tokens a step),
as llama-server reports them (`timings.predicted_per_token_ms`). A window of W cells costs the
one-token step more than the two-token one when the backend scores it on a matrix-vector path
(docs/simulator.md "llama.cpp's one-token steps"). Start the server with the slots given here
(`-np SLOTS -c SLOTS*CTX`) on 127.0.0.1; prompts are random token ids.

Usage: one_token_window.py URL [SLOTS]
"""
import json
import random
import sys
import threading
import urllib.request


def request(url, n_prompt, n_out, results, i):
    body = {"prompt": [random.randint(1000, 100000) for _ in range(n_prompt)],
            "n_predict": n_out, "cache_prompt": True, "ignore_eos": True, "temperature": 0}
    req = urllib.request.Request(url + "/completion", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        results[i] = json.loads(r.read())["timings"]["predicted_per_token_ms"]


def wave(url, n, n_prompt, n_out):
    results = [None] * n
    threads = [threading.Thread(target=request, args=(url, n_prompt, n_out, results, i))
               for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def main(argv):
    url, slots = argv[0], int(argv[1]) if len(argv) > 1 else 16
    random.seed(1)
    print(f"{'P':>4} {'W (c1)':>7} {'c1 ms':>12} {'W (c2)':>7} {'c2 ms':>12}")
    for p in [16, 128, 256, 384]:
        wave(url, slots, p, 1)
        c1 = [wave(url, 1, 64, 33)[0] for _ in range(2)]
        wave(url, slots, p, 1)
        c2 = wave(url, 2, 64, 33)
        print(f"{p:4d} {(slots - 1) * (p + 1) + 97:7d} {' '.join(f'{x:5.2f}' for x in c1):>12} "
              f"{(slots - 2) * (p + 1) + 2 * 97:7d} {' '.join(f'{x:5.2f}' for x in c2):>12}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
