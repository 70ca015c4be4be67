#!/usr/bin/env python3
"""Driver of the HTTPS peer benchmark; run it through bench/peers-tls.sh, which builds first.

Starts two TLS hello servers pinned to CPU 0 (`hello-server --tls`: a self-signed ECDSA P-256
certificate made at start; one with rustls's default session resumption, one with
`--no-resumption`), then runs each generator pinned to CPU 1, interleaved within each round as
bench/peers.py does, under /usr/bin/time (user + system CPU time, peak RSS). Shapes:

- keep-alive at c=50 and c=1000: loadbench (the `#[scenario]` binary), `cargo loadbench url`, wrk
  and oha, each keeping its connections; CPU per completed request, as for HTTP.
- handshake-heavy at c=50 (`close`): every request asks the server to close (`Connection: close`;
  oha `--disable-keepalive`), so every request is a new TCP connection and a new TLS handshake.
  Against the resuming server: wrk, oha, loadbench, loadbench `--no-tls-resumption` and `cargo
  loadbench url`; against the non-resuming one (`close-full`, every handshake a full one whatever
  the client does): wrk, oha and loadbench. Reported as handshakes per second per generator core:
  the handshakes the server completed during the run (its `/stats` before and after, less the one
  `/stats` request) divided by the generator's CPU seconds.

loadbench and oha verify the server's certificate (`--cacert` with the server's PEM); wrk cannot
(it never verifies). Prints medians over rounds and, for the loadbench rows, the median of each
round's ratio to wrk and to oha. `--save FILE` keeps every run's figures as JSON.
"""

import json
import os
import re
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

from loopback import (costs, fmt_us, free_port, median_of, pinned, runner_arguments, save_runs, wait_listening,
                      wrk_duration_us)

STEADY_FROM_S = 2.0  # keep-alive runs: when every connection has made its handshake

# (shape, concurrency, server, tools), in the order each round runs them.
SHAPES = (
    ("keep-alive", 50, "resume", ("loadbench", "loadbench-url", "wrk", "oha")),
    ("keep-alive", 1000, "resume", ("loadbench", "loadbench-url", "wrk", "oha")),
    ("close", 50, "resume", ("loadbench", "loadbench-noresume", "loadbench-url", "wrk", "oha")),
    ("close-full", 50, "full", ("loadbench", "wrk", "oha")),
)
OURS = ("loadbench", "loadbench-noresume", "loadbench-url")
PEERS = ("wrk", "oha")


def command(tool, shape, c, url, pem, out):
    d = ARGS.duration
    close = shape != "keep-alive"
    if tool in ("loadbench", "loadbench-noresume"):
        scenario = "close50" if close else f"c{c}_5s"
        argv = [ARGS.loadbench, "--bench", "--exact", scenario, "--target", url, "--cacert", pem, "--quiet",
                "--json", out]
        return argv + (["--no-tls-resumption"] if tool == "loadbench-noresume" else [])
    if tool == "loadbench-url":
        argv = [ARGS.cargo_loadbench, "loadbench", "url", url + "/", "-c", str(c), "-d", f"{d}s", "--cacert", pem,
                "--quiet", "--json", out]
        return argv + (["-H", "Connection: close"] if close else [])
    if tool == "wrk":
        argv = ["wrk", "-t1", f"-c{c}", f"-d{d}s", "--latency"]
        return argv + (["-H", "Connection: close"] if close else []) + [url + "/"]
    if tool == "oha":
        argv = ["oha", "-z", f"{d}s", "-c", str(c), "--no-tui", "--output-format", "json", "-o", out, "--cacert", pem]
        return argv + (["--disable-keepalive"] if close else []) + [url + "/"]
    raise ValueError(tool)


def parse(tool, stdout, out):
    """Returns (requests, req/s, p50 µs, p99 µs, loadbench's own handshake counts or None)."""
    if tool in OURS:
        with open(out) as f:
            s = json.load(f)["scenarios"][0]
        return s["ok"], s["rps"], s["latency_us"]["p50"], s["latency_us"]["p99"], s.get("tls")
    if tool == "wrk":
        requests = int(re.search(r"(\d+) requests in", stdout).group(1))
        rps = float(re.search(r"Requests/sec:\s+([\d.]+)", stdout).group(1))
        p50 = wrk_duration_us(re.search(r"\s50%\s+(\S+)", stdout).group(1))
        p99 = wrk_duration_us(re.search(r"\s99%\s+(\S+)", stdout).group(1))
        return requests, rps, p50, p99, None
    if tool == "oha":
        with open(out) as f:
            o = json.load(f)
        requests = sum(o.get("statusCodeDistribution", {}).values())
        p = o["latencyPercentiles"]
        return requests, o["summary"]["requestsPerSec"], p["p50"] * 1e6, p["p99"] * 1e6, None
    raise ValueError(tool)


def server_stats(server):
    context = ssl.create_default_context(cafile=server["pem"])
    with urllib.request.urlopen(server["url"] + "/stats", context=context, timeout=10) as r:
        return json.load(r)


