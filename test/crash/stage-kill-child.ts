/**
 * One streaming sync in its own process that SIGKILLs ITSELF at a named instant, so a kill lands
 * exactly there whatever the machine's speed: `node --import tsx test/crash/stage-kill-child.ts
 * <sqlite file | postgres url> <upstream url> <point> <n>`, where point is
 * - `append`: inside the n-th staging batch (pages still arriving), before it is written;
 * - `record`: before the diff's n-th chunk of uuid groups is recorded;
 * - `commit`: inside the run's commit, its statements run, before COMMIT;
 * - `done`: after the sync returned (the new state is committed).
 * Prints `{"marker":"kill","point":...}` just before the kill, `{"marker":"done"}` or
 * `{"marker":"error",...}` (exit 9) when it got through.
 */
import { writeSync } from 'node:fs';
import pg from 'pg';
import { parsePostgresUrl } from '../../src/config/database-url.js';
import { openDatabase } from '../../src/db/open.js';
import { openPgStore } from '../../src/db/postgres/store.js';
import type { RunStage } from '../../src/db/run-commit.js';
import type { Store } from '../../src/db/store.js';
import { toMirrorError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';

const mark = (marker: string, fields: Record<string, unknown> = {}): void => {
  writeSync(1, `${JSON.stringify({ marker, ...fields })}\n`);
};
const die = (point: string): never => {
  mark('kill', { point });
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: killed');
};

const [target = '', upstreamUrl = '', point = 'done', nText = '1'] = process.argv.slice(2);
const n = Number(nText);
const postgres = target.startsWith('postgres');

async function open(): Promise<Store & { close: () => unknown }> {
  if (!postgres) return openDatabase(target);
  const parsed = parsePostgresUrl(target);
  if (!parsed.ok) throw new Error(parsed.problem);
  return openPgStore(parsed.value, { instanceId: `stage-kill/${process.pid}` });
}

/** Kills inside the commit, after its statements, before COMMIT reaches the database. */
function killBeforeCommit(store: Store): void {
  if (postgres) {
    // eslint-disable-next-line @typescript-eslint/unbound-method -- re-applied below with its own `this`
    const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      if (committing && args[0] === 'commit') die('commit');
      return query.apply(this, args);
    } as typeof pg.Client.prototype.query;
    return;
  }
  const { sqlite } = store as unknown as { sqlite: { exec: (sql: string) => unknown } };
  const exec = sqlite.exec.bind(sqlite);
  // The commit is the one transaction a run ends once its stage is filled.
  sqlite.exec = (sql: string) => (committing && sql === 'commit' ? die('commit') : exec(sql));
}

let committing = false;
function hookStage(store: Store): void {
  const openStage = store.openStage.bind(store);
  store.openStage = async (runId) => {
    const stage: RunStage = await openStage(runId);
    let appends = 0;
    let records = 0;
    const { append, record, commit } = {
      append: stage.append.bind(stage),
      record: stage.record.bind(stage),
      commit: stage.commit.bind(stage),
    };
    stage.append = (entries) => (point === 'append' && ++appends === n ? die('append') : append(entries));
    stage.record = (outcome) => (point === 'record' && ++records === n ? die('record') : record(outcome));
    stage.commit = (input) => {
      committing = point === 'commit';
      return commit(input);
    };
    return stage;
  };
}

const store = await open();
hookStage(store);
if (point === 'commit') killBeforeCommit(store);
try {
  const summary = await runSync(syncConfig(upstreamUrl, { SYNC_CONCURRENCY: '1' }), {
    store,
    logger: silentLogger(),
  });
  if (point === 'done') die('done');
  mark('done', { runId: summary.runId });
  await store.close();
} catch (error) {
  const failure = toMirrorError(error);
  mark('error', { code: failure.code, message: failure.message });
  await store.close();
  process.exit(9);
}
