/**
 * Each body stored once (issue 21, section 2): the database's bytes per entry after a first sync of
 * `--entries` coworkers (default 100,000) from the simulated upstream, and the commit's time for
 * writing the `added` changes, each against the release's way in the same run.
 *
 * - Bytes: the synced database, VACUUMed, against a copy of it turned back into the release's rows
 *   (every added change holding its entry again, no reference), VACUUMed too. The copy keeps the
 *   `version_id` column, all NULL: one byte of record header per change more than the release.
 * - Time: the run's added changes written again in one committed transaction, the release's way
 *   (the entry text in `new_value`) and this way (the version's id in `version_id`, as the diff named it),
 *   alternately, `--rounds` times each; the best of each (other load only ever adds time).
 *
 * - Migration: the body_once_data statements run on a copy of the release-shaped database,
 *   in one transaction, as an upgrade runs them.
 *
 *   npx tsx bench/body-once.ts [--entries 100000] [--rounds 3]
 */
import { copyFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { knownMigrations } from '../src/db/migration-files.js';
import { checkGoal, machineLine, millis, ratio } from './lib/report.js';
import { withTempDir } from './lib/temp-dir.js';
import { firstSync } from './lib/first-sync.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
  },
});
const entries = Number(values.entries);
const rounds = Number(values.rounds);
if (!Number.isInteger(entries) || entries < 1) throw new Error(`--entries must be a positive integer`);
if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds must be a positive integer`);

/** `source` rewritten as the release stored it: each whole entry copied into its change again. */
function releaseCopy(source: string, target: string): number {
  copyFileSync(source, target);
  const db = new Database(target);
  try {
    db.exec(`update changes set new_value = (select body from versions v where v.id = changes.version_id),
                                version_id = null
              where version_id is not null and kind <> 'removed';
             update changes set old_value = (select body from versions v where v.id = changes.version_id),
                                version_id = null
              where version_id is not null and kind = 'removed';
             vacuum;`);
    return migrationTime(target);
  } finally {
    db.close();
  }
}

/** migrations/sqlite/0010_body_once_data.sql */
const BODY_ONCE_DATA = 10;

/** The body_once data migration run on a copy of `file`; milliseconds. */
function migrationTime(file: string): number {
  const copy = `${file}.migrated`;
  copyFileSync(file, copy);
  const db = new Database(copy);
  try {
    // By its number: later migrations follow it (it was the last when this bench was written).
    const migration = knownMigrations('sqlite')[BODY_ONCE_DATA];
    if (migration === undefined) throw new Error('no migrations');
    const started = performance.now();
    db.transaction(() => {
      for (const statement of migration.sql) db.exec(statement);
    }).immediate();
    const ms = performance.now() - started;
    const copies = db
      .prepare("select count(*) from changes where kind = 'added' and new_value is not null")
      .pluck()
      .get();
    if (copies !== 0) throw new Error(`the migration left ${String(copies)} copies`);
    return ms;
  } finally {
    db.close();
  }
}

function vacuumed(source: string, target: string): void {
  const db = new Database(source);
  try {
    db.prepare('vacuum into ?').run(target);
  } finally {
    db.close();
  }
}

interface AddedRow {
  runId: number;
  uuid: string;
  slot: number;
  versionId: number;
  body: string;
}

/** The added changes written again in one committed transaction; milliseconds. */
function writeAdded(db: Database.Database, rows: readonly AddedRow[], way: 'release' | 'reference'): number {
  db.exec('delete from changes');
  const started = performance.now();
  db.transaction(() => {
    if (way === 'release') {
      const insert = db.prepare(
        `insert into changes (run_id, uuid, slot, kind, field, old_value, new_value)
         values (?, ?, ?, 'added', null, null, ?)`,
      );
      for (const r of rows) insert.run(r.runId, r.uuid, r.slot, r.body);
      return;
    }
    // As the stage's commit does: the diff named the version each change refers to.
    const insert = db.prepare(
      `insert into changes (run_id, uuid, slot, kind, field, old_value, new_value, version_id)
       values (?, ?, ?, 'added', null, null, null, ?)`,
    );
    for (const r of rows) insert.run(r.runId, r.uuid, r.slot, r.versionId);
  }).immediate();
  return performance.now() - started;
}

function commitTimes(file: string): { release: number; reference: number } {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    const rows = db
      .prepare(
        `select c.run_id as runId, c.uuid, c.slot, v.id as versionId, v.body
           from changes c join versions v on v.id = c.version_id where c.kind = 'added' order by c.id`,
      )
      .all() as AddedRow[];
    const best = { release: Infinity, reference: Infinity };
    for (let round = 0; round < rounds; round++) {
      best.release = Math.min(best.release, writeAdded(db, rows, 'release'));
      best.reference = Math.min(best.reference, writeAdded(db, rows, 'reference'));
    }
    return best;
  } finally {
    db.close();
  }
}

console.log(machineLine());
console.log(`first sync of ${entries.toLocaleString('en-US')} entries from the simulated upstream`);
await withTempDir(async (dir) => {
  const synced = join(dir, 'synced.db');
  await firstSync(synced, entries, 21);
  const after = join(dir, 'after.db');
  vacuumed(synced, after);
  const before = join(dir, 'before.db');
  const migrationMs = releaseCopy(after, before);
  const perEntry = (file: string) => statSync(file).size / entries;
  const [was, now] = [perEntry(before), perEntry(after)];
  console.log(
    `database bytes per entry, release's rows (each added change holds its entry): ${was.toFixed(0)} B`,
  );
  console.log(
    `database bytes per entry, each body once:                                   ${now.toFixed(0)} B`,
  );
  console.log(
    `  ratio once / release: ${ratio(now / was)} ${checkGoal('body-once', 'db bytes per entry after a first sync', Math.round(now), 600, ' B')}`,
  );
  console.log(`migration body_once_data on the release's rows: ${millis(migrationMs)}`);
  const times = commitTimes(after);
  console.log(
    `commit time of the ${entries.toLocaleString('en-US')} added changes, release's way: ${millis(times.release)}`,
  );
  console.log(
    `commit time of the ${entries.toLocaleString('en-US')} added changes, by reference:  ${millis(times.reference)}`,
  );
  console.log(`  ratio reference / release: ${ratio(times.reference / times.release)}`);
});
