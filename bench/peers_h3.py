#!/usr/bin/env python3
"""Driver of the HTTP/3 peer benchmark; run it through bench/peers-h3.sh, which builds first.

Three shapes, each against a server pinned to CPU 0, each generator pinned to CPU 1 (two or more
CPUs), interleaved within each round as bench/peers_h2.py does, under /usr/bin/time (user + system
CPU time, peak RSS):

- `h3`: HTTP/3 against `h3-hello-server` (quinn and h3, one thread), 10 QUIC connections with 100
  streams each: loadbench (`peer-loadbench --exact c1000_5s --http3 --connections 10`: 1,000
  users sharing 10 connections) and `oha --http-version 3 -c 10 -p 100`.
- `h3-own`: the same server, each user on a connection of its own: loadbench (`--exact c50_5s
  --http3`) and `oha --http-version 3 -c 50`.
- `h2-vs-h3`: loadbench's HTTP/2 (`--exact c1000_5s --http2 --connections 10` against
  `hello-server --http2`, h2c) beside its HTTP/3 row of the `h3` shape, for what QUIC costs on
  this machine over the same shape.

Both generators connect to `https://localhost:PORT/` with `--insecure`: the server's certificate
is self-signed and kept in memory. Each run reads the servers' counts before and after (the h3
server's over plain HTTP/1.1 on its stats port, which is not counted; the h2 server's with
`nghttp`, which is), so the table shows the connections and requests the server saw, and the
UDP receive-buffer drops of the whole machine during the run (`/proc/net/snmp`, `RcvbufErrors`),
which QUIC's loss recovery would answer with retransmissions. Prints medians over rounds, the
median of each round's ratio of CPU per request of the loadbench rows to the others, and whether
the issue's target is met. A generator that fails (as loadbench does where `--http3` is not built
yet) is reported and left out; the others still run.
"""

import json
import os
import subprocess
import sys
import tempfile

from loopback import (costs, fmt_us, free_port, interleaved, loadbench_result, median_of, pinned, print_targets,
                      runner_arguments, save_runs, server_stats, wait_listening)

DURATION_S = 5  # fixed by the `duration = "5s"` of the scenarios in bench/src/bin/peer-loadbench.rs
CONNECTIONS, STREAMS = 10, 100
OWN_USERS = 50  # the `c50_5s` scenario

# (shape, server, tools), in the order each round runs them. `h2-vs-h3` runs only loadbench-h2:
# its HTTP/3 row is the `h3` shape's, from the same round.
SHAPES = (
    ("h3", "h3", ("loadbench-h3", "oha-h3")),
    ("h3-own", "h3", ("loadbench-h3-own", "oha-h3-own")),
    ("h2-vs-h3", "h2", ("loadbench-h2",)),
)
# The rows each shape's table shows.
ROWS = {
    "h3": ("loadbench-h3", "oha-h3"),
    "h3-own": ("loadbench-h3-own", "oha-h3-own"),
    "h2-vs-h3": ("loadbench-h3", "loadbench-h2"),
}
OURS = ("loadbench-h3", "loadbench-h3-own", "loadbench-h2")
# (ours, other, the most CPU per request ours may cost, as a multiple of the other's, or None for
# a ratio that is reported with no target).
TARGETS = (
    ("loadbench-h3", "oha-h3", 1.0),
    ("loadbench-h3-own", "oha-h3-own", 1.0),
    ("loadbench-h3", "loadbench-h2", None),
)


def command(tool, url, out):
    d = DURATION_S
    if tool == "loadbench-h3":
        return [ARGS.loadbench, "--bench", "--exact", "c1000_5s", "--target", url, "--http3", "--connections",
                str(CONNECTIONS), "--insecure", "--quiet", "--json", out]
    if tool == "loadbench-h3-own":
        return [ARGS.loadbench, "--bench", "--exact", "c50_5s", "--target", url, "--http3", "--insecure", "--quiet",
                "--json", out]
    if tool == "loadbench-h2":
        return [ARGS.loadbench, "--bench", "--exact", "c1000_5s", "--target", url, "--http2", "--connections",
                str(CONNECTIONS), "--quiet", "--json", out]
    if tool == "oha-h3":
        return [ARGS.oha, "--http-version", "3", "-c", str(CONNECTIONS), "-p", str(STREAMS), "-z", f"{d}s",
                "--insecure", "--no-tui", "--output-format", "json", "-o", out, url + "/"]
    if tool == "oha-h3-own":
        return [ARGS.oha, "--http-version", "3", "-c", str(OWN_USERS), "-z", f"{d}s", "--insecure", "--no-tui",
                "--output-format", "json", "-o", out, url + "/"]
    raise ValueError(tool)


