#!/usr/bin/env python3
"""Driver of the shared-connection peer benchmark; run it through bench/peers-h2.sh, which builds first.

Two shapes of the same idea, many requests in flight on a few connections, each against a hello
server pinned to CPU 0, each generator pinned to CPU 1 (two or more CPUs), interleaved within each
round as bench/peers.py does, under /usr/bin/time (user + system CPU time, peak RSS):

- `h2`: HTTP/2 in clear text with prior knowledge against `hello-server --http2`, 10 connections
  with 100 streams each: loadbench (`peer-loadbench --exact c1000_5s --http2 --connections 10`:
  1,000 users sharing 10 connections), `h2load -c 10 -m 100` and `oha --http2 -c 10 -p 100`.
- `pipelined`: HTTP/1.1 at depth 16 against `hello-server`, TechEmpower's plaintext setup of 256
  requests in flight on 16 connections: loadbench (`--exact c256_5s --connections 16 --pipeline
  16`) and `wrk -c 16` with bench/pipeline.lua (16 requests per write); then, for the cost of
  pipelining itself, both unpipelined with 256 connections (`--exact c256_5s`, `wrk -c 256`).

Each run also reads the server's `GET /stats` before and after (over HTTP/2 with `nghttp` for the
h2 server), so the table shows the connections and requests the server saw, the same for every
generator. Prints medians over rounds, the median of each round's ratio of CPU per request of the
loadbench rows to the others, and whether the issue's targets are met. A generator that fails (as
loadbench does where a protocol is not built yet) is reported and left out; the others still run.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

from loopback import (costs, fmt_us, free_port, interleaved, loadbench_result, median_of, pinned, print_targets,
                      runner_arguments, save_runs, server_stats, wait_listening, wrk_duration_us)

DURATION_S = 5  # fixed by the `duration = "5s"` of the scenarios in bench/src/bin/peer-loadbench.rs
H2_CONNECTIONS, H2_STREAMS = 10, 100
PIPE_CONNECTIONS, PIPE_DEPTH = 16, 16
USERS_PIPELINED = PIPE_CONNECTIONS * PIPE_DEPTH  # 256: the `c256_5s` scenario

# (shape, server, tools), in the order each round runs them.
SHAPES = (
    ("h2", "h2", ("loadbench-h2", "h2load", "oha-h2")),
    ("pipelined", "h1", ("loadbench-pipelined", "wrk-pipelined", "loadbench-unpipelined", "wrk-unpipelined")),
)
OURS = ("loadbench-h2", "loadbench-pipelined", "loadbench-unpipelined", "before-h2", "before-pipelined")
# With `--before BUILD`: the same two loadbench runs of an older build, each right after its
# newer twin in every round, and the bound on their ratio (a change that should cost nothing).
BEFORE = {"loadbench-h2": "before-h2", "loadbench-pipelined": "before-pipelined"}
BEFORE_BOUND = 1.05
# (ours, other, the most CPU per request ours may cost, as a multiple of the other's): issue 15.
TARGETS = (
    ("loadbench-h2", "h2load", 1.0),
    ("loadbench-h2", "oha-h2", 0.5),
    ("loadbench-pipelined", "wrk-pipelined", 1.0),
    ("loadbench-pipelined", "loadbench-unpipelined", 0.35),
)


def command(tool, url, out):
    d = DURATION_S
    if tool.startswith("before-"):
        return [ARGS.before if arg == ARGS.loadbench else arg for arg in command("loadbench-" + tool[7:], url, out)]
    if tool == "loadbench-h2":
        return [ARGS.loadbench, "--bench", "--exact", "c1000_5s", "--target", url, "--http2",
                "--connections", str(H2_CONNECTIONS), "--quiet", "--json", out]
    if tool == "loadbench-pipelined":
        return [ARGS.loadbench, "--bench", "--exact", "c256_5s", "--target", url, "--connections",
                str(PIPE_CONNECTIONS), "--pipeline", str(PIPE_DEPTH), "--quiet", "--json", out]
    if tool == "loadbench-unpipelined":
        return [ARGS.loadbench, "--bench", "--exact", "c256_5s", "--target", url, "--quiet", "--json", out]
    if tool == "h2load":
        # http:// means HTTP/2 with prior knowledge to h2load; one thread, like every generator here.
        return ["h2load", "-t", "1", "-c", str(H2_CONNECTIONS), "-m", str(H2_STREAMS), "-D", str(d), url + "/"]
    if tool == "oha-h2":
        return ["oha", "--http2", "-c", str(H2_CONNECTIONS), "-p", str(H2_STREAMS), "-z", f"{d}s", "--no-tui",
                "--output-format", "json", "-o", out, url + "/"]
    if tool == "wrk-pipelined":
        # Absolute: the generators run in a temporary directory, and wrk runs without its script
        # (one request at a time) when it cannot load it.
        return ["wrk", "-t1", f"-c{PIPE_CONNECTIONS}", f"-d{d}s", "--latency", "-s", os.path.abspath(ARGS.lua),
                url + "/", "--",
                str(PIPE_DEPTH)]
    if tool == "wrk-unpipelined":
        return ["wrk", "-t1", f"-c{USERS_PIPELINED}", f"-d{d}s", "--latency", url + "/"]
    raise ValueError(tool)


def parse(tool, stdout, out):
    """Returns (completed requests, req/s, p50 µs, p99 µs, protocol or None) from what the tool wrote;
    p50 and p99 are None where the tool gives no percentiles (h2load prints min, max and mean)."""
    if tool in OURS:
        return loadbench_result(tool, out)
    if tool.startswith("wrk"):
        requests = int(re.search(r"(\d+) requests in", stdout).group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", stdout).group(1))
        p50 = wrk_duration_us(re.search(r"\s50%\s+(\S+)", stdout).group(1))
        p99 = wrk_duration_us(re.search(r"\s99%\s+(\S+)", stdout).group(1))
        if tool == "wrk-pipelined":
            # wrk times a whole batch of 16 when pipelining, and its high percentiles then read 0.
            return requests, rps, None, None, "HTTP/1.1"
        return requests, rps, p50, p99, "HTTP/1.1"
    if tool == "h2load":
        done = re.search(r"requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded", stdout)
        rps = float(re.search(r"finished in [\d.]+\w+, ([\d.]+) req/s", stdout).group(1))
        if not done:
            raise ValueError(f"unexpected h2load output: {stdout[-500:]}")
        protocol = "HTTP/2" if re.search(r"Application protocol: h2c?\b", stdout) else None
        return int(done.group(1)), rps, None, None, protocol
    if tool == "oha-h2":
        with open(out) as f:
            o = json.load(f)
        requests = sum(o.get("statusCodeDistribution", {}).values())
        p = o["latencyPercentiles"]
        return requests, o["summary"]["requestsPerSec"], p["p50"] * 1e6, p["p99"] * 1e6, "HTTP/2"
    raise ValueError(tool)


def run_once(tool, server, cpu):
    with tempfile.TemporaryDirectory() as d:
        out, timing = os.path.join(d, "out.json"), os.path.join(d, "time.txt")
        before = server_stats(server)
        argv = ["/usr/bin/time", "-f", "%U %S %M", "-o", timing] + pinned(cpu, command(tool, server["url"], out))
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=d)
        after = server_stats(server)
        # 4 is a loadbench run that completed and that its self-check called inconclusive: a
        # generator pinned to one CPU is at its limit on purpose here.
        if proc.returncode not in (0, 4):
            print(f"error: {tool} failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-500:]}",
                  file=sys.stderr)
            return None
        with open(timing) as f:
            user, system, rss_kb = f.read().split()[-3:]
        requests, rps, p50, p99, protocol = parse(tool, proc.stdout, out)
    if requests == 0:
        print(f"error: {tool} completed no request: {proc.stdout.strip()[-800:]}", file=sys.stderr)
        return None
    return {
        "requests": requests,
        "rps": rps,
        "p50": p50,
        "p99": p99,
        "protocol": protocol,
        # The `after` request and its connection are counted by the server too.
        "server_connections": after["connections"] - before["connections"] - 1,
        "server_requests": after["requests"] - before["requests"] - 1,
        **costs(user, system, rss_kb, requests),
    }


def shapes():
    """SHAPES, with each `--before` twin right after its newer build."""
    if not ARGS.before:
        return SHAPES
    return tuple((shape, server, tuple(t for tool in tools for t in (tool, BEFORE.get(tool)) if t))
                 for shape, server, tools in SHAPES)


def targets():
    return TARGETS + tuple((ours, before, BEFORE_BOUND) for ours, before in BEFORE.items() if ARGS.before)


def report(results, loads):
    pinning = "servers on CPU 0, generators on CPU 1" if (os.cpu_count() or 1) >= 2 else "no pinning (1 CPU)"
    print(f"\nMedians of {ARGS.rounds} interleaved rounds, {DURATION_S} s per run; {pinning}; CPU = user+sys of the "
          f"generator process per completed request; connections and requests as the server counted them.")
    print("Load average (1 min) at the start of each round: " + ", ".join(f"{x:.2f}" for x in loads) + "\n")
    titles = {
        "h2": f"HTTP/2 (h2c, prior knowledge), {H2_CONNECTIONS} connections × {H2_STREAMS} streams",
        "pipelined": f"HTTP/1.1 pipelined {PIPE_DEPTH} deep on {PIPE_CONNECTIONS} connections, and unpipelined on "
                     f"{USERS_PIPELINED}",
    }
    for shape, _, tools in shapes():
        print(f"{titles[shape]}\n")
        print("| generator | protocol | connections | req/s | p50 | p99 | CPU µs/req | user µs/req | sys µs/req "
              "| peak RSS |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for t in tools:
            runs = [r for r in results[t] if r]
            if not runs:
                print(f"| {t} | {'failed' if results[t] else 'not run'} | | | | | | | | |")
                continue
            m = {k: median_of(runs, k) for k in ("server_connections", "rps", "p50", "p99", "cpu_us", "user_us",
                                                 "sys_us", "rss_mb")}
            protocols = "/".join(sorted({r["protocol"] or "?" for r in runs}))
            print(f"| {t} | {protocols} | {m['server_connections']:.0f} | {m['rps']:,.0f} | {fmt_us(m['p50'])} "
                  f"| {fmt_us(m['p99'])} | {m['cpu_us']:.2f} | {m['user_us']:.2f} | {m['sys_us']:.2f} "
                  f"| {m['rss_mb']:.1f} MB |")
        print()
    print("Targets (CPU per request, median of each round's ratio):\n")
    print_targets(results, targets())


def start_server(kind, cpu):
    port = free_port()
    argv = [ARGS.server, f"127.0.0.1:{port}"] + (["--http2"] if kind == "h2" else [])
    proc = subprocess.Popen(pinned(cpu, argv), stdout=subprocess.DEVNULL)
    wait_listening(port)
    return {"proc": proc, "kind": kind, "url": f"http://127.0.0.1:{port}"}


def main():
    selected = set(ARGS.tools.split(",")) if ARGS.tools else None
    results, loads = interleaved(ARGS.rounds, shapes(), ("h2", "h1"), start_server, run_once, selected,
                                 lambda res: f"{res['rss_mb']:.1f} MB")
    if ARGS.save:
        save_runs(ARGS.save, ARGS.rounds, DURATION_S, loads, results)
    report(results, loads)


if __name__ == "__main__":
    parser = runner_arguments(__doc__, rounds=3)
    parser.add_argument("--lua", required=True, help="wrk's pipelining script (bench/pipeline.lua)")
    parser.add_argument("--tools", help="comma-separated subset of the generators to run (default: all)")
    parser.add_argument("--before", help="an older build's peer-loadbench, run after each loadbench row and compared")
    parser.add_argument("--save", help="write every run's figures to this JSON file")
    ARGS = parser.parse_args()
    main()
