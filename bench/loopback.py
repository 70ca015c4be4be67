"""What the bench scripts share for servers on 127.0.0.1: a free port, pinning to a CPU, and
waiting until a server listens."""

import argparse
import re
import socket
import sys
import time


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
