import { MirrorError } from '../errors.js';
import type { RunRow, RunTrigger } from './schema.js';

/**
 * What started a run, as its row records it. `scheduledFor` is the tick of SYNC_CRON the run serves
 * (its nominal time as an ISO string, the same text on every instance), null for a run no tick
 * started. Inserting the run's row claims the tick: `runs_scheduled_for_idx` lets one row per tick
 * in, whichever instance comes second, so N instances cost the upstream one crawl per tick.
 */
export interface RunStart {
  trigger: RunTrigger;
  scheduledFor: string | null;
}

/** A run a person or a script asked for (a bare `sync`): no tick. */
export const COMMAND_START: RunStart = { trigger: 'command', scheduledFor: null };

/** The run that claimed a tick, as TICK_SERVED names it. */
export type TickServer = Pick<RunRow, 'id' | 'status' | 'startedAt' | 'holderPid' | 'holderHost'>;

/**
 * TICK_SERVED: the tick was claimed by another run, whatever became of it. A run that failed still
 * served its tick: another instance does not crawl it again, the next tick does.
 */
export function tickServedError(tick: string, run: TickServer): MirrorError {
  const by = `${run.holderHost ?? 'unknown host'}/${run.holderPid ?? '?'}`;
  return new MirrorError(
    'TICK_SERVED',
    `the tick of ${tick} was already served by run ${run.id} (${by}, started ${run.startedAt}, ${run.status})`,
    {
      tick,
      runId: run.id,
      status: run.status,
      pid: run.holderPid,
      host: run.holderHost,
      startedAt: run.startedAt,
    },
  );
}
