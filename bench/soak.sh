#!/usr/bin/env bash
# The soak check (issue 11): 1,000 users of `cargo loadbench url` for 5 minutes against the bench
# server, sampling the generator's resident memory; passes when its RSS at the end is within 10 %
# of its RSS after the first 10 s and no request failed. See bench/README.md.
#
#   bash bench/soak.sh                       # 1,000 users, 5 minutes
#   USERS=200 DURATION=60 bash bench/soak.sh  # a shorter look
#
# Not part of the test suite: it takes the whole run's time. All traffic goes to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet -p loadbench-bench -p cargo-loadbench --bin hello-server --bin cargo-loadbench
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

# 1,000 connections and the generator's own files.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

exec python3 bench/soak.py \
  --server "$target_dir/release/hello-server" \
  --cargo-loadbench "$target_dir/release/cargo-loadbench" \
  --users "${USERS:-1000}" \
  --duration "${DURATION:-300}"
