import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goldenEntries, loadGoldenCases } from '../../helpers/golden-files.js';
import { probeCases } from './probe-requests.js';
import { startServerPair, type ServerPair } from './server-pair.js';
import { WAIT_MS } from '../../helpers/patience.js';
import { missing, referenceDrf } from '../../helpers/requirements.js';

/**
 * ~780 hand-picked raw requests of a hostile client (probe-requests.ts) sent to the real DRF site
 * under gunicorn and to the mirror's list endpoint, compared on the whole answer: the status line
 * (reason phrase included), every header in wire order but the ones that vary by deployment or are
 * the mirror's own, Content-Length and the body bytes (chunked framing undone). The browsable API's
 * HTML is not reproduced: for it only the status and the other headers count.
 */

const drf = referenceDrf();

/** Headers that differ by deployment (gunicorn's), or are the mirror's own documented additions. */
const IGNORED = new Set([
  'date',
  'server',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'etag',
  'last-modified',
  'x-mirror-fetched-at',
]);

/**
 * Differences kept on purpose, by case name. Node's parser normalises what these send before the
 * mirror sees it (it answers HTTP/2.0 with an HTTP/1.1 status line; it skips leading CRLFs, extra spaces in the
 * request line and whitespace around header values; it reads `GET /x HTTP/0.9` and `GET /x` alike),
 * and `as_of` is the mirror's time travel (README).
 */
const KEPT = new Set([
  'version HTTP/2.0',
  'version HTTP/0.9',
  'two spaces after method',
  'two spaces before version',
  'leading CRLF',
  'Host with tab',
  'Host trailing space',
  'X-Forwarded-Proto https trailing space',
  'header 8190 no space',
  'target "/api/model/team-block-coworker/list/?page=2&as_of=x"',
  'target "/api/model/team-block-coworker/list/?page=2&as_of=2026-01-01T00:00:00Z"',
  'target "/api/model/team-block-coworker/list/?as_of="',
]);

/** Sends `raw` on a fresh connection, reads until the peer closes (every case asks it to). */
function exchange(port: number, raw: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(raw));
    socket.setTimeout(WAIT_MS, () => {
      chunks.push(Buffer.from(`<no close within ${WAIT_MS} ms>`));
      socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    // gunicorn resets a connection whose request it left unread (a line over its limit) once its
    // answer is out; a reset after the answer is a close, and one before it still shows as a cut answer.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' || chunks.length === 0) chunks.push(Buffer.from(`<${error.message}>`));
    });
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

function dechunk(body: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const end = body.indexOf('\r\n', at);
    if (end < 0) return `${out}<unterminated chunks>`;
    const size = parseInt(body.slice(at, end), 16);
    if (!size) return out;
    out += body.slice(end + 2, end + 2 + size);
    at = end + 2 + size + 2;
  }
}

/** The answer as text, normalised as the header comment says; the server's own port reads PORT. */
export function normalise(raw: Buffer, port: number, isHead: boolean): string {
  let text = raw.toString('latin1');
  // An interim 100 Continue, then the answer.
  if (text.startsWith('HTTP/1.1 100 ')) text = text.slice(text.indexOf('\r\n\r\n') + 4);
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return `no answer head: ${JSON.stringify(text.slice(0, 300))}`;
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const name = (line: string): string => line.slice(0, line.indexOf(':')).toLowerCase();
  const chunked = lines.some((l) => name(l) === 'transfer-encoding' && /chunked/i.test(l));
  let body = text.slice(end + 4);
  if (chunked) body = dechunk(body);
  const browsable = lines.some((l) => /^content-type: text\/html; charset=utf-8$/i.test(l));
  const kept = lines.filter((l) => !IGNORED.has(name(l)) && !(browsable && name(l) === 'content-length'));
  if (browsable) body = '<browsable API page>';
  // gunicorn writes its own error page even after a HEAD; clients never read a HEAD's body.
  if (isHead) body = '';
  return [statusLine, ...kept, `framing: ${chunked ? 'chunked' : 'length or close'}`, '', body]
    .join('\n')
    .replaceAll(`127.0.0.1:${port}`, '127.0.0.1:PORT');
}

interface Scenario {
  name: string;
  empty: boolean;
  trustProxy: boolean;
}

const scenarios: Scenario[] = [
  { name: 'the golden rows', empty: false, trustProxy: false },
  { name: 'an empty listing', empty: true, trustProxy: false },
  { name: 'the golden rows, proxy headers trusted', empty: false, trustProxy: true },
];

describe.skipIf(missing(drf))('probes: hostile raw requests answered as the DRF site answers', () => {
  const golden = loadGoldenCases();
  const cases = probeCases();

  describe.each(scenarios)('$name', (scenario) => {
    const entries = scenario.empty ? [] : goldenEntries(golden);
    let pair: ServerPair | undefined;

    beforeAll(async () => {
      pair = await startServerPair(drf.found ?? 'python3', {
        id: 'probes',
        entries,
        optionsBody: golden.find((c) => c.name === 'options')?.body.toString('utf8') ?? null,
        trustProxy: scenario.trustProxy,
      });
    });

    afterAll(() => pair?.close());

    it(`answers ${cases.length} probes alike`, async () => {
      const mismatches: string[] = [];
      for (const c of cases) {
        if (KEPT.has(c.name)) continue;
        const isHead = c.raw.subarray(0, 5).toString('latin1').toUpperCase() === 'HEAD ';
        const want = normalise(
          await exchange(pair?.referencePort ?? 0, c.raw),
          pair?.referencePort ?? 0,
          isHead,
        );
        const got = normalise(await exchange(pair?.mirrorPort ?? 0, c.raw), pair?.mirrorPort ?? 0, isHead);
        if (want !== got)
          mismatches.push(
            `### ${c.name}\n--- DRF:\n${want.slice(0, 800)}\n--- mirror:\n${got.slice(0, 800)}`,
          );
      }
      expect(mismatches.slice(0, 8).join('\n\n')).toBe('');
      expect(mismatches).toHaveLength(0);
    });
  });
});
