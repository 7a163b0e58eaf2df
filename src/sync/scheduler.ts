import type { RunStart } from '../db/store.js';
import cron from 'node-cron';
import { currentHolder } from '../db/run-liveness.js';
import { tickServedError, type TickServer } from '../db/tick-claims.js';
import type { Logger } from '../logger.js';
import { MirrorError } from '../errors.js';

/** What a trigger did; the admin route declares the shape it needs (structurally the same). */
export type TriggerResult =
  | { started: true; runId: number }
  | { started: false; runningRunId: number | null; failed?: { code: string; message: string } };

export interface SchedulerDeps {
  cronExpression: string;
  randomDelayMs: number;
  logger: Logger;
  /**
   * One run started as `start` says; must call `onRunStarted` once its run row exists and honour
   * `signal`. Its row claims `start`'s tick; it rejects with TICK_SERVED when another run has.
   */
  run: (signal: AbortSignal, onRunStarted: (runId: number) => void, start: RunStart) => Promise<unknown>;
  /**
   * The run that claimed a tick, asked before a run of that tick starts: a tick another instance
   * served costs a read, not a process. The claim itself is the run row's (`run`).
   */
  runOfTick?: (tick: string) => Promise<TickServer | undefined>;
  random?: () => number;
}

export interface Scheduler {
  start(): void;
  /**
   * Starts a run now unless one is in flight in this process, or, for a tick (`scheduledFor`), a
   * run on any instance already served it.
   */
  trigger(start: RunStart): Promise<TriggerResult>;
  /** Stops the schedule, aborts a run in flight and waits for it to settle (bounded). */
  stop(graceMs: number): Promise<void>;
  readonly running: boolean;
}

export function validateCron(expression: string): boolean {
  return cron.validate(expression);
}

/** The run in flight in this process, if any: the single lane every trigger shares. */
interface Lane {
  inFlight: { promise: Promise<void>; controller: AbortController; runId: number | null } | null;
}

/**
 * node-cron ticks; this keeps the rule that one process never runs two syncs at once (a tick during
 * a run is skipped and logged), adds the optional random delay, and lets the admin route and
 * start-up share the same single lane. The database lock still guards against other processes, and
 * each tick is run once across them: a run claims its tick's nominal time (before the delay), so an
 * instance whose delayed tick comes after another's served it logs that and crawls nothing.
 */
export function createScheduler(deps: SchedulerDeps): Scheduler {
  const random = deps.random ?? Math.random;
  const self = currentHolder();
  const lane: Lane = { inFlight: null };
  let stopping = false;
  let stopTicks: () => void = () => undefined;
  const delays = new Set<NodeJS.Timeout>();
  const scheduler: Scheduler = {
    get running() {
      return lane.inFlight !== null;
    },
    trigger(start) {
      if (stopping) return Promise.resolve({ started: false, runningRunId: null });
      const current = lane.inFlight;
      if (current) {
        deps.logger.warn(
          {
            ...startFields(start),
            holderRunId: current.runId,
            holderPid: self.pid,
            holderHost: self.host,
          },
          'sync skipped: a run is in progress',
        );
        return Promise.resolve({ started: false, runningRunId: current.runId });
      }
      return launch(deps, lane, start);
    },
    start() {
      stopTicks = scheduleTicks(
        deps,
        random,
        delays,
        (tick) => void scheduler.trigger({ trigger: 'schedule', scheduledFor: tick }),
      );
    },
    async stop(graceMs) {
      stopping = true;
      stopTicks();
      for (const timer of delays) clearTimeout(timer);
      delays.clear();
      const current = lane.inFlight;
      if (!current) return;
      deps.logger.info({ runId: current.runId }, 'aborting the sync in progress');
      current.controller.abort(new Error('shutting down'));
      await Promise.race([current.promise, new Promise((r) => setTimeout(r, graceMs).unref())]);
    },
  };
  return scheduler;
}

/** What a log line of a run's start says about it: its trigger and, for a tick, the tick. */
function startFields(start: RunStart): { trigger: string; tick?: string } {
  return start.scheduledFor === null
    ? { trigger: start.trigger }
    : { trigger: start.trigger, tick: start.scheduledFor };
}

