import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';

export type TriggerResult =
  { started: true; runId: number } | { started: false; runningRunId: number | null };

/** Starts a run now; answers with its id once the run row exists, or says which run is in flight. */
export type SyncTrigger = () => Promise<TriggerResult>;

// Hashing both sides first makes the comparison constant-time whatever the lengths.
export function tokenMatches(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The route takes no body; anything past this is refused with 413 without being read further. */
export const ADMIN_BODY_LIMIT_BYTES = 1024;

/**
 * POST /api/mirror/sync/ — exists only when an admin token is configured. The token is checked in
 * `onRequest`, before any body is read: a stranger's 200 MB upload is answered 401/403 at once.
 */
export function registerAdminSyncRoute(app: FastifyInstance, adminToken: string, trigger: SyncTrigger): void {
  app.post(
    '/api/mirror/sync/',
    {
      bodyLimit: ADMIN_BODY_LIMIT_BYTES,
      onRequest: async (request, reply) => {
        const header = request.headers.authorization;
        const match = header ? /^Bearer\s+(.+)$/i.exec(header) : null;
        if (!match?.[1]) {
          return reply.code(401).header('WWW-Authenticate', 'Bearer').send({
            detail: 'Authentication credentials were not provided: send Authorization: Bearer <ADMIN_TOKEN>.',
          });
        }
        if (!tokenMatches(match[1].trim(), adminToken)) {
          return reply.code(403).send({ detail: 'Invalid admin token.' });
        }
      },
    },
    async (_request, reply) => {
      const result = await trigger();
      if (!result.started) {
        return reply.code(409).send({ detail: 'A sync is already running.', run: result.runningRunId });
      }
      return reply
        .code(202)
        .send({ detail: 'Sync started.', run: result.runId, url: `/api/mirror/runs/${result.runId}/` });
    },
  );
}
