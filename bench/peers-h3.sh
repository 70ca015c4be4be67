#!/usr/bin/env bash
# The HTTP/3 peer benchmark: loadbench over QUIC against oha built with HTTP/3, on the h3 hello
# server (quinn and h3, one thread), and loadbench's HTTP/3 against its own HTTP/2, measured in one
# interleaved session and reported as ratios. See bench/README.md.
#
#   bash bench/peers-h3.sh            # 3 rounds, 5 s per run
#   ROUNDS=5 bash bench/peers-h3.sh
#   bash bench/peers-h3.sh --tools loadbench-h3,oha-h3   # a subset of the generators
#   OHA_H3=/path/to/oha bash bench/peers-h3.sh           # an oha built with `--features http3`
#
# Installs what it needs by name: nghttp (Debian's nghttp2-client, for the HTTP/2 server's
# counts), what bench/peers.sh needs, and an oha with HTTP/3 (`cargo install oha --features
# http3` into the target directory) when neither OHA_H3 nor the `oha` on the PATH speaks it.
# Debian's h2load is built without QUIC and takes no part. All traffic goes to 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v nghttp >/dev/null; then
  echo "installing nghttp2-client (apt-get)" >&2
  apt-get update -qq
  apt-get install -y -qq nghttp2-client >/dev/null
fi
source bench/prepare.sh

# An oha without the `http3` feature says so at once; one with it tries the (closed) port until
# its timeout, which `timeout` cuts short.
speaks_h3() {
  [ -x "$1" ] && ! timeout 3 "$1" --http-version 3 -n 1 --no-tui https://127.0.0.1:9/ 2>&1 \
    | grep -q "not been built with HTTP/3"
}
oha_h3=${OHA_H3:-}
if [ -z "$oha_h3" ]; then
  if speaks_h3 "$(command -v oha)"; then
    oha_h3=$(command -v oha)
  else
    oha_h3="$target_dir/oha-h3/bin/oha"
    if [ ! -x "$oha_h3" ]; then
      echo "installing oha with HTTP/3 (cargo install --features http3)" >&2
      cargo install --locked --quiet oha --version 1.16.0 --features http3 --root "$target_dir/oha-h3"
    fi
  fi
fi
speaks_h3 "$oha_h3" || { echo "error: $oha_h3 has no HTTP/3" >&2; exit 1; }

exec python3 bench/peers_h3.py \
  --server "$bin_dir/hello-server" \
  --h3-server "$bin_dir/h3-hello-server" \
  --loadbench "$bin_dir/peer-loadbench" \
  --cargo-loadbench "$bin_dir/cargo-loadbench" \
  --oha "$oha_h3" \
  --rounds "${ROUNDS:-3}" "$@"
