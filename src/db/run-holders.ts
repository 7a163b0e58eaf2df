import { eq } from 'drizzle-orm';
import type { SqliteHandle } from './sqlite/handle.js';
import { runs, type RunRow } from './schema.js';
import { deadHolderMessage, holderIsDead } from './run-liveness.js';

// Whether a run's holder lives is decided without the ORM (run-liveness.ts), so a read command that
// only lists runs need not load it; what is written when a holder died lives here.
export {
  currentHolder,
  HEARTBEAT_MS,
  LEASE_MS,
  markRunActive,
  markRunInactive,
  runAsSeen,
  type RunHolder,
} from './run-liveness.js';

/**
 * Marks runs left `running` by a dead holder as aborted and returns the live holder's run, if any.
 * Call inside a write transaction (the lock's own), so two processes cannot both take over.
 */
export function abortDeadRuns(store: SqliteHandle, now = new Date()): RunRow | undefined {
  const running = store.db.select().from(runs).where(eq(runs.status, 'running')).all();
  let holder: RunRow | undefined;
  for (const run of running) {
    if (!holderIsDead(store, run, now.getTime())) {
      holder = run;
      continue;
    }
    store.db
      .update(runs)
      .set({
        status: 'aborted',
        finishedAt: now.toISOString(),
        errorCode: 'RUN_ABORTED',
        errorMessage: deadHolderMessage(run),
      })
      .where(eq(runs.id, run.id))
      .run();
  }
  return holder;
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
  const running = store.db.select().from(runs).where(eq(runs.status, 'running')).all();
  if (!running.some((run) => holderIsDead(store, run))) return 0;
  return store.sqlite
    .transaction(() => {
      const count = store.sqlite.prepare("select count(*) from runs where status = 'running'").pluck();
      const before = count.get() as number;
      abortDeadRuns(store);
      return before - (count.get() as number);
    })
    .immediate();
}
