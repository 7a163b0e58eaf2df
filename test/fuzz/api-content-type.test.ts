import { describe, expect, it } from 'vitest';
import { sendRaw } from '../http/drf/raw-http.js';
import { startMirror } from '../helpers/mirror-server.js';
import { tempDatabase } from '../helpers/temp-db.js';

/**
 * Found by the hostile-request fuzzer. src/http/server.ts says of the API: "reads no request
 * bodies; accept and drop any so odd clients get the route's answer" (a catch-all content-type
 * parser). A Content-Type that is not a valid media type (`text`, `é/é`) still gets Fastify's
 * 415 FST_ERR_CTP_INVALID_MEDIA_TYPE, even with no body and before the route's own checks (so
 * also instead of the 401 for a missing token). Fixed: API requests reach Fastify without Content-Type.
 */
describe('the API answers odd Content-Types with the route, as server.ts intends', () => {
  const trigger = () => Promise.resolve({ started: false as const, runningRunId: 7 });

  it.each(['text', 'é/é'])(
    'POST /api/mirror/sync/ with a valid token and Content-Type %j → the route answer (409)',
    async (contentType) => {
      const mirror = await startMirror(tempDatabase(), { adminToken: 'secret' }, trigger);
      const request = [
        'POST /api/mirror/sync/ HTTP/1.1',
        'Host: 127.0.0.1',
        'Authorization: Bearer secret',
        `Content-Type: ${contentType}`,
        'Content-Length: 0',
        'Connection: close',
        '',
        '',
      ].join('\r\n');
      const answer = await sendRaw(mirror.port, Buffer.from(request, 'latin1'), false);
      // got 415 {"statusCode":415,"code":"FST_ERR_CTP_INVALID_MEDIA_TYPE",...}
      expect(answer.status).toBe(409);
    },
  );
});
