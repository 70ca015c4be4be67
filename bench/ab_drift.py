#!/usr/bin/env python3
"""`cargo loadbench ab` against the two-step comparison it replaces, on one unchanged pull request.

Makes a throwaway repository like the one tests/tests/ab.rs makes: the Python service of
tests/data/ab/app.py in service/ (4 ms asleep and 1 ms of CPU a request), a bench crate in bench/
(one scenario, 4 users, COUNT requests), and a pull request that only adds a README, so that every
difference measured is noise. Then, interleaved, TRIALS times each:

  two-step  the workflow loadbench shipped before `ab`: the base checked out and its service
            started, `--runs 6 --save-baseline base`; then the head and its service,
            `--runs 6 --baseline base --fail-on-regression`. A CPU-hungry neighbour (two busy
            loops, as many as the machine's cores) arrives between the two steps, halfway through
            the comparison, as a neighbour arrives on a shared CI runner.
  ab        `cargo loadbench ab BASE --serve 'python3 service/app.py'` (6 rounds after one
            warmup round), the same neighbour arriving when the fourth round starts.

and, without a neighbour, the wall time of each (builds already warm): `ab`, `ab --warmup-rounds 0`
and the two steps, TIME_TRIALS times each, interleaved.

Prints one line per trial (exit code, verdict, the change of req/s, p50 and p99) and the median
times. All traffic goes to 127.0.0.1. Run it through bench/ab-drift.sh.
"""

import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRIALS = int(os.environ.get("TRIALS", "5"))
TIME_TRIALS = int(os.environ.get("TIME_TRIALS", "3"))
COUNT = int(os.environ.get("COUNT", "240"))
BIN = ROOT / "target" / "release" / "cargo-loadbench"
TARGET = ROOT / "target" / "ab-drift"
SERVE = "python3 service/app.py"


def git(repo, *args):
    out = subprocess.run(
        ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid", "-c", "commit.gpgsign=false", *args],
        cwd=repo, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def make_repo(parent):
    repo = parent / "drift"
    (repo / "service").mkdir(parents=True)
    git(repo, "init", "--quiet")
    shutil.copy(ROOT / "tests" / "data" / "ab" / "app.py", repo / "service" / "app.py")
    (repo / ".gitignore").write_text("target/\n/loadbench.*\n")
    bench = repo / "bench"
    (bench / "benches").mkdir(parents=True)
    (bench / "src").mkdir()
    (bench / "src" / "lib.rs").write_text("//! Load tests in benches/.\n")
    (bench / "Cargo.toml").write_text(
        '[package]\nname = "drift-bench"\nversion = "0.1.0"\nedition = "2024"\npublish = false\n\n[workspace]\n\n'
        f'[dev-dependencies]\nloadbench-runtime = {{ path = "{ROOT / "loadbench-runtime"}" }}\n\n'
        '[[bench]]\nname = "api"\nharness = false\n')
    (bench / "benches" / "api.rs").write_text(
        f"#[loadbench::scenario(concurrency = 4, count = {COUNT})]\n"
        "async fn home(ctx: &mut loadbench::Ctx) -> loadbench::Result<()> {\n"
        '    ctx.get("/").send().await?.expect_status(200)?;\n    Ok(())\n}\n\nloadbench::main!();\n')
    lock = (ROOT / "tests" / "fixtures" / "gate" / "Cargo.lock").read_text()
    (bench / "Cargo.lock").write_text(lock.replace('name = "gate"', 'name = "drift-bench"'))
    subprocess.run(["cargo", "update", "--workspace", "--offline", "--quiet", "--manifest-path", str(bench / "Cargo.toml")],
                   check=True)
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "load tests")
    base = git(repo, "rev-parse", "HEAD")
    (repo / "README.md").write_text("# drift\n")
    git(repo, "add", "--all")
    git(repo, "commit", "--quiet", "-m", "docs: a readme")
    # The two-step comparison checks the base out as a worktree of its own (the shipped workflow
    # checked it out in place; the same files either way).
    git(repo, "worktree", "add", "--quiet", "--detach", str(parent / "base-checkout"), base)
    return repo, parent / "base-checkout", base


def env():
    e = dict(os.environ, CARGO_TARGET_DIR=str(TARGET))
    for name in ("LOADBENCH_TARGET", "LOADBENCH_OUTPUT", "GITHUB_STEP_SUMMARY"):
        e.pop(name, None)
    return e


class Neighbour:
    """Busy loops, one per core, until stopped."""

    def __init__(self):
        self.procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(os.cpu_count() or 2)]

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()


