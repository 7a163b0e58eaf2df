import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulatedUpstream, type SimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { GOLDEN_HOST, goldenCase, goldenEntries, loadGoldenCases } from '../helpers/golden-files.js';
import { fetchRaw } from './http.js';

// Fed the golden listing's rows and asked with the golden Host, the simulated upstream must answer
// what the real DRF 3.14 server answered, byte for byte, in everything DRF decides.
describe('simulated upstream against the DRF golden exchanges', () => {
  let upstream: SimulatedUpstream;
  beforeAll(async () => {
    upstream = await startSimulatedUpstream({
      entries: goldenEntries(loadGoldenCases()).map((e) => JSON.parse(e) as Record<string, unknown>),
    });
  });
  afterAll(() => upstream.close());

  const cases = [
    { golden: 'no_page', method: 'GET', query: '' },
    { golden: 'page_2', method: 'GET', query: '?page=2' },
    { golden: 'page_3', method: 'GET', query: '?page=3' },
    { golden: 'page_4_past_end', method: 'GET', query: '?page=4' },
    { golden: 'page_abc', method: 'GET', query: '?page=abc' },
    { golden: 'head_no_page', method: 'HEAD', query: '' },
    { golden: 'options', method: 'OPTIONS', query: '' },
    { golden: 'post', method: 'POST', query: '' },
  ] as const;

  it.each(cases)('$golden', async ({ golden, method, query }) => {
    const expected = goldenCase(golden);
    const answer = await fetchRaw(`${upstream.url}${LIST_PATH}${query}`, {
      method,
      headers: { host: GOLDEN_HOST },
    });
    expect(answer.status).toBe(expected.status);
    for (const name of ['content-type', 'vary', 'allow', 'content-length']) {
      expect(answer.headers[name], name).toBe(
        expected.responseHeaders.find(([n]) => n.toLowerCase() === name)?.[1],
      );
    }
    expect(answer.body.toString('utf8')).toBe(expected.body.toString('utf8'));
    expect(answer.body.equals(expected.body)).toBe(true);
  });

  it('accept_xml: 406 with the DRF detail', async () => {
    const expected = goldenCase('accept_xml');
    const answer = await fetchRaw(`${upstream.url}${LIST_PATH}`, {
      headers: { host: GOLDEN_HOST, accept: 'application/xml' },
    });
    expect(answer.status).toBe(406);
    expect(answer.text).toBe(expected.body.toString('utf8'));
  });
});
