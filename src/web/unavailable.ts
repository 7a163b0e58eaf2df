import type { FastifyReply } from 'fastify';
import { h } from 'preact';
import { LIST_PATH_NO_SLASH } from '../drf/view.js';
import { upstreamMedia } from './media-source.js';
import { UnavailablePage } from './pages/error-page.js';
import { sendPage } from './render.js';

/**
 * A browser's answer while the database does not answer (away, or past its deadline): a 503 page
 * saying the history is unavailable and the list endpoint still serves, with Retry-After.
 */
export function sendUnavailablePage(reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  reply.header('Retry-After', String(retryAfterSeconds));
  return sendPage(
    reply,
    { media: upstreamMedia },
    h(UnavailablePage, { listPath: `${LIST_PATH_NO_SLASH}/`, retryAfterSeconds }),
    503,
  );
}
