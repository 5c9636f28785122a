#!/usr/bin/env bash
# The tar1090 check of issue 21 (docs/READSB.md): tar1090's html/ served by
# a plain static server, its data/ written by `cuasd serve --demo
# --json-dir`, opened in headless Chromium through chromedriver; passes when
# the page lists aircraft and drones (hex "~...").
#
#   scripts/tar1090-check.sh /path/to/tar1090/html   # a copy: data/ is written into it
#
# Needs: a built cuasd on PATH (or CUASD=...), /usr/bin/chromium,
# chromedriver, /usr/bin/python3. Ports 18080, 18504 and 19515 must be free.
set -euo pipefail
html=${1:?usage: $0 TAR1090_HTML_DIR}
cuasd=${CUASD:-cuasd}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
"$cuasd" serve --demo --data-dir "$work/data" --http-addr 127.0.0.1:18080 --nats-listen off \
  --json-dir "$html/data" --log-level warn >"$work/cuasd.log" 2>&1 &
pids+=($!)
/usr/bin/python3 -m http.server 18504 --bind 127.0.0.1 --directory "$html" >"$work/http.log" 2>&1 &
pids+=($!)
chromedriver --port=19515 >"$work/chromedriver.log" 2>&1 &
pids+=($!)
sleep 5
/usr/bin/python3 - <<'PY'
import json, sys, time, urllib.request
B = 'http://127.0.0.1:19515'
def req(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    r = urllib.request.Request(B + path, data=data, method=method, headers={'Content-Type': 'application/json'})
    return json.load(urllib.request.urlopen(r, timeout=60))['value']
opts = {'binary': '/usr/bin/chromium', 'args': ['--headless=new', '--no-sandbox', '--disable-gpu']}
sid = req('POST', '/session', {'capabilities': {'alwaysMatch': {'browserName': 'chrome', 'goog:chromeOptions': opts}}})['sessionId']
try:
    req('POST', f'/session/{sid}/url', {'url': 'http://127.0.0.1:18504/'})
    time.sleep(12)
    v = req('POST', f'/session/{sid}/execute/sync', {'args': [], 'script':
        'return g.planesOrdered.map(p => [p.icao, p.flight || "", p.position ? 1 : 0]);'})
finally:
    req('DELETE', f'/session/{sid}')
drones = [p for p in v if p[0].startswith('~')]
aircraft = [p for p in v if not p[0].startswith('~')]
print(f'tar1090 lists {len(aircraft)} aircraft and {len(drones)} drones; {sum(p[2] for p in v)} with positions')
for p in v:
    print('  ', *p)
sys.exit(0 if aircraft and drones else 1)
PY
