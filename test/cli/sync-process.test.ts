import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { generateCoworkers } from '../../src/simulated-upstream/generate.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { ensureBuilt, eventually, processGone, processOf, runCli } from '../helpers/process.js';
import { cliDatabases, STORE_KINDS } from '../helpers/postgres.js';

// A bare `sync` runs in a sync process whose heap is SYNC_MAX_HEAP_MB (src/sync/isolated-sync.ts),
// as each sync of `start` does: the built CLI, started as users start it (no node flags).

const MIB = 1024 * 1024;
const PAGES = 200;
const entries = generateCoworkers(7, PAGES * 8);

/**
 * A real upstream of PAGES pages. With `unknownFields`, each entry also carries 1,000 field names
 * of its own: the crawl keeps every distinct unknown name (to report them), 1,600,000 names in all,
 * far past a 64 MiB heap, while the listing stays within its 32 MiB cap.
 */
async function upstream(options: { unknownFields: () => boolean; hold?: () => void }): Promise<string> {
  const server = createServer((request, response) => {
    if (!request.url?.startsWith(LIST_PATH)) return void response.writeHead(404).end();
    if (options.hold) return options.hold();
    const page = Number(new URL(request.url, 'http://x').searchParams.get('page') ?? '1');
    response
      .writeHead(200, { 'Content-Type': 'application/json' })
      .end(pageBody(page, options.unknownFields()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const pageBody = (page: number, unknown: boolean): string => {
    const results = entries.slice((page - 1) * 8, page * 8).map((entry, i) => {
      const own = Array.from({ length: 1000 }, (_, k) => `"f${page}_${i}_${k}":0`).join(',');
      return unknown ? `{${JSON.stringify(entry).slice(1, -1)},${own}}` : JSON.stringify(entry);
    });
    const list = `${base}${LIST_PATH}`;
    const next = page < PAGES ? JSON.stringify(`${list}?page=${page + 1}`) : 'null';
    const previous = page === 1 ? 'null' : JSON.stringify(page === 2 ? list : `${list}?page=${page - 1}`);
    return `{"count":${PAGES * 8},"next":${next},"previous":${previous},"results":[${results.join(',')}]}`;
  };
  return base;
}

const RUNS = 'select id, status, error_code, error_message from runs order by id';

describe.each(STORE_KINDS)('on %s: a bare sync runs within SYNC_MAX_HEAP_MB', (kind) => {
  const database = cliDatabases(kind);
  beforeAll(() => ensureBuilt());

  it('past the heap the run fails naming the setting, the process lives to record it, and the next run succeeds', async () => {
    let unknownFields = true;
    const url = await upstream({ unknownFields: () => unknownFields });
    const db = await database();
    const env = {
      ...db.env,
      UPSTREAM_URL: url,
      SYNC_MAX_HEAP_MB: '64',
      SYNC_MAX_LISTING_BYTES: String(32 * MIB),
      SYNC_MAX_ENTRIES: '60000',
      LOG_LEVEL: 'warn',
    };
    const failed = runCli(['sync'], env);
    expect(await failed.exited).toEqual({ code: EXIT.unexpected, signal: null });
    expect(failed.output()).toContain(
      'coworker-mirror: sync failed (run 1) [SYNC_CRASHED]: the sync process (signal SIGABRT) ran out of its 64 MiB heap (SYNC_MAX_HEAP_MB)',
    );
    // The line says it once; V8's own report of its death is not for the person or the cron mail.
    expect(failed.output()).not.toContain('FATAL ERROR');
    const runs = await db.rows(RUNS);
    expect(runs).toEqual([expect.objectContaining({ id: 1, status: 'failed', error_code: 'SYNC_CRASHED' })]);
    expect(runs[0]?.error_message).toMatch(/raise SYNC_MAX_HEAP_MB or lower SYNC_MAX_LISTING_BYTES/);

    unknownFields = false;
    const next = runCli(['sync'], env);
    expect(await next.exited).toEqual({ code: EXIT.ok, signal: null });
    expect(next.output()).toMatch(/run 2 succeeded: 1600 entries on 200 pages; 1600 added/);
  });

  /** A bare `sync` whose page 1 never answers: it is mid-crawl when this resolves. */
  async function syncMidCrawl() {
    let held: (() => void) | undefined;
    const requested = new Promise<void>((resolve) => (held = resolve));
    const url = await upstream({ unknownFields: () => false, hold: () => held?.() });
    const db = await database();
    const run = runCli(['sync'], { ...db.env, UPSTREAM_URL: url, LOG_LEVEL: 'warn' });
    await requested;
    return { db, run };
  }

  it('SIGTERM reaches the run in its process: it ends as aborted', async () => {
    const { db, run } = await syncMidCrawl();
    run.child.kill('SIGTERM');
    expect(await run.exited).toEqual({ code: EXIT.aborted, signal: null });
    expect(await db.rows(RUNS)).toEqual([expect.objectContaining({ id: 1, status: 'aborted' })]);
  });

  it('the run is held by its sync process, a child of the command with the heap limit; a SIGKILL of the command ends the run as aborted with the reason', async () => {
    const { db, run } = await syncMidCrawl();
    const [holder] = await db.rows('select holder_pid from runs where id = 1');
    const holderPid = Number(holder?.holder_pid);
    const sync = processOf(holderPid);
    expect(sync.parent).toBe(run.child.pid);
    expect(sync.args).toContain('--max-old-space-size=512');
    expect(sync.args).toContain('--sync-process');

    run.child.kill('SIGKILL');
    expect(await run.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await eventually(() => processGone(holderPid) || undefined, undefined, 'the sync process gone');
    const runs = await db.rows(RUNS);
    expect(runs).toEqual([expect.objectContaining({ id: 1, status: 'aborted', error_code: 'RUN_ABORTED' })]);
    expect(runs[0]?.error_message).toMatch(/the process that started the sync is gone/);
  });
});
