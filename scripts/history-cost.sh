#!/bin/bash
# The CPU cost of track history (issue 20): runs `cuasd serve` fed by
# `cuasd simulate` (2,000 aircraft and 300 drones at real broadcast rates)
# and prints the serve process's CPU time over 40 s, with --history on or
# off. Usage: BIN=bin/cuasd scripts/history-cost.sh true|false
# (ports 18621 HTTP and 14222 NATS on loopback must be free).
set -euo pipefail
BIN=${BIN:-bin/cuasd}
H=${1:-true}
D=$(mktemp -d)
"$BIN" serve --history="$H" --data-dir "$D" --http-addr 127.0.0.1:18621 --nats-listen 127.0.0.1:14222 --log-level warn >"$D/out" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true; rm -rf "$D"' EXIT
sleep 6
"$BIN" simulate --nats-url nats://127.0.0.1:14222 --aircraft 2000 --drones 300 --swarm 0 --batch --duration 70s >"$D/sim" 2>&1 &
SIM=$!
sleep 20 # the tracks are established
T0=$(awk '{print $14+$15}' /proc/$PID/stat)
sleep 40
T1=$(awk '{print $14+$15}' /proc/$PID/stat)
TRACKS=$(curl -s 'localhost:18621/api/cuas/v1/tracks?limit=10000' | python3 -c "import json,sys; print(json.load(sys.stdin)['count'])")
POINTS=$(curl -s localhost:18621/metrics | grep -E '^cuasd_history_points_total' | tr '\n' ' ' || true)
echo "history=$H cpu_40s=$(( (T1 - T0) ))0ms tracks=$TRACKS $POINTS"
wait $SIM || true
