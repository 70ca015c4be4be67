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

exec python3 bench/peers.py \
  --server "$target_dir/release/hello-server" \
  --loadbench "$target_dir/release/peer-loadbench" \
  --cargo-loadbench "$target_dir/release/cargo-loadbench" \
  --rounds "${ROUNDS:-3}"
