/**
 * The socket errors of a connection that failed or ended, as Node names them: the session is gone,
 * whatever statement it ran. Both the dialect's error mapping and the start-up's "is the database
 * away" test read them here, so the two never disagree about what a lost connection is.
 */
export const SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
