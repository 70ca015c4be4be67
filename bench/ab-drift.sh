#!/usr/bin/env bash
# `cargo loadbench ab` against the two-step comparison it replaces: false alarms with a neighbour
# arriving halfway, and wall time. See ab_drift.py; results in RESULTS.md § "ab: drift".
#   bash bench/ab-drift.sh                # 5 trials of each with a neighbour, 3 timed
#   TRIALS=10 TIME_TRIALS=5 bash bench/ab-drift.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v python3 >/dev/null || { echo "python3 is needed" >&2; exit 2; }
exec python3 bench/ab_drift.py
