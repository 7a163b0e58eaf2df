import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

// Hashing both sides first makes the comparison constant-time whatever the lengths.
function tokenMatches(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** The admin routes take no body; anything past this is refused with 413 without being read further. */
const ADMIN_BODY_LIMIT_BYTES = 1024;

/**
 * Route options of an admin route: `Authorization: Bearer <ADMIN_TOKEN>` checked in `onRequest`,
 * before any body is read (a stranger's 200 MB upload is answered 401/403 at once), and the body
 * capped at ADMIN_BODY_LIMIT_BYTES.
 */
export function adminOnly(adminToken: string) {
  return {
    bodyLimit: ADMIN_BODY_LIMIT_BYTES,
    onRequest: async (request: FastifyRequest, reply: FastifyReply) => {
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
  };
}
