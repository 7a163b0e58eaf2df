import { describe, expect, it } from 'vitest';
import { sendRaw, type RawResponse } from '../http/drf/raw-http.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

/**
 * Regressions found by the hostile-request fuzzer: two memo keys of the list endpoint let one
 * request decide the answer other clients get. Each test sends the poisoning request first, then
 * the victim, and expects the victim to get what DRF answers it (which it gets on a fresh server).
 * Fixed: the negotiation memo key is a JSON array and the answer cache's key writes an absent header
 * as NUL; both keep an absent value apart from any text.
 */

const LIST = '/api/model/team-block-coworker/list/';

async function mirrorPort(): Promise<number> {
  const store = tempDatabase();
  await sync(store, await simulatedUpstream({ count: 20 }));
  return (await startMirror(store)).port;
}

function get(port: number, target: string, headers: string[], version = 'HTTP/1.1'): Promise<RawResponse> {
  const head = [`GET ${target} ${version}`, ...headers, 'Connection: close', '', ''].join('\r\n');
  return sendRaw(port, Buffer.from(head, 'latin1'), false);
}

const HOST = 'Host: 127.0.0.1:8765';

describe('AnswerCache key: String(header) makes a missing header and the text "undefined" one key', () => {
  // AnswerCache.key (src/http/answer-cache.ts) had `${String(h.accept)}`: 'undefined' both without an
  // Accept header and with `Accept: undefined` (DRF: 406), so whichever came first was served to both.
  it('`Accept: undefined` (406) is not served to the same URL without Accept', async () => {
    const port = await mirrorPort();
    const poison = await get(port, `${LIST}?page=2`, [HOST, 'Accept: undefined']);
    expect(poison.status).toBe(406);
    const victim = await get(port, `${LIST}?page=2`, [HOST]);
    expect(victim.status).toBe(200); // got 406 {"detail":"Could not satisfy the request Accept header."}
  });

  it('a request without Accept (200) is not served to `Accept: undefined`', async () => {
    const port = await mirrorPort();
    expect((await get(port, `${LIST}?page=3`, [HOST])).status).toBe(200);
    const second = await get(port, `${LIST}?page=3`, [HOST, 'Accept: undefined']);
    expect(second.status).toBe(406); // got 200 with the page
  });

  // HTTP/1.0 may omit Host: DRF then builds links from the server's own name, never from "undefined".
  it('`Host: undefined` links are not served to an HTTP/1.0 request without Host', async () => {
    const port = await mirrorPort();
    const poison = await get(port, LIST, ['Host: undefined'], 'HTTP/1.0');
    expect(poison.body.toString('utf8')).toContain('"next":"http://undefined/');
    const victim = await get(port, LIST, [], 'HTTP/1.0');
    expect(victim.status).toBe(200);
    expect(victim.body.toString('utf8')).toMatch(
      /"next":"http:\/\/[^"/]+\/api\/model\/team-block-coworker\/list\/\?page=2"/,
    );
    expect(victim.body.toString('utf8')).not.toContain('http://undefined/'); // got the poisoned links
  });
});

// Last: this poisons a module-level memo the tests above rely on being clean.
describe('negotiate() memo key: `${format}\\0${accept ?? "\\0"}` is ambiguous once format holds a NUL', () => {
  // src/drf/negotiation.ts: (format '\0', Accept '') and (no format, no Accept) share the key
  // '\0\0', so `?format=%00` with an empty Accept (DRF: 404 unknown format) is remembered as the
  // answer for every later request with neither format nor Accept, or the other way round: whichever
  // comes first decides both ([404, 404] on a fresh process, [200, 200] once a plain request was
  // answered). The memo is module-level, so this crosses servers in one process.
  it('`?format=%00` + `Accept:` (empty) and the plain list request each get their own answer', async () => {
    const port = await mirrorPort();
    const poison = await get(port, `${LIST}?format=%00`, [HOST, 'Accept: ']);
    const victim = await get(port, LIST, [HOST]);
    expect([poison.status, victim.status]).toEqual([404, 200]);
  });

  // Same collision with a format: (format 'json\0', Accept '') vs (format 'json', no Accept).
  it('`?format=json%00` + `Accept:` (empty) and `?format=json` each get their own answer', async () => {
    const port = await mirrorPort();
    const poison = await get(port, `${LIST}?format=json%00`, [HOST, 'Accept: ']);
    const victim = await get(port, `${LIST}?format=json`, [HOST]);
    expect([poison.status, victim.status]).toEqual([404, 200]); // got [404, 404]
  });
});
