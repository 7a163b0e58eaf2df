import type { FastifyInstance } from 'fastify';

/**
 * Fastify's side answers a failure itself and says so in the log: a client error (bad JSON, a
 * schema refusal) is a 4xx with its message, anything else a logged 500 that names no internals.
 */
export function registerErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: Error & { statusCode?: number }, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 ? error.statusCode : 500;
    if (status >= 500) {
      request.log.error({ err: error, url: request.url, method: request.method }, 'request failed');
      return reply.code(status).send({ detail: 'Internal server error.' });
    }
    request.log.info({ err: error, url: request.url, status }, 'request refused');
    return reply.code(status).send({ detail: error.message });
  });
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ detail: 'Not found.' }));
}
