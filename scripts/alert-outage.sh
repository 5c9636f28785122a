#!/bin/bash
# A webhook receiver down for a long time (issue 19): runs `cuasd serve --demo`
# with two alert rules whose webhook points at a port nothing listens on, keeps
# it down for MINUTES (default 60), then starts a receiver that checks every
# signature, and reports what waited meanwhile (pending alerts, memory, the
# JetStream directory) and how long the backlog took to arrive.
# Usage: scripts/alert-outage.sh [MINUTES]   (BIN=bin/cuasd; loopback ports
# 18631 HTTP, 14232 NATS and 18632 the receiver must be free).
set -euo pipefail
BIN=${BIN:-bin/cuasd}
MIN=${1:-60}
HTTP=127.0.0.1:18631
RPORT=18632
D=$(mktemp -d)
trap 'kill $PID $RPID 2>/dev/null || true; wait 2>/dev/null || true; echo "files kept in $D"' EXIT
RPID=

head -c 32 /dev/urandom | xxd -p -c 64 >"$D/hook.secret"
cat >"$D/alerts.yaml" <<EOF
sinks:
  - name: hook
    webhook: http://127.0.0.1:$RPORT/hook
    secret_file: $D/hook.secret
rules:
  - name: demo-breach
    zones: [demo-site]
    min_decision: alert
    cooldown: 60s
    sinks: [hook]
  - name: anything-notable
    min_decision: monitor
    cooldown: 10s
    sinks: [hook]
EOF

metric() { # metric NAME_REGEX: the sum of the matching samples
	curl -s "$HTTP/metrics" | awk -v re="^$1" '$0 ~ re {s += $NF} END {printf "%d", s}'
}
sample() {
	printf '%s pending=%s states=%s retries=%s delivered=%s failed=%s rss_kb=%s js_kb=%s\n' \
		"$(date -u +%H:%M:%S)" "$(metric 'cuasd_alert_pending')" "$(metric 'cuasd_alerts_total')" \
		"$(metric 'cuasd_alert_deliveries_total.*result="retry"')" \
		"$(metric 'cuasd_alert_deliveries_total.*result="delivered"')" \
		"$(metric 'cuasd_alert_deliveries_total.*result="failed"')" \
		"$(awk '/VmRSS/ {print $2}' /proc/$PID/status)" "$(du -sk "$D/data/jetstream" | cut -f1)"
}

"$BIN" serve --demo --alerts "$D/alerts.yaml" --data-dir "$D/data" --http-addr $HTTP \
	--nats-listen 127.0.0.1:14232 --log-level warn >"$D/serve.log" 2>&1 &
PID=$!
until grep -q "cuasd serving" "$D/serve.log"; do sleep 1; done
echo "receiver down for $MIN minutes (files in $D)"
END=$(($(date +%s) + MIN * 60))
while [ "$(date +%s)" -lt "$END" ]; do
	sample
	sleep 60
done
sample

# The receiver: answers 200, checks X-Cuas-Signature over the exact body, logs one line per POST.
python3 - "$RPORT" "$D/hook.secret" >"$D/received" 2>"$D/receiver.log" <<'EOF' &
import hashlib, hmac, http.server, json, sys, time
port, secret = int(sys.argv[1]), open(sys.argv[2], "rb").read().strip()
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        want = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
        ok = hmac.compare_digest(want, self.headers.get("X-Cuas-Signature", ""))
        a = json.loads(body)
        print(json.dumps({"t": time.time(), "id": a["id"], "seq": a["seq"], "state": a["state"],
                          "sig_ok": ok, "opened_at": a["opened_at"]}), flush=True)
        self.send_response(200); self.end_headers()
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
EOF
RPID=$!
UP=$(date +%s)
echo "receiver up at $(date -u +%H:%M:%S)"
while :; do
	sleep 5
	P=$(metric 'cuasd_alert_pending')
	if [ "$P" = 0 ]; then break; fi
	if [ $(($(date +%s) - UP)) -gt 1200 ]; then echo "backlog not drained in 20 minutes"; break; fi
done
DRAIN=$(($(date +%s) - UP))
sleep 10
sample
python3 - "$D/received" "$UP" "$DRAIN" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
up, drain = float(sys.argv[2]), int(sys.argv[3])
keys = [(r["id"], r["seq"]) for r in rows]
print(f"drained in {drain} s after the receiver came up: {len(rows)} POSTs, "
      f"{len(set(keys))} distinct alert states, {len(keys) - len(set(keys))} repeated, "
      f"{sum(not r['sig_ok'] for r in rows)} bad signatures")
EOF