def parse(tool, out):
    """Returns (completed requests, req/s, p50 µs, p99 µs, protocol or None) from what the tool wrote."""
    if tool in OURS:
        return loadbench_result(tool, out)
    if tool.startswith("oha"):
        with open(out) as f:
            o = json.load(f)
        errors = o.get("errorDistribution") or {}
        unexpected = {k: v for k, v in errors.items() if k != "aborted due to deadline"}
        if unexpected:
            print(f"warning: {tool}: errors {unexpected}", file=sys.stderr)
        # Only responses count as completed: requests cut off by `-z`'s deadline are errors to oha.
        requests = sum(o.get("statusCodeDistribution", {}).values())
        p = o["latencyPercentiles"]
        if not requests or p["p50"] is None:
            return 0, 0.0, None, None, None
        return requests, o["summary"]["requestsPerSec"], p["p50"] * 1e6, p["p99"] * 1e6, "HTTP/3"
    raise ValueError(tool)


def udp_rcvbuf_errors():
    """The machine's count of UDP datagrams dropped for a full receive buffer, or None."""
    try:
        with open("/proc/net/snmp") as f:
            rows = [line.split() for line in f if line.startswith("Udp:")]
        names, values = rows[0], rows[1]
        return int(values[names.index("RcvbufErrors")])
    except (OSError, IndexError, ValueError):
        return None


def run_once(tool, server, cpu):
    with tempfile.TemporaryDirectory() as d:
        out, timing = os.path.join(d, "out.json"), os.path.join(d, "time.txt")
        before, drops_before = server_stats(server), udp_rcvbuf_errors()
        argv = ["/usr/bin/time", "-f", "%e %U %S %M", "-o", timing] + pinned(cpu, command(tool, server["url"], out))
        proc = subprocess.run(argv, capture_output=True, text=True, cwd=d)
        after, drops_after = server_stats(server), udp_rcvbuf_errors()
        # 4 is a loadbench run that completed and that its self-check called inconclusive: a
        # generator pinned to one CPU is at its limit on purpose here.
        if proc.returncode not in (0, 4):
            print(f"error: {tool} failed ({proc.returncode}): {(proc.stderr or proc.stdout).strip()[-500:]}",
                  file=sys.stderr)
            return None
        with open(timing) as f:
            elapsed, user, system, rss_kb = f.read().split()[-4:]
        requests, rps, p50, p99, protocol = parse(tool, out)
    if requests == 0:
        print(f"error: {tool} completed no request: {proc.stdout.strip()[-800:]}", file=sys.stderr)
        return None
    return {
        "requests": requests,
        "rps": rps,
        "p50": p50,
        "p99": p99,
        "protocol": protocol,
        # The h2 server counts the `after` request and its connection too; the h3 server's stats
        # travel over TCP, apart from what it counts.
        "server_connections": after["connections"] - before["connections"] - server["stats_counted"],
        "server_requests": after["requests"] - before["requests"] - server["stats_counted"],
        "udp_drops": None if drops_before is None or drops_after is None else drops_after - drops_before,
        # How much of its core the generator used over its whole run: well below 1, the server
        # (on one core too) was the limit, and CPU per request is the generator's cost at that rate.
        "core_use": (float(user) + float(system)) / max(float(elapsed), 0.01),
        **costs(user, system, rss_kb, requests),
    }


