#!/usr/bin/env bash
# Transpiles src/ to dist/ with esbuild in well under a second; type checking stays tsc's job
# (npm run typecheck), so a start never waits ~20 s for a full compile.
# --if-stale: do nothing when dist/ is newer than every file under src/ (npm start on an installed clone).
set -euo pipefail
cd "$(dirname "$0")/.."
stamp=dist/.build-stamp
if [ "${1:-}" = "--if-stale" ] && [ -f "$stamp" ] \
  && [ -z "$(find src package.json -newer "$stamp" -print -quit)" ]; then
  exit 0
fi
rm -rf dist
mapfile -t sources < <(find src \( -name '*.ts' -o -name '*.tsx' \) -not -name '*.d.ts' | sort)
# The pages are JSX rendered on the server by preact (tsconfig.json says the same to tsc).
node_modules/.bin/esbuild "${sources[@]}" --outdir=dist --outbase=src --platform=node --format=esm \
  --target=node20 --jsx=automatic --jsx-import-source=preact --sourcemap --log-level=warning
touch "$stamp"
