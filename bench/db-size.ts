/**
 * The database's bytes per entry after a first sync of `--entries` coworkers (default 20,000) from
 * the simulated upstream: the file as the sync left it (WAL folded in), then VACUUMed, whole and
 * each table and index from `dbstat`. The goal is on the file as the sync left it.
 * `--keep FILE` leaves the database there, to query it further.
 *
 *   npx tsx bench/db-size.ts [--entries 20000] [--keep FILE]
 */
import { copyFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { checkGoal, machineLine } from './lib/report.js';
import { withTempDir } from './lib/temp-dir.js';
import { firstSync } from './lib/first-sync.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '20000' },
    keep: { type: 'string' },
  },
});
const entries = Number(values.entries);
if (!Number.isInteger(entries) || entries < 1) throw new Error(`--entries must be a positive integer`);

/** Bytes per entry of each table and index, largest first, and of the whole file. */
function report(file: string): void {
  const synced = statSync(file).size / entries;
  console.log(`db-size file as the sync left it: ${synced.toFixed(1)} B per entry`);
  const db = new Database(file);
  try {
    db.exec('vacuum');
    db.pragma('wal_checkpoint(TRUNCATE)');
    const parts = db
      .prepare('select name, sum(pgsize) as bytes from dbstat group by name order by bytes desc')
      .all() as { name: string; bytes: number }[];
    for (const { name, bytes } of parts) {
      if (bytes / entries < 0.5) continue;
      console.log(`db-size ${name}: ${(bytes / entries).toFixed(1)} B per entry`);
    }
    const [body] = db.prepare('select avg(length(body)) from versions').raw().all() as [number][];
    console.log(`db-size versions.body averages ${Number(body?.[0] ?? 0).toFixed(1)} B`);
  } finally {
    db.close();
  }
  const vacuumed = statSync(file).size / entries;
  console.log(`db-size file VACUUMed: ${vacuumed.toFixed(1)} B per entry`);
  const goal = checkGoal(
    'db-size',
    'database bytes per entry after a first sync',
    Number(synced.toFixed(1)),
    600,
    ' B',
  );
  console.log(
    `db-size after a first sync of ${entries.toLocaleString('en-US')}: ${synced.toFixed(1)} B per entry ${goal}`,
  );
}

console.log(machineLine());
await withTempDir(async (dir) => {
  const file = join(dir, 'mirror.db');
  await firstSync(file, entries, 11);
  report(file);
  if (values.keep) copyFileSync(file, values.keep);
});