/** Starts a run in the lane; answers once its run row exists, or once it failed before that. */
function launch(deps: SchedulerDeps, lane: Lane, start: RunStart): Promise<TriggerResult> {
  const controller = new AbortController();
  const log = deps.logger.child(startFields(start));
  return new Promise<TriggerResult>((resolve) => {
    const slot: NonNullable<Lane['inFlight']> = { controller, runId: null, promise: Promise.resolve() };
    lane.inFlight = slot;
    const onRunStarted = (runId: number) => {
      slot.runId = runId;
      resolve({ started: true, runId });
    };
    slot.promise = unlessServed(deps, start)
      .then(() => deps.run(controller.signal, onRunStarted, start))
      .then(
        () => undefined,
        (error: unknown) => resolve(refusedOrCrashed(error, log, slot.runId !== null)),
      )
      .finally(() => {
        if (lane.inFlight === slot) lane.inFlight = null;
      });
  });
}

/**
 * Rejects with TICK_SERVED when a run already claimed `start`'s tick. A store that cannot answer
 * lets the run go on: its claim, in the run's own row, decides.
 */
async function unlessServed(deps: SchedulerDeps, start: RunStart): Promise<void> {
  const tick = start.scheduledFor;
  if (tick === null || !deps.runOfTick) return;
  const served = await deps.runOfTick(tick).catch(() => undefined);
  if (served) throw tickServedError(tick, served);
}

/** The tick had its run, on this instance or another: no crawl, no failure, one line naming it. */
function tickServed(error: MirrorError, log: Logger): TriggerResult {
  const { runId, host, pid, status } = error.details;
  const servedByRun = typeof runId === 'number' ? runId : null;
  const servedBy = `${typeof host === 'string' ? host : 'unknown host'}/${typeof pid === 'number' ? pid : '?'}`;
  log.info({ servedByRun, servedBy, servedByStatus: status }, 'tick already served');
  return { started: false, runningRunId: status === 'running' ? servedByRun : null };
}

/**
 * Failures are recorded as failed runs and logged by the sync itself; here we only answer a caller
 * still waiting, e.g. when another process holds the lock.
 */
function refusedOrCrashed(error: unknown, log: Logger, runBegan: boolean): TriggerResult {
  const holder =
    error instanceof MirrorError && typeof error.details.runId === 'number' ? error.details.runId : null;
  if (error instanceof MirrorError && error.code === 'TICK_SERVED') return tickServed(error, log);
  if (error instanceof MirrorError && error.code === 'SYNC_LOCKED') {
    // No run row was written for this tick: this line is the only trace of the refusal.
    log.warn(
      {
        holderRunId: holder,
        holderPid: error.details.pid ?? null,
        holderHost: error.details.host ?? null,
        holderStartedAt: error.details.startedAt ?? null,
        // PostgreSQL names the instance (host/pid/random): pids repeat across hosts and containers.
        ...(error.details.instance === undefined ? {} : { holderInstance: error.details.instance }),
      },
      'sync refused: another process holds the lock',
    );
    return { started: false, runningRunId: holder };
  }
  if (!(error instanceof MirrorError)) {
    log.error({ err: error }, 'sync crashed');
    return { started: false, runningRunId: holder };
  }
  // A run that began recorded its own failure; the caller was answered when it began.
  if (runBegan) return { started: false, runningRunId: holder };
  // It failed before its run could begin (the database away, say): not a run in flight.
  log.warn({ code: error.code, err: error }, 'sync could not start');
  return { started: false, runningRunId: holder, failed: { code: error.code, message: error.message } };
}

/**
 * Schedules the cron ticks, each after its random delay (kept in `delays`); returns their stop.
 * Each tick is named by its nominal time (node-cron's slot, to the second), the same text on every
 * instance whatever its delay: the key its run claims.
 */
function scheduleTicks(
  deps: SchedulerDeps,
  random: () => number,
  delays: Set<NodeJS.Timeout>,
  tick: (scheduledFor: string) => void,
): () => void {
  const task = cron.schedule(deps.cronExpression, (context) => {
    const scheduledFor = context.date.toISOString();
    const delay = deps.randomDelayMs > 0 ? Math.floor(random() * deps.randomDelayMs) : 0;
    if (delay === 0) {
      tick(scheduledFor);
      return;
    }
    const timer = setTimeout(() => {
      delays.delete(timer);
      tick(scheduledFor);
    }, delay);
    delays.add(timer);
  });
  deps.logger.info({ cron: deps.cronExpression, randomDelayMs: deps.randomDelayMs }, 'sync scheduled');
  return () => void task.stop();
}