class Service:
    """The Python service of one checkout, on a free port."""

    def __init__(self, checkout):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(["python3", "service/app.py"], cwd=checkout,
                                     env=dict(os.environ, PORT=str(self.port)), stdout=subprocess.DEVNULL)
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the service did not start")

    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait()


def loadbench(args, cwd, check_codes=(0, 1, 4)):
    out = subprocess.run([str(BIN), "loadbench", *args], cwd=cwd, env=env(), capture_output=True, text=True)
    if out.returncode not in check_codes:
        sys.exit(f"cargo loadbench {' '.join(args)} exited {out.returncode}:\n{out.stderr[-3000:]}")
    return out


def verdict(path):
    doc = json.loads(Path(path).read_text())
    c = doc["scenarios"][0]["comparison"]
    changes = {m["metric"]: m["change"] for m in c["metrics"]}
    return c["verdict"], changes


def two_step(repo, base_checkout, tmp, neighbour_halfway):
    baselines = tmp / "baselines"
    service = Service(base_checkout)
    loadbench(["--manifest-path", str(base_checkout / "bench" / "Cargo.toml"), "--target", service.url(), "--runs", "6",
               "--save-baseline", "base", "--baseline-dir", str(baselines), "--quiet"], repo, (0,))
    service.stop()
    neighbour = Neighbour() if neighbour_halfway else None
    service = Service(repo)
    out = loadbench(["--manifest-path", str(repo / "bench" / "Cargo.toml"), "--target", service.url(), "--runs", "6",
                     "--baseline", "base", "--baseline-dir", str(baselines), "--fail-on-regression", "--quiet",
                     "--json", str(tmp / "two-step.json")], repo)
    service.stop()
    if neighbour:
        neighbour.stop()
    return out.returncode, *verdict(tmp / "two-step.json")


def ab(repo, base, tmp, neighbour_halfway, extra=()):
    stderr = open(tmp / "ab.stderr", "w+")
    proc = subprocess.Popen([str(BIN), "loadbench", "ab", base, "--serve", SERVE, "--json", str(tmp / "ab.json"), *extra],
                            cwd=repo, env=env(), stdout=subprocess.DEVNULL, stderr=stderr)
    neighbour = None
    if neighbour_halfway:
        while proc.poll() is None:
            if "[round 4 of 6]" in (tmp / "ab.stderr").read_text():
                neighbour = Neighbour()
                break
            time.sleep(0.02)
    code = proc.wait()
    if neighbour:
        neighbour.stop()
    # 4: completed, and called inconclusive by the self-check (the neighbour's point, at times).
    if code not in (0, 1, 4):
        sys.exit(f"ab exited {code}:\n{(tmp / 'ab.stderr').read_text()[-3000:]}")
    return code, *verdict(tmp / "ab.json")


def line(name, trial, result):
    code, verdict_, changes = result
    shown = ", ".join(f"{k} {v * 100:+.1f}%" for k, v in changes.items() if k != "success_rate")
    print(f"{name:9} trial {trial}: exit {code}, {verdict_:10} ({shown})", flush=True)


def main():
    subprocess.run(["cargo", "build", "--release", "--quiet", "-p", "cargo-loadbench"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory(prefix="ab-drift-") as tmp:
        tmp = Path(tmp)
        repo, base_checkout, base = make_repo(tmp)
        print(f"machine: {os.cpu_count()} CPUs; {COUNT} requests a run, 6 rounds/runs a side; warming the builds", flush=True)
        ab(repo, base, tmp, False)
        two_step(repo, base_checkout, tmp, False)
        print("\nA neighbour arriving halfway (unchanged code: any regression is a false alarm)", flush=True)
        for trial in range(TRIALS):
            line("two-step", trial, two_step(repo, base_checkout, tmp, True))
            line("ab", trial, ab(repo, base, tmp, True))
        print("\nWall time without a neighbour, builds warm", flush=True)
        times = {"ab": [], "ab --warmup-rounds 0": [], "two-step": []}
        for _ in range(TIME_TRIALS):
            for name in times:
                start = time.monotonic()
                if name == "two-step":
                    two_step(repo, base_checkout, tmp, False)
                else:
                    ab(repo, base, tmp, False, ("--warmup-rounds", "0") if "warmup" in name else ())
                times[name].append(time.monotonic() - start)
        for name, runs in times.items():
            print(f"{name:22} median {statistics.median(runs):5.1f} s  ({', '.join(f'{t:.1f}' for t in runs)})")


if __name__ == "__main__":
    main()
