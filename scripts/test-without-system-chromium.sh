#!/usr/bin/env bash
# Runs the browser suites (or the jest paths given as arguments) as on a machine
# with only Node: Debian's /usr/bin/chromium is hidden behind /dev/null in a
# bubblewrap mount namespace, so the node and the tests must find the Chromium
# of the @sparticuz/chromium package instead (issue 14, item 5).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then set -- test/tools/navigator test/security/hostOrigin.test.ts; fi
# The packaged Chromium is an optional package (docs/install.md), not installed by npm install: add it for this run.
if ! node -e "require.resolve('@sparticuz/chromium')" 2>/dev/null; then
  npm install --no-save --no-audit --no-fund @sparticuz/chromium@147.0.0
fi
run=(env -u LANGO_TEST_CHROMIUM npx jest "$@" -w 1)
if [ -e /usr/bin/chromium ]; then
  command -v bwrap >/dev/null || { echo "bubblewrap (bwrap) is needed to hide /usr/bin/chromium" >&2; exit 2; }
  hide=(bwrap --dev-bind / / --ro-bind /dev/null /usr/bin/chromium --)
  # The view the tests get: no executable Chromium at the system path.
  "${hide[@]}" sh -c 'test ! -f /usr/bin/chromium' || { echo "could not hide /usr/bin/chromium" >&2; exit 2; }
  exec "${hide[@]}" "${run[@]}"
fi
exec "${run[@]}"
