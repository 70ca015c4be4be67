#!/usr/bin/env python3
"""Driver of the peer benchmark; run it through bench/peers.sh, which installs and builds first.

Starts the hello server pinned to CPU 0, then runs each generator pinned to CPU 1 (when the
machine has two or more CPUs), interleaved: for each round, for each concurrency, loadbench (an
ordinary `#[scenario]` binary), `cargo loadbench url` (the one-shot mode, same engine), wrk and
oha in turn, so that machine drift hits all of them alike. Each generator runs under
/usr/bin/time, which reports its user and system CPU time and peak RSS. Prints one table per
concurrency with the median over rounds, and the ratios of both loadbench rows to wrk and oha:
the median over rounds of each round's ratio, so that a round where the whole machine was slower
(it happens on shared cloud machines, by 10-20 %) weighs on both sides of the ratio alike.
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from loopback import costs, free_port, pinned, runner_arguments, wait_listening, wrk_duration_us

DURATION_S = 10  # fixed by the `duration = "10s"` of bench/src/bin/peer-loadbench.rs
CONCURRENCIES = (50, 1000)
TOOLS = ("loadbench", "loadbench-url", "wrk", "oha")
OURS = ("loadbench", "loadbench-url")




def command(tool, c, url, out):
    if tool == "loadbench":
        return [ARGS.loadbench, "--bench", "--exact", f"c{c}", "--target", url, "--quiet", "--json", out]
    if tool == "loadbench-url":
        return [ARGS.cargo_loadbench, "loadbench", "url", url + "/", "-c", str(c), "-d", f"{DURATION_S}s",
                "--quiet", "--json", out]
    if tool == "wrk":
        return ["wrk", "-t1", f"-c{c}", f"-d{DURATION_S}s", "--latency", url + "/"]
    if tool == "oha":
        return ["oha", "-z", f"{DURATION_S}s", "-c", str(c), "--no-tui", "--output-format", "json",
                "-o", out, url + "/"]
    raise ValueError(tool)


def parse(tool, stdout, out):
    """Returns (requests, req/s, p50 µs, p99 µs) from what the tool wrote."""
    if tool in OURS:
        with open(out) as f:
            s = json.load(f)["scenarios"][0]
        return s["ok"], s["rps"], s["latency_us"]["p50"], s["latency_us"]["p99"]
    if tool == "wrk":
        requests = int(re.search(r"(\d+) requests in", stdout).group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", stdout).group(1))
        p50 = wrk_duration_us(re.search(r"\s50%\s+(\S+)", stdout).group(1))
        p99 = wrk_duration_us(re.search(r"\s99%\s+(\S+)", stdout).group(1))
        return requests, rps, p50, p99
    if tool == "oha":
        with open(out) as f:
            o = json.load(f)
        requests = sum(o.get("statusCodeDistribution", {}).values())
        p = o["latencyPercentiles"]
        return requests, o["summary"]["requestsPerSec"], p["p50"] * 1e6, p["p99"] * 1e6
    raise ValueError(tool)


def run_once(tool, c, url, cpu):
    with tempfile.TemporaryDirectory() as d:
        out, timing = os.path.join(d, "out.json"), os.path.join(d, "time.txt")
        argv = ["/usr/bin/time", "-f", "%U %S %M", "-o", timing] + pinned(cpu, command(tool, c, url, out))
        # `cargo loadbench url` runs outside any Cargo workspace here, as from a plain directory: in
        # one it would first run `cargo metadata` for the workspace's settings, and /usr/bin/time
        # would count that child process too.
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=d)
        # 4 is a loadbench run that completed and that its self-check called inconclusive: a
        # generator pinned to one CPU is at its limit on purpose here.
        if proc.returncode not in (0, 4):
            sys.exit(f"error: {tool} at c={c} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
        with open(timing) as f:
            user, system, rss_kb = f.read().split()[-3:]
        requests, rps, p50, p99 = parse(tool, proc.stdout, out)
    return {"requests": requests, "rps": rps, "p50": p50, "p99": p99, **costs(user, system, rss_kb, requests)}


def fmt_us(us):
    return f"{us / 1e3:.2f}ms" if us >= 1000 else f"{us:.0f}µs"


def main():
    cpus = os.cpu_count() or 1
    server_cpu, generator_cpu = (0, 1) if cpus >= 2 else (None, None)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(pinned(server_cpu, [ARGS.server, f"127.0.0.1:{port}"]), stdout=subprocess.DEVNULL)
    try:
        wait_listening(port)
        results = {(t, c): [] for t in TOOLS for c in CONCURRENCIES}
        for r in range(1, ARGS.rounds + 1):
            for c in CONCURRENCIES:
                for tool in TOOLS:
                    res = run_once(tool, c, url, generator_cpu)
                    results[(tool, c)].append(res)
                    print(f"round {r} c={c} {tool}: {res['rps']:,.0f} req/s, {res['cpu_us']:.2f} µs CPU/request",
                          file=sys.stderr)
    finally:
        server.terminate()
        server.wait()

    pinning = "server on CPU 0, generators on CPU 1" if server_cpu is not None else "no pinning (1 CPU)"
    print(f"\nMedians of {ARGS.rounds} interleaved rounds, {DURATION_S} s each; {pinning}; "
          f"CPU = user+sys of the generator process per completed request.\n")
    for c in CONCURRENCIES:
        med = {t: {k: statistics.median(x[k] for x in results[(t, c)]) for k in results[(t, c)][0]} for t in TOOLS}
        print(f"c={c}\n")
        print("| generator | req/s | p50 | p99 | CPU µs/req | user µs/req | sys µs/req | peak RSS |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for t in TOOLS:
            m = med[t]
            print(f"| {t} | {m['rps']:,.0f} | {fmt_us(m['p50'])} | {fmt_us(m['p99'])} | {m['cpu_us']:.2f} "
                  f"| {m['user_us']:.2f} | {m['sys_us']:.2f} | {m['rss_mb']:.1f} MB |")
        print()
        for ours in OURS:
            for peer in ("wrk", "oha"):
                def ratio(key):
                    return statistics.median(a[key] / b[key] for a, b in zip(results[(ours, c)], results[(peer, c)]))
                rounds = ", ".join(f"{a['cpu_us'] / b['cpu_us']:.2f}"
                                   for a, b in zip(results[(ours, c)], results[(peer, c)]))
                print(f"- {ours}/{peer}: CPU per request {ratio('cpu_us'):.2f}× (rounds: {rounds}), "
                      f"req/s {ratio('rps'):.2f}×, peak RSS {ratio('rss_mb'):.2f}×")
        print()


if __name__ == "__main__":
    ARGS = runner_arguments(__doc__, rounds=3).parse_args()
    main()
