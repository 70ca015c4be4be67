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

need_apt=()
command -v wrk >/dev/null || need_apt+=(wrk)
[ -x /usr/bin/time ] || need_apt+=(time)
command -v taskset >/dev/null || need_apt+=(util-linux)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]} (apt-get)" >&2
  apt-get update -qq
  apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! command -v oha >/dev/null; then
  echo "installing oha (cargo install)" >&2
  cargo install oha --locked --quiet
fi

cargo build --release --quiet -p loadbench-bench --bins -p cargo-loadbench
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

exec python3 bench/peers_tls.py \
  --server "$target_dir/release/hello-server" \
  --loadbench "$target_dir/release/peer-loadbench" \
  --cargo-loadbench "$target_dir/release/cargo-loadbench" \
  --rounds "${ROUNDS:-5}" "$@"
