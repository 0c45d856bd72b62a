#!/usr/bin/env bash
# Checks the systemd units of docs/deploy.md: `systemd-analyze verify` (Debian's systemd package) on both,
# where any output is a failure (it reports unknown keys and bad values as warnings and still exits 0),
# and the guide's copy of rmm.service against the file, so the two cannot drift apart.
set -euo pipefail
cd "$(dirname "$0")"
command -v systemd-analyze >/dev/null || { echo "systemd-analyze not found: install Debian's systemd package" >&2; exit 1; }
if ! out=$(systemd-analyze verify --man=no ./rmm.service ./rmm-callstatus.service 2>&1) || [ -n "$out" ]; then
  echo "systemd-analyze verify: $out" >&2
  exit 1
fi
# The ```ini block that follows the line naming deploy/systemd/rmm.service in the guide.
shown=$(awk '/^`deploy\/systemd\/rmm.service`:$/ {found=1; next} found && /^```ini$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' ../../docs/deploy.md)
if [ "$shown" != "$(cat rmm.service)" ]; then
  echo "docs/deploy.md shows a different rmm.service than deploy/systemd/rmm.service:" >&2
  diff <(echo "$shown") rmm.service >&2 || true
  exit 1
fi
echo "systemd units verified: rmm.service, rmm-callstatus.service (systemd-analyze $(systemd-analyze --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p')); docs/deploy.md shows rmm.service as it is"
