import type { MirrorDatabase } from '../open.js';
import { runStatuses } from '../schema.js';

type RunStatus = (typeof runStatuses)[number];

/** A reader of how many runs are recorded in each status (every status present, 0 when none). */
export function runCountsReader(store: MirrorDatabase): () => Map<RunStatus, number> {
  const countByStatus = store.sqlite.prepare('select status, count(*) as n from runs group by status');
  return () => {
    const counts = new Map(
      (countByStatus.all() as { status: RunStatus; n: number }[]).map((r) => [r.status, r.n]),
    );
    return new Map(runStatuses.map((status) => [status, counts.get(status) ?? 0]));
  };
}
