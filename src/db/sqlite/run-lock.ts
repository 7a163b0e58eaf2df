import type { SqliteHandle } from './handle.js';
import { prepared } from '../prepared.js';
import { ABORT_RUN_SQL, RUN_OF_TICK_SQL, RUNNING_RUNS_SQL, syncLockedError } from '../run-records.js';
import { runRowOf } from '../run-reads.js';
import { currentHolder, deadHolderMessage, holderIsDead, markRunActive } from '../run-liveness.js';
import { runs, type RunRow } from '../schema.js';
import { tickServedError, type RunStart } from '../tick-claims.js';

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
      const served = tick === null ? undefined : claimOf(store, tick);
      if (tick !== null && served) throw tickServedError(tick, served);
      assertUnlocked(store, now);
      const run = store.db
        .insert(runs)
        .values({
          status: 'running',
          startedAt,
          upstream,
          holderPid: self.pid,
          holderHost: self.host,
          holderToken: self.token,
          heartbeatAt: startedAt,
          trigger: start.trigger,
          scheduledFor: start.scheduledFor,
        })
        .returning()
        .get();
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
  const holder = abortDeadRuns(store, now);
  if (holder) throw syncLockedError(holder);
}

/** The run that claimed tick `tick`, read inside the lock's own transaction. */
function claimOf(store: SqliteHandle, tick: string): RunRow | undefined {
  const found = prepared(store.sqlite, RUN_OF_TICK_SQL).raw(true).get(tick) as unknown[] | undefined;
  return found && runRowOf(found);
}

/**
 * Marks runs left `running` by a dead holder as aborted and returns the live holder's run, if any.
 * Call inside a write transaction (the lock's own), so two processes cannot both take over.
 */
export function abortDeadRuns(store: SqliteHandle, now = new Date()): RunRow | undefined {
  let holder: RunRow | undefined;
  for (const run of runningRuns(store)) {
    if (!holderIsDead(store, run, now.getTime())) holder = run;
    else prepared(store.sqlite, ABORT_RUN_SQL).run(now.toISOString(), deadHolderMessage(run), run.id);
  }
  return holder;
}

function runningRuns(store: SqliteHandle): RunRow[] {
  return (prepared(store.sqlite, RUNNING_RUNS_SQL).raw(true).all() as unknown[][]).map(runRowOf);
}

const runningChecks = new WeakMap<SqliteHandle, () => boolean>();

function anyRunning(store: SqliteHandle): boolean {
  let check = runningChecks.get(store);
  if (!check) {
    const statement = store.sqlite.prepare("select 1 from runs where status = 'running' limit 1").pluck();
    runningChecks.set(store, (check = () => statement.get() !== undefined));
  }
  return check();
}

/**
 * Marks runs whose holder is dead as aborted; returns how many. It reads first (in WAL a read never
 * waits) and takes the write lock only when a dead holder is found: a server polling this while a
 * live sync commits must not block its event loop on that sync's write transaction.
 */
export function recoverDeadRuns(store: SqliteHandle): number {
  // The server calls this every SNAPSHOT_POLL: a prepared existence check spares it building the
  // query on the event loop, far dearer, when, as almost always, nothing runs.
  if (!anyRunning(store)) return 0;
  if (!runningRuns(store).some((run) => holderIsDead(store, run))) return 0;
  return store.sqlite
    .transaction(() => {
      const count = store.sqlite.prepare("select count(*) from runs where status = 'running'").pluck();
      const before = count.get() as number;
      abortDeadRuns(store);
      return before - (count.get() as number);
    })
    .immediate();
}