def report(results, loads):
    pinning = "servers on CPU 0, generators on CPU 1" if (os.cpu_count() or 1) >= 2 else "no pinning (1 CPU)"
    print(f"\nMedians of {ARGS.rounds} interleaved rounds, {DURATION_S} s per run; {pinning}; CPU = user+sys of the "
          f"generator process per completed request; core = its CPU time over its wall time; connections and "
          f"requests as the server counted them; UDP drops = the machine's RcvbufErrors during the run.")
    print("Load average (1 min) at the start of each round: " + ", ".join(f"{x:.2f}" for x in loads) + "\n")
    titles = {
        "h3": f"HTTP/3, {CONNECTIONS} QUIC connections × {STREAMS} streams",
        "h3-own": f"HTTP/3, {OWN_USERS} users on a QUIC connection each",
        "h2-vs-h3": f"loadbench, HTTP/3 against HTTP/2 (h2c), {CONNECTIONS} connections × {STREAMS} streams",
    }
    for shape, _, _ in SHAPES:
        print(f"{titles[shape]}\n")
        print("| generator | protocol | connections | requests (server) | req/s | p50 | p99 | CPU µs/req "
              "| user µs/req | sys µs/req | core | peak RSS | UDP drops |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for t in ROWS[shape]:
            runs = [r for r in results[t] if r]
            if not runs:
                print(f"| {t} | {'failed' if results[t] else 'not run'} | | | | | | | | | | | |")
                continue
            m = {k: median_of(runs, k) for k in ("server_connections", "server_requests", "rps", "p50", "p99",
                                                 "cpu_us", "user_us", "sys_us", "core_use", "rss_mb", "udp_drops")}
            protocols = "/".join(sorted({r["protocol"] or "?" for r in runs}))
            drops = "—" if m["udp_drops"] is None else f"{m['udp_drops']:.0f}"
            print(f"| {t} | {protocols} | {m['server_connections']:.0f} | {m['server_requests']:,.0f} "
                  f"| {m['rps']:,.0f} | {fmt_us(m['p50'])} | {fmt_us(m['p99'])} | {m['cpu_us']:.2f} "
                  f"| {m['user_us']:.2f} | {m['sys_us']:.2f} | {m['core_use']:.0%} | {m['rss_mb']:.1f} MB | {drops} |")
        print()
    print("CPU per request, median of each round's ratio:\n")
    print_targets(results, TARGETS)


def start_server(kind, cpu):
    port = free_port()
    if kind == "h3":
        # The QUIC port is UDP: a free TCP port number is free enough for it on a quiet machine,
        # and the server fails at start if it is not.
        stats_port = free_port()
        argv = [ARGS.h3_server, f"127.0.0.1:{port}", "--stats", f"127.0.0.1:{stats_port}"]
        proc = subprocess.Popen(pinned(cpu, argv), stdout=subprocess.DEVNULL)
        # The server binds its QUIC endpoint before its stats listener.
        wait_listening(stats_port)
        return {"proc": proc, "kind": kind, "url": f"https://localhost:{port}",
                "stats": f"http://127.0.0.1:{stats_port}", "stats_counted": 0}
    proc = subprocess.Popen(pinned(cpu, [ARGS.server, f"127.0.0.1:{port}", "--http2"]), stdout=subprocess.DEVNULL)
    wait_listening(port)
    return {"proc": proc, "kind": kind, "url": f"http://127.0.0.1:{port}", "stats_counted": 1}


def main():
    selected = set(ARGS.tools.split(",")) if ARGS.tools else None
    results, loads = interleaved(ARGS.rounds, SHAPES, ("h3", "h2"), start_server, run_once, selected,
                                 lambda res: f"{res['core_use']:.0%} of a core, {res['rss_mb']:.1f} MB, "
                                             f"{res['udp_drops']} UDP drops")
    if ARGS.save:
        save_runs(ARGS.save, ARGS.rounds, DURATION_S, loads, results)
    report(results, loads)


if __name__ == "__main__":
    parser = runner_arguments(__doc__, rounds=3)
    parser.add_argument("--h3-server", required=True, help="bench/src/bin/h3-hello-server.rs's binary")
    parser.add_argument("--oha", required=True, help="an oha built with its `http3` feature")
    parser.add_argument("--tools", help="comma-separated subset of the generators to run (default: all)")
    parser.add_argument("--save", help="write every run's figures to this JSON file")
    ARGS = parser.parse_args()
    # The generators run in a temporary directory.
    for name in ("server", "h3_server", "loadbench", "oha"):
        setattr(ARGS, name, os.path.abspath(getattr(ARGS, name)))
    main()
