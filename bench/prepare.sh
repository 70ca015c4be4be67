# Sourced by bench/peers.sh and bench/peers-tls.sh: installs what the peer benchmark needs by
# name (wrk and time from Debian's packages, oha from crates.io), builds the release binaries, and
# sets `target_dir` to where they are.

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
