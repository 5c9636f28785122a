#!/usr/bin/env bash
# Runs every Go fuzz target of the given packages for $FT each.
set -euo pipefail
GO=${GO:-go}
FT=${FT:-3s}
n=0
for pkg in $($GO list "$@"); do
  for t in $($GO test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true); do
    echo "fuzz $pkg $t ($FT)"
    $GO test -run '^$' -fuzz "^${t}\$" -fuzztime "$FT" "$pkg" >/tmp/fuzz.$$.log 2>&1 || { cat /tmp/fuzz.$$.log; exit 1; }
    n=$((n+1))
  done
done
rm -f /tmp/fuzz.$$.log
echo "fuzz: $n targets passed"
