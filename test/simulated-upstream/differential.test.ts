import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { generateRequests, toRawRequest } from '../http/drf/differential-requests.js';
import { comparedHeaders, goldenEntries, loadGoldenCases } from '../helpers/golden-files.js';
import { sendRaw, type RawResponse } from '../http/drf/raw-http.js';
import { startReferenceServer, type ReferenceServer } from '../http/drf/reference-server.js';
import { missing, referenceDrf } from '../helpers/requirements.js';

/**
 * The simulated upstream speaks DRF through the same core as the mirror (src/drf): with its faults
 * off it must answer what a real DRF 3.14 site answers — empty `?page=`, Unicode digits, the order
 * of query keys in links and everything else the seeded requests reach.
 */

const drf = referenceDrf();
const golden = loadGoldenCases();
const entries = goldenEntries(golden).map((e) => JSON.parse(e) as Record<string, unknown>);

function shown(r: RawResponse): string {
  const browsable = comparedHeaders(r.headers).includes('content-type: text/html; charset=utf-8');
  const body = browsable ? '<browsable API page>' : r.body.toString('utf8');
  return [String(r.status), ...comparedHeaders(r.headers), body].join('\n');
}

describe.skipIf(missing(drf))('simulated upstream vs a real DRF 3.14 site', () => {
  let reference: ReferenceServer | undefined;
  let upstream: SimulatedUpstream | undefined;

  beforeAll(async () => {
    reference = await startReferenceServer(drf.found ?? 'python3', entries, 8);
    upstream = await startSimulatedUpstream({ entries });
  });

  afterAll(async () => {
    await upstream?.close();
    await reference?.stop();
  });

  it('answers 300 seeded requests with the same status, headers and bytes', async () => {
    const port = Number(new URL(upstream?.url ?? 'http://x:0').port);
    const mismatches: string[] = [];
    for (const spec of generateRequests(300, 20261123)) {
      const raw = toRawRequest(spec);
      const isHead = spec.method === 'HEAD';
      const want = shown(await sendRaw(reference?.port ?? 0, raw, isHead));
      const got = shown(await sendRaw(port, raw, isHead));
      if (want !== got)
        mismatches.push(`${JSON.stringify(spec).slice(0, 300)}\n--- DRF:\n${want}\n--- simulated:\n${got}`);
    }
    expect(mismatches.slice(0, 5).join('\n\n')).toBe('');
  });

  it.each(['?page=', '?page=%D9%A3', '?page=%EF%BC%92&b=1&%C3%A9=2&B=3&%F0%9F%98%80=4&%EF%BD%81=5'])(
    '%s',
    async (query) => {
      const raw = toRawRequest({
        method: 'GET',
        target: `/api/model/team-block-coworker/list/${query}`,
        headers: [['Host', '127.0.0.1:8765']],
      });
      const port = Number(new URL(upstream?.url ?? 'http://x:0').port);
      expect(shown(await sendRaw(port, raw, false))).toBe(
        shown(await sendRaw(reference?.port ?? 0, raw, false)),
      );
    },
  );
});
