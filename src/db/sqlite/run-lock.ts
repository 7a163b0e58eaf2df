import { MirrorError } from '../../errors.js';
import type { SqliteHandle } from './handle.js';
import { prepared } from '../prepared.js';
import { RUN_OF_TICK_SQL } from '../run-records.js';
import { runRowOf } from '../run-reads.js';
import { abortDeadRuns, currentHolder, markRunActive } from '../run-holders.js';
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
  if (holder) {
    throw new MirrorError(
      'SYNC_LOCKED',
      `another sync holds the lock: run ${holder.id} (pid ${holder.holderPid} on ${holder.holderHost}, started ${holder.startedAt})`,
      { runId: holder.id, pid: holder.holderPid, host: holder.holderHost, startedAt: holder.startedAt },
    );
  }
}

/** The run that claimed tick `tick`, read inside the lock's own transaction. */
function claimOf(store: SqliteHandle, tick: string): RunRow | undefined {
  const found = prepared(store.sqlite, RUN_OF_TICK_SQL).raw(true).get(tick) as unknown[] | undefined;
  return found && runRowOf(found);
}
