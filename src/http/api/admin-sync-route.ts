import type { FastifyInstance } from 'fastify';
import { adminOnly } from './admin-auth.js';

export type TriggerResult =
  | { started: true; runId: number }
  | { started: false; runningRunId: number | null; failed?: { code: string; message: string } };

/** Starts a run now; answers with its id once the run row exists, or says which run is in flight. */
export type SyncTrigger = () => Promise<TriggerResult>;

/**
 * POST /api/mirror/sync/ — exists only when an admin token is configured. The token is checked in
 * `onRequest`, before any body is read: a stranger's 200 MB upload is answered 401/403 at once.
 */
export function registerAdminSyncRoute(app: FastifyInstance, adminToken: string, trigger: SyncTrigger): void {
  app.post('/api/mirror/sync/', adminOnly(adminToken), async (_request, reply) => {
    const result = await trigger();
    if (!result.started && result.failed) {
      // The run could not begin (the database away, say): not a run in flight, and worth retrying.
      const { code, message } = result.failed;
      return reply.code(503).send({ detail: `The sync could not start: ${message}`, code });
    }
    if (!result.started) {
      return reply.code(409).send({ detail: 'A sync is already running.', run: result.runningRunId });
    }
    return reply
      .code(202)
      .send({ detail: 'Sync started.', run: result.runId, url: `/api/mirror/runs/${result.runId}/` });
  });
}
