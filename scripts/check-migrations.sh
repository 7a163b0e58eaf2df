#!/usr/bin/env bash
# Fails when a drizzle schema and its committed migrations disagree: drizzle-kit would generate a
# new migration. Checks each dialect (SQLite, PostgreSQL) and leaves the tree as it found it.
set -euo pipefail
cd "$(dirname "$0")/.."

check() {
  local dialect=$1 schema=$2 config=$3 folder="migrations/$1"
  npx drizzle-kit check --config "$config" >/dev/null
  local before after out
  before=$(ls -R "$folder")
  out=$(npx drizzle-kit generate --config "$config" --name schema_check 2>&1 || true)
  after=$(ls -R "$folder")
  if [ "$before" != "$after" ]; then
    git checkout -- "$folder" 2>/dev/null || true
    git clean -fdq -- "$folder" 2>/dev/null || true
    echo "db:check: $schema changed without a $dialect migration. Run: npx drizzle-kit generate --config $config --name <what_changed>" >&2
    echo "$out" >&2
    return 1
  fi
  echo "db:check: $dialect migrations are up to date"
}

status=0
check sqlite src/db/schema.ts drizzle.config.ts || status=1
check postgres src/db/postgres/schema.ts drizzle.postgres.config.ts || status=1
exit $status
