import type { FastifyInstance } from 'fastify';
import type { Metrics } from './metrics.js';
import type { SnapshotHolder } from './snapshot-holder.js';

/** /healthz (the process answers), /readyz (a fresh enough snapshot is served), /metrics. */
export function registerOpsRoutes(
  app: FastifyInstance,
  deps: { snapshots: SnapshotHolder; metrics: Metrics; staleAfterMs: number; now?: () => number },
): void {
  const now = deps.now ?? Date.now;
  app.get('/healthz', () => ({ status: 'ok' }));

  app.get('/readyz', (_request, reply) => {
    const database = deps.snapshots.databaseProblem();
    if (database !== null) return reply.code(503).send({ status: 'unready', reason: database });
    const info = deps.snapshots.info;
    if (!info) return reply.code(503).send({ status: 'unready', reason: 'no sync has succeeded yet' });
    const ageMs = now() - info.fetchedAt.getTime();
    const ageSeconds = Math.round(ageMs / 1000);
    const body = { run: info.runId, last_success_at: info.fetchedAt.toISOString(), age_seconds: ageSeconds };
    if (ageMs > deps.staleAfterMs) {
      return reply.code(503).send({
        status: 'stale',
        reason: `last successful sync is ${ageSeconds} s old (limit ${Math.round(deps.staleAfterMs / 1000)} s)`,
        ...body,
      });
    }
    return { status: 'ready', ...body };
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).send(text);
  });
}
