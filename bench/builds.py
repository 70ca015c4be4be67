#!/usr/bin/env python3
"""Two builds of loadbench against each other: the `peer-loadbench` binary of each, interleaved
(A B A B …) against one hello server, CPU per request (user + system) and peak RSS from
/usr/bin/time, and the median of each round's ratio. For a change to the request path or the
engine, next to the peer benchmark (bench/peers.sh), which compares with wrk and oha.

    python3 bench/builds.py BEFORE/peer-loadbench AFTER/peer-loadbench SERVER [ROUNDS]

Build each side with `cargo build --release -p loadbench-bench --bins` (in a `git worktree` for
the older commit); SERVER is either side's `hello-server`. All traffic goes to 127.0.0.1; the
server runs on CPU 0 and the generators on CPU 1.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from loopback import free_port


def run(exe, c, url):
    """(CPU µs per request, req/s, peak RSS in kB) of one 10 s run of scenario `c{c}`."""
    with tempfile.TemporaryDirectory() as d:
        out, times = os.path.join(d, "results.json"), os.path.join(d, "time.txt")
        done = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", times, "taskset", "-c", "1", exe,
                               "--bench", "--exact", f"c{c}", "--target", url, "--quiet", "--json", out],
                              stdout=subprocess.DEVNULL)
        # 4 is a run that completed and that the self-check called inconclusive: a generator
        # pinned to one CPU is at its limit on purpose here.
        if done.returncode not in (0, 4):
            sys.exit(f"error: {exe} exited with {done.returncode}")
        user, system, rss = open(times).read().split()[-3:]
        scenario = json.load(open(out))["scenarios"][0]
        return (float(user) + float(system)) / scenario["iterations"] * 1e6, scenario["rps"], int(rss)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    builds = {"before": sys.argv[1], "after": sys.argv[2]}
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    port = free_port()
    server = subprocess.Popen(["taskset", "-c", "0", sys.argv[3], f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL)
    time.sleep(1)
    results = {}
    try:
        for r in range(1, rounds + 1):
            for c in (50, 1000):
                for name, exe in builds.items():
                    cpu, rps, rss = run(exe, c, f"http://127.0.0.1:{port}")
                    results.setdefault((c, name), []).append((cpu, rps, rss))
                    print(f"round {r} c={c} {name}: {rps:,.0f} req/s, {cpu:.2f} µs CPU/request, {rss / 1024:.1f} MB",
                          flush=True)
    finally:
        server.kill()
    for c in (50, 1000):
        before, after = results[(c, "before")], results[(c, "after")]
        cpu = [a[0] / b[0] for b, a in zip(before, after)]
        rps = [a[1] / b[1] for b, a in zip(before, after)]
        print(f"c={c} after/before: CPU per request {statistics.median(cpu):.2f}× "
              f"(rounds: {', '.join(f'{x:.2f}' for x in cpu)}), req/s {statistics.median(rps):.2f}×, peak RSS "
              f"{statistics.median(x[2] for x in before) / 1024:.1f} → {statistics.median(x[2] for x in after) / 1024:.1f} MB")


if __name__ == "__main__":
    main()
