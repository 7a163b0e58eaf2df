import { existsSync, readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { generateCoworkers } from '../../src/simulated-upstream/generate.js';
import { cliDatabases, STORE_KINDS } from '../helpers/postgres.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';

// `coworker-mirror prune`, the built CLI in a process of its own as a user runs it, after two
// `sync`s in which one coworker left: her rows go, everyone else's stay, and on SQLite her name is
// in no byte of the database file or its WAL.

const NAME = 'Philippa Wolkenstein-Ardmore';

/** Everything stored, by table, as the command's database holds it. */
const TABLES = ['coworkers', 'versions', 'listing_positions', 'changes'];

describe.each(STORE_KINDS)('prune, the command, on %s', (kind) => {
  const database = cliDatabases(kind);
  beforeAll(() => ensureBuilt());

  it('forgets the coworker who left, says what it deleted, and keeps everyone else', async () => {
    const entries = generateCoworkers(3, 12, { dupRate: 0 }).map((entry, i) =>
      i === 4 ? { ...entry, name: NAME } : entry,
    );
    const leaving = String(entries[4]?.uuid);
    const upstream = await simulatedUpstream({ entries });
    const db = await database();
    const env = { ...db.env, UPSTREAM_URL: upstream.url, LOG_LEVEL: 'warn' };
    expect(await runCli(['sync'], env).exited).toEqual({ code: EXIT.ok, signal: null });
    upstream.data.setEntries(entries.filter((_, i) => i !== 4));
    expect(await runCli(['sync'], env).exited).toEqual({ code: EXIT.ok, signal: null });
    const before = await tables((sql) => db.rows(sql));
    if (kind === 'sqlite') expect(fileText(db.arg)).toContain(NAME);

    const usage = runCli(['prune'], env);
    expect(await usage.exited).toEqual({ code: EXIT.usage, signal: null });
    expect(usage.output()).toContain('give --removed-before <duration>, --older-than <duration>, or both');

    // Another connection stays open through the prune, as a server's does: the WAL then outlives the
    // command (the last connection to close deletes it), and what the prune left in it can be read.
    const watcher = kind === 'sqlite' ? new Database(db.arg) : null;
    onTestFinished(() => {
      watcher?.close();
    });
    watcher?.prepare('select count(*) from runs').get();

    const prune = runCli(['prune', '--removed-before', '0s', '--json'], env);
    expect(await prune.exited).toEqual({ code: EXIT.ok, signal: null });
    const report = JSON.parse(prune.output()) as Record<string, unknown>;
    const [removedAt] = await db.rows(
      "select finished_at from runs where status = 'succeeded' order by id desc limit 1",
    );
    expect({ ...report, removed_before: typeof report.removed_before }).toStrictEqual({
      removed_before: 'string',
      older_than: null,
      deleted: {
        coworkers: 1,
        versions: 1,
        listing_positions: 1,
        changes: 2,
        media_versions: 0,
        media_urls: 0,
        media_files: 0,
        messages: 0,
        deliveries: 0,
        attempts: 0,
      },
      media_files_in_folder: { deleted: 0, kept: 0 },
      media_folder_problem: null,
      pending_messages: 0,
      pruned_before: { removed: removedAt?.finished_at, history: null },
      scrubbed: true,
      scrub_problem: null,
    });

    const after = await tables((sql) => db.rows(sql));
    const herVersions = new Set(before.versions?.filter((v) => v.uuid === leaving).map((v) => v.id));
    expect(after).toStrictEqual({
      coworkers: before.coworkers?.filter((c) => c.uuid !== leaving),
      versions: before.versions?.filter((v) => v.uuid !== leaving),
      listing_positions: before.listing_positions?.filter((p) => !herVersions.has(p.version_id)),
      changes: before.changes?.filter((c) => c.uuid !== leaving),
    });
    expect(after.coworkers).toHaveLength(11);
    if (kind === 'sqlite') {
      expect(existsSync(`${db.arg}-wal`)).toBe(true);
      const text = fileText(db.arg);
      expect(text).not.toContain(NAME);
      expect(text).not.toContain(leaving);
    }

    const again = runCli(['prune', '--removed-before', '0s'], env);
    expect(await again.exited).toEqual({ code: EXIT.ok, signal: null });
    expect(again.output()).toBe(
      `Nothing to prune (coworkers removed by ${again.output().match(/by (\S+)\)/)?.[1] ?? '?'}).\n` +
        `Coworkers removed by ${String(removedAt?.finished_at)} were pruned.\n`,
    );
  });
});

async function tables(
  rows: (sql: string) => Promise<Record<string, unknown>[]>,
): Promise<Record<string, Record<string, unknown>[]>> {
  const out: Record<string, Record<string, unknown>[]> = {};
  for (const table of TABLES) {
    out[table] = await rows(`select * from ${table} order by ${table === 'coworkers' ? 'uuid' : 'id'}`);
  }
  return out;
}

/** The SQLite file and its WAL as text, one char per byte. */
function fileText(path: string): string {
  return [path, `${path}-wal`]
    .filter((f) => existsSync(f))
    .map((f) => readFileSync(f).toString('latin1'))
    .join('');
}
