#!/usr/bin/env bash
# The shared-connection peer benchmark: loadbench over HTTP/2 against h2load and oha, and
# pipelined HTTP/1.1 against wrk with bench/pipeline.lua, on the hello server (hyper, one thread),
# measured in one interleaved session and reported as ratios. See bench/README.md.
#
#   bash bench/peers-h2.sh            # 3 rounds, 5 s per run
#   ROUNDS=5 bash bench/peers-h2.sh
#   bash bench/peers-h2.sh --tools h2load,oha-h2   # a subset of the generators
#
# Installs what it needs by name: h2load and nghttp (Debian's nghttp2-client), then what
# bench/peers.sh needs (wrk, time, oha). All traffic goes to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v h2load >/dev/null || ! command -v nghttp >/dev/null; then
  echo "installing nghttp2-client (apt-get)" >&2
  apt-get update -qq
  apt-get install -y -qq nghttp2-client >/dev/null
fi
source bench/prepare.sh

exec python3 bench/peers_h2.py \
  --server "$bin_dir/hello-server" \
  --loadbench "$bin_dir/peer-loadbench" \
  --cargo-loadbench "$bin_dir/cargo-loadbench" \
  --lua bench/pipeline.lua \
  --rounds "${ROUNDS:-3}" "$@"
