#!/usr/bin/env bash
# The HTTPS peer benchmark: loadbench against wrk and oha on the TLS hello server (hyper +
# tokio-rustls, self-signed certificate made at start), keep-alive at c=50 and c=1000 and a new
# connection per request, measured in one interleaved session and reported as ratios. See
# bench/README.md.
#
#   bash bench/peers-tls.sh            # 5 rounds, 5 s per run
#   ROUNDS=9 bash bench/peers-tls.sh
#
# Installs what it needs by name, as bench/peers.sh does. All traffic goes to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

source bench/prepare.sh

exec python3 bench/peers_tls.py \
  --server "$bin_dir/hello-server" \
  --loadbench "$bin_dir/peer-loadbench" \
  --cargo-loadbench "$bin_dir/cargo-loadbench" \
  --rounds "${ROUNDS:-5}" "$@"
