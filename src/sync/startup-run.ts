import type { RunStart, Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import { previousCronRun } from './next-cron-run.js';

/** What `start` knows as it starts, to decide whether to sync at once. */
export interface StartupFacts {
  cronExpression: string;
  now: Date;
  staleAfterMs: number;
  store: Pick<Store, 'runOfTick' | 'latestRunStart' | 'latestSucceededRun'>;
}

/** The run `start` makes as it starts, and why. */
export interface StartupRun {
  start: RunStart;
  why: 'missed' | 'empty' | 'stale';
  /** When the newest run started, whatever started it; null when there was none. */
  lastRunAt: string | null;
  /** How old the newest listing is; null when there is none. */
  ageMs: number | null;
}

/**
 * Whether `start` syncs as it starts, and as what. Ticks missed while no instance ran are never
 * replayed one by one: when the last tick of SYNC_CRON before now has no run and no run started
 * since it, it gets one run, a `catch-up` that claims it (`startup` on a mirror that never ran).
 * Otherwise a mirror that is empty or older than STALE_AFTER syncs at once (`startup`), claiming
 * that tick when no run has, and not at all while the run of that tick is in progress. Every
 * instance starting together decides the same, and the claim lets one run in.
 */
export async function startupRun(facts: StartupFacts): Promise<StartupRun | null> {
  const { store } = facts;
  const [lastRunAt, latest] = await Promise.all([store.latestRunStart(), store.latestSucceededRun()]);
  const tick = previousCronRun(facts.cronExpression, facts.now)?.toISOString() ?? null;
  const served = tick === null ? undefined : await store.runOfTick(tick);
  const finishedAt = latest?.finishedAt ?? null;
  const ageMs = finishedAt === null ? null : facts.now.getTime() - Date.parse(finishedAt);
  const claim = served === undefined ? tick : null;
  if (claim !== null && (lastRunAt === null || lastRunAt < claim)) {
    const trigger = lastRunAt === null ? 'startup' : 'catch-up';
    const why = lastRunAt === null ? 'empty' : 'missed';
    return { start: { trigger, scheduledFor: claim }, why, lastRunAt, ageMs };
  }
  if (ageMs !== null && ageMs < facts.staleAfterMs) return null;
  // The run of the last tick is under way: it is what freshens the mirror.
  if (served?.status === 'running') return null;
  const why = ageMs === null ? 'empty' : 'stale';
  return { start: { trigger: 'startup', scheduledFor: claim }, why, lastRunAt, ageMs };
}

/** The one line that says why `start` syncs as it starts. */
export function logStartupRun(logger: Logger, run: StartupRun): void {
  const tick = run.start.scheduledFor === null ? {} : { tick: run.start.scheduledFor };
  if (run.why === 'missed') {
    logger.info(
      { missedTick: run.start.scheduledFor, lastRunAt: run.lastRunAt },
      'a scheduled sync was missed while no instance ran: catching up once',
    );
  } else if (run.why === 'empty') {
    logger.info(tick, 'mirror is empty: syncing now');
  } else {
    logger.info({ ageMs: run.ageMs, ...tick }, 'mirror is stale: syncing now');
  }
}
