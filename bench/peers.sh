#!/usr/bin/env bash
# The peer benchmark: loadbench against wrk and oha on the same minimal hyper server, measured in
# one interleaved session, and reported as ratios. See bench/README.md.
#
#   bash bench/peers.sh            # 3 rounds × {c=50, c=1000} × {loadbench, wrk, oha}, 10 s each
#   ROUNDS=5 bash bench/peers.sh
#
# Installs what it needs by name: wrk and time from Debian's packages, oha from crates.io.
# All traffic goes to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

source bench/prepare.sh

exec python3 bench/peers.py \
  --server "$bin_dir/hello-server" \
  --loadbench "$bin_dir/peer-loadbench" \
  --cargo-loadbench "$bin_dir/cargo-loadbench" \
  --rounds "${ROUNDS:-3}"
