#!/usr/bin/env bash
# Fails when the drizzle schema and the committed migrations disagree: drizzle-kit would generate a
# new migration. Leaves the tree as it found it.
set -euo pipefail
cd "$(dirname "$0")/.."
npx drizzle-kit check >/dev/null
before=$(ls migrations)
out=$(npx drizzle-kit generate --name schema_check 2>&1 || true)
after=$(ls migrations)
if [ "$before" != "$after" ]; then
  git checkout -- migrations 2>/dev/null || true
  git clean -fdq -- migrations 2>/dev/null || true
  echo "db:check: src/db/schema.ts changed without a migration. Run: npx drizzle-kit generate --name <what_changed>" >&2
  echo "$out" >&2
  exit 1
fi
echo "db:check: migrations are up to date"
