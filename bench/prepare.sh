# Sourced by bench/peers.sh, bench/peers-tls.sh, bench/peers-h2.sh and bench/peers-h3.sh: installs what the peer
# benchmark needs by name (wrk and time from Debian's packages, oha from crates.io), builds the
# binaries in the `peak` profile, and sets `bin_dir` to where they are.

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

# The `peak` profile (the workspace's Cargo.toml): fat LTO, one codegen unit, as a crate whose
# generator is its limit would build its scenarios (docs/measurement.md). Its first build takes a
# few minutes.
cargo build --profile peak --quiet -p loadbench-bench --bins -p cargo-loadbench
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
bin_dir="$target_dir/peak"
