import type { RunStart } from '../store.js';
import type { SqliteHandle } from './handle.js';
import { prepared } from '../prepared.js';
import {
  ABORT_RUN_SQL,
  INSERT_RUNNING_SQL,
  RUN_OF_TICK_SQL,
  RUNNING_RUNS_SQL,
  runningParams,
  syncLockedError,
} from '../run-records.js';
import { runRowOf } from '../run-reads.js';
import { currentHolder, deadHolderMessage, holderIsDead, markRunActive } from '../run-liveness.js';
import type { RunRow } from '../schema.js';
import { tickServedError } from '../tick-claims.js';

/**
 * Takes the cross-process lock by inserting a `running` run (a partial unique index allows one),
 * after marking runs whose holder died as aborted, in one write transaction. Throws TICK_SERVED
 * when a run already claimed the tick `start` names (first: the run serving it may hold the lock
 * still), else SYNC_LOCKED naming the run that holds the lock.
 */
export function beginRun(store: SqliteHandle, upstream: string, start: RunStart, now: Date): RunRow {
  const self = currentHolder();
  const startedAt = now.toISOString();
  return store.sqlite
    .transaction(() => {
      // Inside the write transaction nobody can claim the tick between this read and the insert;
      // runs_scheduled_for_idx holds the rule whatever the code above it does.
      const tick = start.scheduledFor;
      const served = tick === null ? undefined : prepared(store.sqlite, RUN_OF_TICK_SQL).raw(true).get(tick);
      if (tick !== null && served) throw tickServedError(tick, runRowOf(served as unknown[]));
      assertUnlocked(store, now);
      const insert = prepared(store.sqlite, INSERT_RUNNING_SQL).raw(true);
      const run = runRowOf(insert.get(...runningParams(self, upstream, start, startedAt)) as unknown[]);
      markRunActive(store, run.id);
      return run;
    })
    .immediate();
}

/**
 * Throws SYNC_LOCKED naming the live run that holds the lock, after marking runs whose holder died
 * as aborted. Call inside a write transaction: while it lasts, no sync can take the lock.
 */
export function assertUnlocked(store: SqliteHandle, now: Date): void {
  const { holder } = abortDeadRuns(store, now);
  if (holder) throw syncLockedError(holder);
}

/**
 * Marks runs left `running` by a dead holder as aborted: how many, and the live holder's run, if
 * any. Call inside a write transaction (the lock's own), so two processes cannot both take over.
 */
function abortDeadRuns(store: SqliteHandle, now = new Date()): { aborted: number; holder?: RunRow } {
  const running = runningRuns(store);
  const dead = running.filter((run) => holderIsDead(store, run, now.getTime()));
  const abort = prepared(store.sqlite, ABORT_RUN_SQL);
  for (const run of dead) abort.run(now.toISOString(), deadHolderMessage(run), run.id);
  return { aborted: dead.length, holder: running.findLast((run) => !dead.includes(run)) };
}

function runningRuns(store: SqliteHandle): RunRow[] {
  return (prepared(store.sqlite, RUNNING_RUNS_SQL).raw(true).all() as unknown[][]).map(runRowOf);
}

/**
 * Marks runs whose holder is dead as aborted; returns how many. It reads first (in WAL a read never
 * waits) and takes the write lock only when a dead holder is found: a server polling this while a
 * live sync commits must not block its event loop on that sync's write transaction.
 */
export function recoverDeadRuns(store: SqliteHandle): number {
  // The server calls this every SNAPSHOT_POLL: the prepared read of running runs finds none, as
  // almost always, without building a query on the event loop.
  if (!runningRuns(store).some((run) => holderIsDead(store, run))) return 0;
  return store.sqlite.transaction(() => abortDeadRuns(store).aborted).immediate();
}
