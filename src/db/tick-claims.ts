import type { RunStart } from './store.js';
import { MirrorError } from '../errors.js';
import type { RunRow } from './schema.js';

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
