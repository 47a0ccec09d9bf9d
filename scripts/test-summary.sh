#!/usr/bin/env bash
# Prints the test run's summary: tests passed, failed and ignored as cargo counted them, and the
# tests that skipped themselves (they pass in cargo's count, so they are taken out of "passed" and
# listed with their reasons). Usage: test-summary.sh CARGO_TEST_OUTPUT SKIP_LOG
set -euo pipefail
output="$1"; skips="$2"
read -r passed failed ignored < <(awk '/^test result:/ {
    for (i = 1; i <= NF; i++) {
        if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i; if ($(i+1) ~ /^ignored/) g += $i
    }
} END { print p + 0, f + 0, g + 0 }' "$output")
skipped=$(cut -f1 "$skips" 2>/dev/null | sort -u | wc -l)
echo "[test] summary: $((passed - skipped)) passed, $failed failed, $skipped skipped, $ignored ignored"
if [ "$skipped" -gt 0 ]; then
    echo "[test] skipped (reason):"
    sort -u -t$'\t' -k1,1 "$skips" | sed 's/^/[test]   /; s/\t/: /'
fi
