import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  boundaryRequests,
  generateRequests,
  toRawRequest,
  type RawRequestSpec,
} from './differential-requests.js';
import { comparedHeaders, goldenEntries, loadGoldenCases } from '../../helpers/golden-files.js';
import { sendRaw, type RawResponse } from './raw-http.js';
import { startServerPair, type ServerPair } from './server-pair.js';
import { missing, referenceDrf } from '../../helpers/requirements.js';

const drf = referenceDrf();

const goldenCases = loadGoldenCases();
const OPTIONS_BODY = goldenCases.find((c) => c.name === 'options')?.body.toString('utf8') ?? null;

/** The golden rows plus entries that stress JSON rendering differences between Python and JS. */
function stressEntries(): unknown[] {
  const golden = goldenEntries(goldenCases).map((e) => JSON.parse(e) as Record<string, unknown>);
  const base = golden[0] ?? {};
  return [
    ...golden,
    { ...base, name: 'Line\u2028Para\u2029End', post: 'tab\there\u0001\u001f\u007f' },
    { ...base, name: 'Quote "q" back\\slash /slash', post: '<b>&amp;</b>' },
    {
      ...base,
      name: '😀 \ud83d\ude00 ½ ﬁ',
      extra_float: 1.5,
      extra_small: 1e-7,
      extra_big: 1e21,
      extra_neg: -0.00001,
    },
    { ...base, name: '', post: '\u0000\b\f\n\r', nested: { a: [], b: {}, c: [1, 2.25, null, true] } },
    { ...base, name: 'ελληνικά', extra_int: 12345678901234, extra_huge: 1e16, extra_tiny: 0.0001 },
    { ...base, name: 'last', extra_exp: 123456789012345680000, extra_neg_zero: -0 },
  ];
}

function describeAnswer(r: RawResponse, skipBody: boolean): string {
  const body = skipBody ? '<html body not compared>' : r.body.toString('utf8').slice(0, 200);
  return [String(r.status), ...comparedHeaders(r.headers), body].join('\n');
}

function firstDifference(want: Buffer, got: Buffer): string {
  let i = 0;
  while (i < want.length && i < got.length && want[i] === got[i]) i += 1;
  if (i === want.length && i === got.length) return '(bodies equal)';
  const around = (b: Buffer): string =>
    JSON.stringify(b.subarray(Math.max(0, i - 60), i + 60).toString('utf8'));
  return `bodies differ at byte ${i}:\n  DRF:    ${around(want)}\n  mirror: ${around(got)}`;
}

/** DRF's browsable API page: its HTML is not reproduced, only its status and headers. */
function isBrowsable(r: RawResponse): boolean {
  const ct = r.headers.find(([n]) => n.toLowerCase() === 'content-type')?.[1] ?? '';
  return ct.startsWith('text/html') && r.headers.some(([n]) => n.toLowerCase() === 'vary');
}

interface Scenario {
  name: string;
  entries: unknown[];
  pageSize: number;
  optionsBody: string | null;
  trustProxy: boolean;
  requests: RawRequestSpec[];
  /** Every status the scenario must reach, so that a green run keeps proving something. */
  statuses: number[];
}

// Overridable to hunt for differences with more requests: DRF_DIFFERENTIAL_COUNT / _SEED.
const count = Number(process.env.DRF_DIFFERENTIAL_COUNT ?? 600);
const seed = Number(process.env.DRF_DIFFERENTIAL_SEED ?? 20261121);
const ALL = [200, 301, 400, 404, 405, 406, 500];

const scenarios: Scenario[] = [
  {
    name: `${count} seeded requests, 27 entries, page size 8`,
    entries: stressEntries(),
    pageSize: 8,
    optionsBody: null,
    trustProxy: false,
    requests: [...boundaryRequests(), ...generateRequests(count, seed)],
    statuses: ALL,
  },
  {
    name: '200 requests with trusted X-Forwarded-Host/-Proto, 7 entries, page size 3, captured OPTIONS body',
    entries: stressEntries().slice(0, 7),
    pageSize: 3,
    optionsBody: OPTIONS_BODY,
    trustProxy: true,
    requests: generateRequests(200, seed + 1, true),
    statuses: ALL,
  },
  {
    name: '150 requests against an empty listing',
    entries: [],
    pageSize: 8,
    optionsBody: null,
    trustProxy: false,
    requests: generateRequests(150, seed + 2),
    statuses: ALL,
  },
];

describe.skipIf(missing(drf))(
  'differential: respondList vs a real DRF 3.14 + Django 3.2 under gunicorn',
  () => {
    describe.each(scenarios)('$name', (scenario) => {
      let pair: ServerPair | undefined;

      beforeAll(async () => {
        pair = await startServerPair(drf.found ?? 'python3', {
          id: 'differential',
          entries: scenario.entries.map((e) => JSON.stringify(e)),
          pageSize: scenario.pageSize,
          optionsBody: scenario.optionsBody,
          trustProxy: scenario.trustProxy,
        });
      });

      afterAll(() => pair?.close());

      it('answers with the same status, headers and bytes', async () => {
        const mismatches: string[] = [];
        const statuses = new Set<number>();
        for (const spec of scenario.requests) {
          const raw = toRawRequest(spec);
          const isHead = spec.method === 'HEAD';
          const expected = await sendRaw(pair?.referencePort ?? 0, raw, isHead);
          const actual = await sendRaw(pair?.mirrorPort ?? 0, raw, isHead);
          statuses.add(expected.status);
          const skipBody = isBrowsable(expected) && isBrowsable(actual);
          const want = describeAnswer(expected, skipBody);
          const got = describeAnswer(actual, skipBody);
          if (want !== got || (!skipBody && !expected.body.equals(actual.body))) {
            const diff = firstDifference(expected.body, actual.body);
            mismatches.push(
              `${JSON.stringify(spec).slice(0, 600)}\n--- DRF:\n${want}\n--- mirror:\n${got}\n${diff}`,
            );
          }
        }
        expect(mismatches.slice(0, 15).join('\n\n')).toBe('');
        expect(mismatches).toHaveLength(0);
        expect([...statuses].sort()).toEqual(scenario.statuses);
      });
    });
  },
);