def run_once(tool, shape, c, server, cpu):
    with tempfile.TemporaryDirectory() as d:
        out, timing = os.path.join(d, "out.json"), os.path.join(d, "time.txt")
        before = server_stats(server)
        argv = ["/usr/bin/time", "-f", "%U %S %M", "-o", timing] + pinned(
            cpu, command(tool, shape, c, server["url"], server["pem"], out))
        # `cargo loadbench url` runs outside any Cargo workspace here (see bench/peers.py).
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=d)
        steady = steady_cpu_per_request(proc, server) if shape == "keep-alive" else None
        stdout, stderr = proc.communicate()
        time.sleep(0.2)  # the server finishes the handshakes the generator's last packets completed
        after = server_stats(server)
        # 4 is a loadbench run that completed and that its self-check called inconclusive: a
        # generator pinned to one CPU is at its limit on purpose here.
        if proc.returncode not in (0, 4):
            print(f"error: {tool} {shape} c={c} failed ({proc.returncode}): {stderr.strip()[-500:]}", file=sys.stderr)
            return None
        with open(timing) as f:
            user, system, rss_kb = f.read().split()[-3:]
        requests, rps, p50, p99, own_tls = parse(tool, stdout, out)
        if requests == 0:
            print(f"error: {tool} {shape} c={c} completed no request: {stdout.strip()[-800:]}", file=sys.stderr)
            return None
    measured = costs(user, system, rss_kb, requests)
    cpu_s = measured["cpu_s"]
    # The `after` request's own connection made one full handshake.
    full = after["handshakes_full"] - before["handshakes_full"] - 1
    resumed = after["handshakes_resumed"] - before["handshakes_resumed"]
    return {
        "requests": requests,
        "rps": rps,
        "p50": p50,
        "p99": p99,
        **measured,
        "handshakes": full + resumed,
        "resumed": resumed,
        "failed_handshakes": after["handshakes_failed"] - before["handshakes_failed"],
        "hs_per_core_s": (full + resumed) / cpu_s,
        "own_tls": own_tls,
        "steady_cpu_us": steady,
    }


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime, in clock ticks


def child_of(parent):
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == parent:
                        return int(entry)
            except (OSError, IndexError, ValueError):
                continue
    raise ValueError(f"process {parent} has no child")


def steady_cpu_per_request(proc, server):
    """CPU µs per request of the generator between STEADY_FROM_S and STEADY_TO_S into the run, when
    every connection is open and its handshake made: the generator's CPU time from /proc (the
    child of /usr/bin/time, once taskset has exec'd it) over the requests the server answered
    meanwhile (less the one `/stats` request)."""
    try:
        time.sleep(STEADY_FROM_S)
        pid = child_of(proc.pid)
        t0, cpu0, req0 = time.monotonic(), cpu_ticks(pid), server_stats(server)["requests"]
        time.sleep(ARGS.duration - STEADY_FROM_S - 0.5)
        cpu1, req1 = cpu_ticks(pid), server_stats(server)["requests"]
    except (OSError, IndexError, ValueError):
        return None
    if time.monotonic() - t0 < 1:
        return None
    return (cpu1 - cpu0) / os.sysconf("SC_CLK_TCK") * 1e6 / max(req1 - req0 - 1, 1)


def ratio_line(results, key, ours, peer, label, fmt="{:.2f}"):
    pairs = [(a, b) for a, b in zip(results[ours], results[peer])
             if a is not None and b is not None and a[key] is not None and b[key] is not None]
    if not pairs:
        return None
    each = [a[key] / b[key] for a, b in pairs]
    rounds = ", ".join(fmt.format(x) for x in each)
    return f"{ours}/{peer}: {label} {fmt.format(statistics.median(each))}× (rounds: {rounds})"


