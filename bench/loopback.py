"""What the bench scripts share for servers on 127.0.0.1: a free port, pinning to a CPU, and
waiting until a server listens."""

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
