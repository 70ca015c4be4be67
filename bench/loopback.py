"""What the bench scripts share for servers on 127.0.0.1: a free port, pinning to a CPU, waiting
until a server listens, its counts, and the interleaved rounds of the peer benchmarks with their
report's figures."""

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned(cpu, argv):
    return (["taskset", "-c", str(cpu)] + argv) if cpu is not None else argv


def wait_listening(port, deadline_s=10):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"error: the hello server did not listen on 127.0.0.1:{port}")


def runner_arguments(doc, rounds):
    """The command line both peer benchmarks share: the binaries they run and the rounds."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--loadbench", required=True)
    parser.add_argument("--cargo-loadbench", required=True)
    parser.add_argument("--rounds", type=int, default=rounds)
    return parser


def costs(user, system, rss_kb, requests):
    """CPU per request (user + system, and each), in µs, and peak RSS in MB, from /usr/bin/time's
    `%U %S %M` of a generator that completed `requests`."""
    cpu_s = float(user) + float(system)
    return {
        "cpu_s": cpu_s,
        "cpu_us": cpu_s * 1e6 / requests,
        "user_us": float(user) * 1e6 / requests,
        "sys_us": float(system) * 1e6 / requests,
        "rss_mb": int(rss_kb) / 1024,
    }


UNITS = {"us": 1.0, "µs": 1.0, "ms": 1e3, "s": 1e6}


def wrk_duration_us(text):
    """A latency as wrk prints it (`1.23ms`), in microseconds."""
    m = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    if not m:
        raise ValueError(f"unexpected wrk latency `{text}`")
    return float(m.group(1)) * UNITS[m.group(2)]


def server_stats(server):
    """A hello server's counts (`connections`, `requests`) from its `/stats`: over `server["stats"]`
    when it has a stats port of its own (the HTTP/3 server's, plain HTTP/1.1), over h2c with
    `nghttp` for an `h2` server (urllib speaks HTTP/1.1 only; nghttp comes with h2load in
    nghttp2-client), else over HTTP/1.1 on its own port."""
    if "stats" not in server and server["kind"] == "h2":
        proc = subprocess.run(["nghttp", server["url"] + "/stats"], capture_output=True, text=True, timeout=10)
        if proc.returncode != 0:
            raise RuntimeError(f"nghttp {server['url']}/stats failed: {proc.stderr.strip()}")
        return json.loads(proc.stdout)
    with urllib.request.urlopen(server.get("stats", server["url"]) + "/stats", timeout=10) as r:
        return json.load(r)


def loadbench_result(tool, out):
    """(completed requests, req/s, p50 µs, p99 µs, HTTP version or None) of the one scenario in
    loadbench's results file `out`, warning on stderr of the iterations of `tool` that failed."""
    with open(out) as f:
        s = json.load(f)["scenarios"][0]
    if s["failed"]:
        errors = {k: v for k, v in (s.get("errors") or {}).items() if v}
        print(f"warning: {tool}: {s['failed']} iterations failed: {errors}", file=sys.stderr)
    if not s["ok"]:
        return 0, 0.0, None, None, None
    return s["ok"], s["rps"], s["latency_us"]["p50"], s["latency_us"]["p99"], (s.get("http") or {}).get("version")


def fmt_us(us):
    if us is None:
        return "—"
    return f"{us / 1e3:.2f}ms" if us >= 1000 else f"{us:.0f}µs"


def median_of(runs, key):
    values = [r[key] for r in runs if r[key] is not None]
    return statistics.median(values) if values else None


def per_round_ratios(results, ours, other):
    return [a["cpu_us"] / b["cpu_us"] for a, b in zip(results[ours], results[other]) if a and b]


def print_targets(results, targets):
    """Each `(ours, other, bound)`'s CPU per request as the median of each round's ratio, held to
    `bound` unless it is None."""
    for ours, other, bound in targets:
        each = per_round_ratios(results, ours, other)
        if not each:
            print(f"- {ours}/{other}: not measured (a side failed or did not run)")
            continue
        ratio = statistics.median(each)
        line = f"- {ours}/{other}: {ratio:.2f}× (rounds: {', '.join(f'{x:.2f}' for x in each)})"
        if bound is not None:
            line += f"; target ≤ {bound}×: {'met' if ratio <= bound else 'NOT met'}"
        print(line)
    print()


def interleaved(rounds, shapes, kinds, start_server, run_once, selected, progress):
    """Runs `rounds` rounds, each running every shape's generators in turn (`(shape, server kind,
    tools)`, only `selected` ones when given) against servers of `kinds`, started with
    `start_server(kind, cpu)` on CPU 0 and stopped at the end; the generators run on CPU 1.
    Returns each tool's runs (None for a failed one) and the load average at each round's start;
    `progress(run)` is the tail of the line each run prints on stderr."""
    server_cpu, generator_cpu = (0, 1) if (os.cpu_count() or 1) >= 2 else (None, None)
    results = {t: [] for _, _, tools in shapes for t in tools}
    loads = []
    servers = {}
    try:
        for kind in kinds:
            servers[kind] = start_server(kind, server_cpu)
        for r in range(1, rounds + 1):
            with open("/proc/loadavg") as f:
                loads.append(float(f.read().split()[0]))
            for _, server, tools in shapes:
                for tool in tools:
                    if selected and tool not in selected:
                        continue
                    res = run_once(tool, servers[server], generator_cpu)
                    results[tool].append(res)
                    if res:
                        print(f"round {r} {tool}: {res['rps']:,.0f} req/s, {res['cpu_us']:.2f} µs CPU/request, "
                              f"{res['requests']} requests ({res['server_requests']} at the server) on "
                              f"{res['server_connections']} connections, {res['protocol']}, {progress(res)}",
                              file=sys.stderr, flush=True)
    finally:
        for s in servers.values():
            s["proc"].terminate()
            s["proc"].wait()
    return results, loads


def save_runs(path, rounds, duration_s, loads, results):
    """Every run's figures, as `--save` writes them."""
    with open(path, "w") as f:
        json.dump({"rounds": rounds, "duration_s": duration_s, "loads": loads, "results": results}, f, indent=1)
