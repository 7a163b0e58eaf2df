import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { toMirrorError } from '../errors.js';
import { sendUnavailablePage } from '../web/unavailable.js';

/**
 * A page or API answer that needs the database while it is away (a restart, a failover) or does
 * not answer within its deadline (a lock held, a stopped server): "try again", as the list
 * endpoint's `?as_of=` says, never a 500. The list itself keeps its snapshot.
 */
const DATABASE_AWAY = "The mirror's database is unavailable right now; try again shortly.";
const RETRY_AFTER_S = 5;
const AWAY_CODES: ReadonlySet<string> = new Set(['DB_ERROR', 'DATABASE_TIMEOUT']);

/** A browser asking for a page (text/html named, not refused with q=0), never an API client. */
function wantsPage(url: string, accept: string | undefined): boolean {
  if (url.startsWith('/api/') || accept === undefined) return false;
  return accept.split(',').some((range) => {
    const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
    const q = parameters.find((p) => p.startsWith('q='));
    return (
      (type === 'text/html' || type === 'application/xhtml+xml') &&
      (q === undefined || Number(q.slice(2)) > 0)
    );
  });
}

/**
 * Fastify's side answers a failure itself and says so in the log: a client error (bad JSON, a
 * schema refusal) is a 4xx with its message, anything else a logged 500 that names no internals.
 */
export function registerErrorHandlers(
  app: FastifyInstance,
  /** Who answers a path (or a method) no route has: the DRF site, in the server. */
  notFound?: (req: IncomingMessage, res: ServerResponse) => void,
): void {
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    // SQLite's errors reach here as they were thrown: toMirrorError makes a busy or failing file
    // DB_ERROR, the database away too.
    const known = toMirrorError(error);
    if (AWAY_CODES.has(known.code)) {
      // Expected while the database is away: what and why, without a stack per request.
      request.log.warn(
        { url: request.url, code: known.code, reason: known.message },
        'request needed the database, which did not answer',
      );
      if (wantsPage(request.url, request.headers.accept)) return sendUnavailablePage(reply, RETRY_AFTER_S);
      return reply.code(503).header('Retry-After', String(RETRY_AFTER_S)).send({ detail: DATABASE_AWAY });
    }
    const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error, url: request.url, method: request.method }, 'request failed');
      return reply.code(status).send({ detail: 'Internal server error.' });
    }
    request.log.info({ err: error, url: request.url, status }, 'request refused');
    return reply.code(status).send({ detail: error.message });
  });
  // A path no route of Fastify's answers is the DRF site's, as over the socket where the front
  // router hands it on: Django's 404 byte for byte, inject() included.
  app.setNotFoundHandler((request, reply) => {
    if (!notFound) return reply.code(404).send({ detail: 'Not found.' });
    void reply.hijack();
    notFound(request.raw, reply.raw);
    return reply;
  });
}
