#!/usr/bin/env bash
# Tail latency on a shared machine: loadbench against ab and oha on the same nginx, which shares
# the machine's cores with the generator as in the seed's `ab -n 2000 -c 200` bake-off. Reports
# each generator's p50, p99 and max, medians over interleaved rounds, and loadbench's p99 over
# ab's and over its own single-thread run. See bench/README.md § "Tail latency".
#
#   bash bench/tail.sh              # 5 rounds × {108 KB, 1 MB} × {ab, oha, loadbench ×3}
#   ROUNDS=9 bash bench/tail.sh
#
# Installs what it needs by name: nginx and apache2-utils (ab) from Debian's packages, oha from
# crates.io. All traffic goes to 127.0.0.1; nginx is stopped when the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
command -v ab >/dev/null || need_apt+=(apache2-utils)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing ${need_apt[*]} (apt-get)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
if ! command -v oha >/dev/null; then
  echo "installing oha (cargo install)" >&2
  cargo install oha --locked --quiet
fi

# `cargo loadbench url` as a user installs it: the release profile.
cargo build --release --quiet -p cargo-loadbench
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

exec python3 bench/tail.py --cargo-loadbench "${CARGO_LOADBENCH:-$target_dir/release/cargo-loadbench}" --rounds "${ROUNDS:-5}"
