import { describe, expect, it } from 'vitest';
import { respondList, type DrfOptions } from '../../../src/drf/respond.js';
import { prepareSnapshot } from '../../../src/drf/snapshot.js';
import { comparedHeaders, goldenEntries, loadGoldenCases } from '../../helpers/golden-files.js';

const cases = loadGoldenCases();
const snapshot = prepareSnapshot({
  id: 'golden',
  entries: goldenEntries(cases),
  pageSize: 8,
  optionsBody: null,
  fetchedAt: new Date('2026-11-21T15:49:35Z'),
});
const options: DrfOptions = { trustProxyHeaders: false, publicBaseUrl: null, cacheControl: null };

describe('golden exchanges with a real DRF 3.14 site', () => {
  it('has the ten documented cases', () => {
    expect(cases.map((c) => c.name)).toHaveLength(10);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, golden) => {
    const answer = respondList(
      { method: golden.method, url: golden.url, headers: golden.headers },
      snapshot,
      options,
    );
    expect(answer.status).toBe(golden.status);
    expect(comparedHeaders(answer.headers)).toEqual(comparedHeaders(golden.responseHeaders));
    expect(Buffer.concat(answer.body).toString('latin1')).toBe(golden.body.toString('latin1'));
    if (golden.method === 'HEAD') {
      const length = golden.responseHeaders.find(([n]) => n.toLowerCase() === 'content-length')?.[1];
      expect(answer.headers).toContainEqual(['Content-Length', length]);
    }
  });
});
