#!/usr/bin/env bash
# Runs the test suite. The deno process has twice aborted in glibc ("corrupted size vs. prev_size in fastbins",
# exit 134) while tearing down, after printing a summary of every test passed; that abort is reported loudly and does
# not fail the run, any other failure does.
set -uo pipefail
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
DENO_JOBS=3 deno test -A --parallel tests/ 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
if [ "$code" -eq 134 ] && sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -Eq '^ok \| [0-9]+ passed \| 0 failed'; then
  echo "warning: deno aborted (exit 134) while exiting, after every test passed; counted as passed" >&2
  exit 0
fi
exit "$code"
