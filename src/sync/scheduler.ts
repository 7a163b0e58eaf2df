import cron from 'node-cron';
import { currentHolder } from '../db/run-holders.js';
import type { Logger } from '../logger.js';
import { MirrorError } from '../errors.js';

/** What a trigger did; the admin route declares the shape it needs (structurally the same). */
export type TriggerResult =
  { started: true; runId: number } | { started: false; runningRunId: number | null };

export interface SchedulerDeps {
  cronExpression: string;
  randomDelayMs: number;
  logger: Logger;
  /** One run; must call `onRunStarted` once its run row exists and honour `signal`. */
  run: (signal: AbortSignal, onRunStarted: (runId: number) => void) => Promise<unknown>;
  random?: () => number;
}

export interface Scheduler {
  start(): void;
  /** Starts a run now unless one is in flight in this process. */
  trigger(reason: 'scheduled' | 'admin' | 'startup'): Promise<TriggerResult>;
  /** Stops the schedule, aborts a run in flight and waits for it to settle (bounded). */
  stop(graceMs: number): Promise<void>;
  readonly running: boolean;
}

export function validateCron(expression: string): boolean {
  return cron.validate(expression);
}

/**
 * node-cron ticks; this keeps the rule that one process never runs two syncs at once (a tick during
 * a run is skipped and logged), adds the optional random delay, and lets the admin route and
 * start-up share the same single lane. The database lock still guards against other processes.
 */
export function createScheduler(deps: SchedulerDeps): Scheduler {
  const random = deps.random ?? Math.random;
  const self = currentHolder();
  let inFlight: { promise: Promise<void>; controller: AbortController; runId: number | null } | null = null;
  let stopping = false;
  const delays = new Set<NodeJS.Timeout>();

  const launch = (reason: string): Promise<TriggerResult> => {
    const controller = new AbortController();
    const log = deps.logger.child({ trigger: reason });
    return new Promise<TriggerResult>((resolve) => {
      const slot: { promise: Promise<void>; controller: AbortController; runId: number | null } = {
        controller,
        runId: null,
        promise: Promise.resolve(),
      };
      inFlight = slot;
      slot.promise = deps
        .run(controller.signal, (runId) => {
          slot.runId = runId;
          resolve({ started: true, runId });
        })
        .then(
          () => undefined,
          (error: unknown) => {
            // Failures are recorded as failed runs and logged by the sync itself; here we only
            // answer a caller still waiting, e.g. when another process holds the lock.
            const holder =
              error instanceof MirrorError && typeof error.details.runId === 'number'
                ? error.details.runId
                : null;
            resolve({ started: false, runningRunId: holder });
            if (error instanceof MirrorError && error.code === 'SYNC_LOCKED') {
              // No run row was written for this tick: this line is the only trace of the refusal.
              log.warn(
                {
                  holderRunId: holder,
                  holderPid: error.details.pid ?? null,
                  holderHost: error.details.host ?? null,
                  holderStartedAt: error.details.startedAt ?? null,
                },
                'sync refused: another process holds the lock',
              );
            } else if (!(error instanceof MirrorError)) log.error({ err: error }, 'sync crashed');
          },
        )
        .finally(() => {
          if (inFlight === slot) inFlight = null;
        });
    });
  };

  const scheduler: Scheduler = {
    get running() {
      return inFlight !== null;
    },
    trigger(reason) {
      if (stopping) return Promise.resolve({ started: false, runningRunId: null });
      if (inFlight) {
        deps.logger.warn(
          { trigger: reason, holderRunId: inFlight.runId, holderPid: self.pid, holderHost: self.host },
          'sync skipped: a run is in progress',
        );
        return Promise.resolve({ started: false, runningRunId: inFlight.runId });
      }
      return launch(reason);
    },
    start() {
      const task = cron.schedule(deps.cronExpression, () => {
        const delay = deps.randomDelayMs > 0 ? Math.floor(random() * deps.randomDelayMs) : 0;
        if (delay === 0) {
          void scheduler.trigger('scheduled');
          return;
        }
        const timer = setTimeout(() => {
          delays.delete(timer);
          void scheduler.trigger('scheduled');
        }, delay);
        delays.add(timer);
      });
      stopTask = () => void task.stop();
      deps.logger.info({ cron: deps.cronExpression, randomDelayMs: deps.randomDelayMs }, 'sync scheduled');
    },
    async stop(graceMs) {
      stopping = true;
      stopTask();
      for (const timer of delays) clearTimeout(timer);
      delays.clear();
      const current = inFlight;
      if (!current) return;
      deps.logger.info({ runId: current.runId }, 'aborting the sync in progress');
      current.controller.abort(new Error('shutting down'));
      await Promise.race([current.promise, new Promise((r) => setTimeout(r, graceMs).unref())]);
    },
  };
  let stopTask: () => void = () => undefined;
  return scheduler;
}
