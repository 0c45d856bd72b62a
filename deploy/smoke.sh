#!/usr/bin/env bash
# The production smoke test: what the Docker image runs, reproduced without Docker, and used as a
# person would. CI runs it after `npm run build`; anyone can run it from a checkout:
#   deploy/smoke.sh                 (SMOKE_KEEP=1 keeps the folder and the logs)
# 1. builds whatever is out of date (scripts/build.mjs), then makes a production folder with the
#    image's own recipe (deploy/production-tree.sh: dist/ and `npm ci --omit=dev --ignore-scripts`);
# 2. starts the server with the Dockerfile's CMD and ENV, as `nobody` when run as root (the image runs
#    as an unprivileged user too), and checks /readyz, the console, sign-in, a web-terminal echo, the
#    reference agent from dist/ (register, heartbeat, exec), the call-status service (a call start
#    that switches a WLED light), a clean stop, and a start without the PTY library's binary (503 for
#    the terminal only): deploy/smoke/smoke.mjs;
# 3. verifies the systemd units of docs/deploy.md (deploy/systemd/verify.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

node scripts/build.mjs --if-stale
work=$(mktemp -d "${TMPDIR:-/tmp}/rmm-smoke.XXXXXX")
# The unprivileged user must be able to read the production folder.
chmod 755 "$work"
if [ "${SMOKE_KEEP:-}" = 1 ]; then
  echo "keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi

echo "== production folder (deploy/production-tree.sh): $work/app"
deploy/production-tree.sh . "$work/app"

echo "== production smoke test"
node deploy/smoke/smoke.mjs "$work/app" "$work"

echo "== systemd units"
deploy/systemd/verify.sh
