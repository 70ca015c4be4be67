#!/usr/bin/env python3
"""Driver of the tail-latency benchmark; run it through bench/tail.sh, which installs and builds.

Starts Debian's nginx with one worker process and Debian's own settings (sendfile, tcp_nopush,
keep-alive, an access log) on 127.0.0.1, serving a 108 KB file and a 1 MB file of random bytes.
Nothing is pinned: the server and the generators share the cores, as they did in the seed's
bake-off. For each round, for each file, runs `ab -n 2000 -c 200 -k`, `oha -n 2000 -c 200`,
`cargo loadbench url … -n 2000 -c 200` with its defaults, with `LOADBENCH_THREADS=1` and with
a worker thread per CPU (the default before a server on this machine got half of them), in an
order that reverses every other round, so that drift hits all of them alike. Prints, per file,
the median over rounds of p50, p99 and max, the range of p99, how many of loadbench's runs its
self-check flagged, and loadbench's p99 over ab's and over its single-thread run (the median of
each round's ratio).
"""

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from loopback import free_port, wait_listening  # noqa: E402

FILES = {"108 KB": ("f108k.bin", 110_592), "1 MB": ("f1m.bin", 1_048_576)}
TOOLS = ("ab", "oha", "loadbench", "loadbench -t1", "loadbench, all CPUs")
REQUESTS, CONCURRENCY = 2000, 200

NGINX_CONF = """worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 768; }}
http {{
  sendfile on;
  tcp_nopush on;
  types_hash_max_size 2048;
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log {dir}/access.log;
  server {{
    listen 127.0.0.1:{port};
    root {dir}/html;
  }}
}}
"""


class Failed(Exception):
    """A step that did not do its job, said in one line."""


def call(argv, env=None):
    """Runs `argv` and returns its standard output; Failed, with its last line of error, if it
    cannot start or exits with an error."""
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
    except OSError as e:
        raise Failed(f"cannot run {argv[0]}: {e}") from None
    # 4 is a loadbench run that completed and that its self-check called inconclusive: figures
    # this script reads all the same (the table it prints says which runs were flagged).
    if done.returncode not in (0, 4):
        said = [line for line in done.stderr.splitlines() if line.strip()]
        raise Failed(f"{os.path.basename(argv[0])} exited with {done.returncode}: {said[-1] if said else 'no message'}")
    return done.stdout


def run(tool, url, cargo_loadbench, scratch):
    """Returns (p50 ms, p99 ms, max ms, flagged) for one run of `tool` against `url`."""
    if tool == "ab":
        out = call(["ab", "-n", str(REQUESTS), "-c", str(CONCURRENCY), "-k", url])
        pct = lambda p: float(re.search(r"^\s*%s%%\s+(\d+)" % p, out, re.M).group(1))
        return pct(50), pct(99), pct(100), None
    if tool == "oha":
        out = call(["oha", "-n", str(REQUESTS), "-c", str(CONCURRENCY), "--no-tui", "--output-format", "json", url])
        o = json.loads(out)
        lp = o["latencyPercentiles"]
        return lp["p50"] * 1e3, lp["p99"] * 1e3, o["summary"]["slowest"] * 1e3, None
    env = dict(os.environ)
    env.pop("LOADBENCH_THREADS", None)
    if tool == "loadbench -t1":
        env["LOADBENCH_THREADS"] = "1"
    elif tool == "loadbench, all CPUs":
        env["LOADBENCH_THREADS"] = str(os.cpu_count() or 1)
    out = os.path.join(scratch, "run.json")
    call([cargo_loadbench, "loadbench", "url", url, "-n", str(REQUESTS), "-c", str(CONCURRENCY), "--quiet",
          "--json", out], env=env)
    with open(out) as f:
        s = json.load(f)["scenarios"][0]
    lat = s["latency_us"]
    if s["ok"] != REQUESTS:
        raise Failed(f"{tool}: {s['ok']} of {REQUESTS} requests succeeded against {url}")
    return lat["p50"] / 1e3, lat["p99"] / 1e3, lat["max"] / 1e3, s["generator"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cargo-loadbench", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="loadbench-tail-")
    # nginx's worker runs as an unprivileged user when started as root: it must read the files.
    os.chmod(scratch, 0o755)
    os.makedirs(os.path.join(scratch, "html"), mode=0o755)
    for name, size in FILES.values():
        with open(os.path.join(scratch, "html", name), "wb") as f:
            f.write(os.urandom(size))
        os.chmod(os.path.join(scratch, "html", name), 0o644)
    port = free_port()
    with open(os.path.join(scratch, "nginx.conf"), "w") as f:
        f.write(NGINX_CONF.format(dir=scratch, port=port))
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    try:
        call([nginx, "-c", os.path.join(scratch, "nginx.conf"), "-p", scratch])
        wait_listening(port)
        version = subprocess.run([nginx, "-v"], capture_output=True, text=True).stderr.strip()
        print(f"# {version}, 1 worker; {os.cpu_count()} CPUs shared by server and generator; "
              f"{REQUESTS} requests, {CONCURRENCY} connections; {args.rounds} rounds; "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
        results = {shape: {tool: [] for tool in TOOLS} for shape in FILES}
        for r in range(args.rounds):
            order = [(shape, tool) for shape in FILES for tool in TOOLS]
            for shape, tool in (order if r % 2 == 0 else order[::-1]):
                url = f"http://127.0.0.1:{port}/{FILES[shape][0]}"
                results[shape][tool].append(run(tool, url, args.cargo_loadbench, scratch))
            print(f"round {r + 1} of {args.rounds} done", file=sys.stderr)
        report(results, args.rounds)
    except Failed as e:
        sys.exit(f"error: {e}")
    finally:
        subprocess.run([nginx, "-c", os.path.join(scratch, "nginx.conf"), "-p", scratch, "-s", "stop"],
                       stderr=subprocess.DEVNULL)
        shutil.rmtree(scratch, ignore_errors=True)


def report(results, rounds):
    median = statistics.median
    for shape, by_tool in results.items():
        print(f"\n{shape} bodies\n")
        print("| generator | p50 | p99 | p99 range | max | self-check flagged |")
        print("|---|---:|---:|---:|---:|---|")
        for tool, runs in by_tool.items():
            p99s = [r[1] for r in runs]
            flagged = "-"
            if runs[0][3] is not None:
                limits = [r[3]["limit"] for r in runs if r[3]["saturated"]]
                flagged = f"{len(limits)} of {len(runs)}" + (f" ({', '.join(sorted(set(limits)))})" if limits else "")
            threads = f" ({runs[0][3]['worker_threads']} thread{'s' if runs[0][3]['worker_threads'] > 1 else ''})" \
                if runs[0][3] is not None else ""
            print(f"| {tool}{threads} | {median(r[0] for r in runs):.1f} ms | {median(p99s):.1f} ms | "
                  f"{min(p99s):.1f}–{max(p99s):.1f} ms | {median(r[2] for r in runs):.1f} ms | {flagged} |")
        ours = [r[1] for r in by_tool["loadbench"]]
        for peer in ("ab", "loadbench -t1"):
            ratios = [a / b for a, b in zip(ours, (r[1] for r in by_tool[peer]))]
            print(f"\nloadbench p99 / {peer} p99: {median(ratios):.2f} (median of {rounds} rounds' ratios)")


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.default_int_handler)
    main()