def report(results, rounds, loads):
    pinning = "servers on CPU 0, generators on CPU 1" if (os.cpu_count() or 1) >= 2 else "no pinning (1 CPU)"
    print(f"\nMedians of {rounds} interleaved rounds, {ARGS.duration} s per run; {pinning}; CPU = user+sys of the "
          f"generator process; handshakes = those the server completed during the run.")
    print("Load average (1 min) at the start of each round: " + ", ".join(f"{x:.2f}" for x in loads) + "\n")
    for shape, c, server, tools in SHAPES:
        key = (shape, c)
        runs = {t: [r for r in results[key][t] if r is not None] for t in tools}
        tools = tuple(t for t in tools if runs[t])
        if not tools:
            continue
        title = {"keep-alive": "keep-alive", "close": "a new connection per request, resuming server",
                 "close-full": "a new connection per request, server without resumption (every handshake full)"}
        print(f"{shape}, c={c} ({title[shape]})\n")
        if shape == "keep-alive":
            print("| generator | req/s | p50 | p99 | CPU µs/req | user µs/req | sys µs/req | steady CPU µs/req "
                  "| peak RSS |")
            print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
            for t in tools:
                m = {k: median_of(runs[t], k) for k in ("rps", "p50", "p99", "cpu_us", "user_us", "sys_us", "rss_mb")}
                steady = [r["steady_cpu_us"] for r in runs[t] if r["steady_cpu_us"] is not None]
                steady = f"{statistics.median(steady):.2f}" if steady else "—"
                print(f"| {t} | {m['rps']:,.0f} | {fmt_us(m['p50'])} | {fmt_us(m['p99'])} | {m['cpu_us']:.2f} "
                      f"| {m['user_us']:.2f} | {m['sys_us']:.2f} | {steady} | {m['rss_mb']:.1f} MB |")
        else:
            print("| generator | handshakes/s | of them resumed | handshakes/s per core | CPU µs/handshake | p50 "
                  "| peak RSS |")
            print("|---|---:|---:|---:|---:|---:|---:|")
            for t in tools:
                hs_s = median_of(runs[t], "handshakes") / ARGS.duration
                resumed = statistics.median(r["resumed"] / max(r["handshakes"], 1) for r in runs[t])
                per_core = median_of(runs[t], "hs_per_core_s")
                print(f"| {t} | {hs_s:,.0f} | {resumed * 100:.0f} % | {per_core:,.0f} | {1e6 / per_core:.0f} "
                      f"| {fmt_us(median_of(runs[t], 'p50'))} | {median_of(runs[t], 'rss_mb'):.1f} MB |")
        print()
        for ours in (t for t in tools if t in OURS):
            for peer in (t for t in tools if t in PEERS):
                if shape == "keep-alive":
                    line = ratio_line(results[key], "cpu_us", ours, peer, "CPU per request")
                    if line:
                        rss = ratio_line(results[key], "rss_mb", ours, peer, "peak RSS")
                        print(f"- {line}; {rss.split(': ', 1)[1]}")
                        steady = ratio_line(results[key], "steady_cpu_us", ours, peer, "steady CPU per request")
                        if steady:
                            print(f"  - {steady.split(': ', 1)[1]}")
                else:
                    line = ratio_line(results[key], "hs_per_core_s", ours, peer, "handshakes per core-second")
                    if line:
                        print(f"- {line}")
        print()


def start_server(name, cpu, tmp, resumption):
    port = free_port()
    pem = os.path.join(tmp, f"{name}.pem")
    argv = [ARGS.server, f"127.0.0.1:{port}", "--tls", pem] + ([] if resumption else ["--no-resumption"])
    proc = subprocess.Popen(pinned(cpu, argv), stdout=subprocess.DEVNULL)
    wait_listening(port)
    return {"proc": proc, "url": f"https://127.0.0.1:{port}", "pem": pem}


def main():
    cpus = os.cpu_count() or 1
    server_cpu, generator_cpu = (0, 1) if cpus >= 2 else (None, None)
    selected = set(ARGS.tools.split(",")) if ARGS.tools else None
    results = {(shape, c): {t: [] for t in tools} for shape, c, _, tools in SHAPES}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        servers = {"resume": start_server("resume", server_cpu, tmp, True),
                   "full": start_server("full", server_cpu, tmp, False)}
        try:
            for r in range(1, ARGS.rounds + 1):
                with open("/proc/loadavg") as f:
                    loads.append(float(f.read().split()[0]))
                for shape, c, server, tools in SHAPES:
                    if ARGS.shapes and shape not in ARGS.shapes.split(","):
                        continue
                    for tool in tools:
                        if selected and tool not in selected:
                            continue
                        res = run_once(tool, shape, c, servers[server], generator_cpu)
                        results[(shape, c)][tool].append(res)
                        if res:
                            print(f"round {r} {shape} c={c} {tool}: {res['rps']:,.0f} req/s, {res['cpu_us']:.2f} µs "
                                  f"CPU/request, {res['handshakes']} handshakes ({res['resumed']} resumed), "
                                  f"{res['hs_per_core_s']:,.0f} handshakes/core-s, {res['rss_mb']:.1f} MB",
                                  file=sys.stderr, flush=True)
        finally:
            for s in servers.values():
                s["proc"].terminate()
                s["proc"].wait()
    if ARGS.save:
        save_runs(ARGS.save, ARGS.rounds, ARGS.duration, loads,
                  [{"shape": s, "c": c, "tool": t, "runs": runs}
                   for (s, c), by_tool in results.items() for t, runs in by_tool.items()])
    report(results, ARGS.rounds, loads)


if __name__ == "__main__":
    parser = runner_arguments(__doc__, rounds=5)
    parser.add_argument("--duration", type=int, default=5,
                        help="seconds per run; loadbench's scenarios are fixed at 5 s (bench/src/bin/peer-loadbench.rs)")
    parser.add_argument("--tools", help="comma-separated subset of the generators to run (default: all)")
    parser.add_argument("--shapes", help="comma-separated subset of keep-alive, close, close-full (default: all)")
    parser.add_argument("--save", help="write every run's figures to this JSON file")
    ARGS = parser.parse_args()
    main()
