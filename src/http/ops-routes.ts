import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { maskPassword } from '../config/database-url.js';
import { DEMO_UPSTREAM_LABEL } from '../demo/demo-label.js';
import type { Metrics } from './metrics.js';
import type { SnapshotHolder } from './snapshot-holder.js';

/**
 * What keeps the mirror from being ready, or null. A store that cannot answer at all (PostgreSQL
 * restarting, failing over) is such a reason, with what it said (its password masked), never an
 * error: the list endpoint keeps serving the snapshot held.
 */
async function problemOf(
  snapshots: SnapshotHolder,
  mediaProblem: (() => Promise<string | null>) | undefined,
): Promise<string | null> {
  try {
    return (await snapshots.databaseProblem()) ?? (await mediaProblem?.()) ?? null;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return `database unreachable: ${maskPassword(message)}`;
  }
}

/**
 * /healthz (the process answers), /readyz (a fresh enough snapshot is served), both public; /metrics,
 * internal when INTERNAL_PORT is set.
 */
export function registerOpsRoutes(
  app: FastifyInstance,
  deps: {
    snapshots: SnapshotHolder;
    metrics: Metrics;
    staleAfterMs: number;
    metricsToken?: string | null;
    /** What keeps mirrored media from being served (the folder gone, files unreadable), when media is served. */
    mediaProblem?: () => Promise<string | null>;
    now?: () => number;
  },
): void {
  const now = deps.now ?? Date.now;
  // A load balancer or orchestrator in front of the public listener probes these two.
  const exposed = { config: { public: true } };
  app.get('/healthz', exposed, () => ({ status: 'ok' }));

  app.get('/readyz', exposed, async (_request, reply) => {
    const database = await problemOf(deps.snapshots, deps.mediaProblem);
    if (database !== null) return reply.code(503).send({ status: 'unready', reason: database });
    const info = deps.snapshots.info;
    if (!info) return reply.code(503).send({ status: 'unready', reason: 'no sync has succeeded yet' });
    const ageMs = now() - info.fetchedAt.getTime();
    const ageSeconds = Math.round(ageMs / 1000);
    const body = {
      run: info.runId,
      last_success_at: info.fetchedAt.toISOString(),
      age_seconds: ageSeconds,
      // A demo must never pass for a mirror: the probe itself says which one answers.
      ...(info.upstream === DEMO_UPSTREAM_LABEL ? { mode: 'demo' } : {}),
    };
    if (ageMs > deps.staleAfterMs) {
      return reply.code(503).send({
        status: 'stale',
        reason: `last successful sync is ${ageSeconds} s old (limit ${Math.round(deps.staleAfterMs / 1000)} s)`,
        ...body,
      });
    }
    return { status: 'ready', ...body };
  });

  app.get('/metrics', async (request, reply) => {
    const token = deps.metricsToken ?? null;
    if (token !== null && !bearerMatches(request.headers.authorization, token)) {
      request.log.info({ route: '/metrics' }, 'metrics scrape refused: no valid bearer token');
      return reply
        .code(401)
        .header('WWW-Authenticate', 'Bearer')
        .send({ detail: 'Send Authorization: Bearer <METRICS_TOKEN>.' });
    }
    const text = await deps.metrics.registry.metrics();
    return reply.type(deps.metrics.registry.contentType).send(text);
  });
}

// Hashing both sides first makes the comparison constant-time whatever the lengths.
function bearerMatches(header: string | undefined, token: string): boolean {
  const given = header ? (/^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim() ?? '') : '';
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}
