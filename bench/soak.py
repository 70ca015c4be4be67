#!/usr/bin/env python3
"""Driver of the soak check; run it through bench/soak.sh, which builds first.

Starts the hello server (pinned to CPU 0 when the machine has two CPUs or more, the generator to
CPU 1), runs `cargo loadbench url` with USERS users for DURATION seconds from a directory outside
any Cargo workspace, and reads the generator's resident memory (VmRSS in /proc/PID/status) once a
second while it runs. The reference is the RSS 10 s into the run, once every connection is open
and every buffer has grown to its working size; the check is the last sample before the run ends.

Passes (exit 0) when the last RSS is within 10 % of the reference and the JSON counts no failed
request; prints the figures either way, in the form bench/RESULTS.md keeps them.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from loopback import free_port, pinned, wait_listening

REFERENCE_S = 10
TOLERANCE = 0.10


def rss_kib(pid):
    """The process's resident set now, in KiB; None once it has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def main():
    have_taskset = subprocess.run(["sh", "-c", "command -v taskset"], capture_output=True).returncode == 0
    server_cpu, generator_cpu = (0, 1) if (os.cpu_count() or 1) >= 2 and have_taskset else (None, None)
    port = free_port()
    server = subprocess.Popen(pinned(server_cpu, [ARGS.server, f"127.0.0.1:{port}"]), stdout=subprocess.DEVNULL)
    samples = []  # (seconds since start, RSS KiB)
    try:
        wait_listening(port)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            argv = [ARGS.cargo_loadbench, "loadbench", "url", f"http://127.0.0.1:{port}/",
                    "-c", str(ARGS.users), "-d", f"{ARGS.duration}s", "--quiet", "--json", out]
            # taskset execs the generator: the child's pid is the generator's.
            generator = subprocess.Popen(pinned(generator_cpu, argv), cwd=d)
            start = time.monotonic()
            while generator.poll() is None:
                kib = rss_kib(generator.pid)
                if kib is not None:
                    samples.append((time.monotonic() - start, kib))
                time.sleep(1)
            # 4: completed, and called inconclusive by the self-check (a shared machine).
            if generator.returncode not in (0, 4):
                sys.exit(f"error: cargo loadbench url exited with {generator.returncode}")
            with open(out) as f:
                s = json.load(f)["scenarios"][0]
    finally:
        server.terminate()
        server.wait()

    reference = next((kib for t, kib in samples if t >= REFERENCE_S), None)
    if reference is None or len(samples) < 2:
        sys.exit("error: the run was too short to sample")
    end_t, end = samples[-1]
    peak = max(kib for _, kib in samples)
    drift = (end - reference) / reference
    passed = abs(drift) <= TOLERANCE and s["failed"] == 0
    print(f"users: {ARGS.users}, duration: {ARGS.duration} s, "
          f"requests: {s['iterations']:,} ({s['ok']:,} ok, {s['failed']:,} failed; errors {s['errors']}), "
          f"{s['rps']:,.0f} req/s")
    print(f"RSS at {REFERENCE_S} s: {reference / 1024:.1f} MB; at {end_t:.0f} s (last sample): "
          f"{end / 1024:.1f} MB; peak sampled: {peak / 1024:.1f} MB; drift {drift * 100:+.1f} % "
          f"(limit ±{TOLERANCE * 100:.0f} %)")
    minute = [f"{kib / 1024:.1f}" for t, kib in samples if int(t) % 60 == 0 or t == end_t]
    print(f"RSS once a minute (MB): {', '.join(minute)}")
    print("PASS" if passed else "FAIL")
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--cargo-loadbench", required=True)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--duration", type=int, default=300)
    ARGS = parser.parse_args()
    main()
