import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseHeaderParameters } from '../../../src/drf/media-type.js';
import { missing, referenceDrf } from '../../helpers/requirements.js';

/**
 * `parseHeaderParameters` against DRF 3.14's own `compat.parse_header_parameters` (Django 3.2's
 * multipart `parse_header` underneath), run by the reference site's Python on the same values:
 * media types whose parameters mix quotes, backslashes, `;`, `=`, RFC 2231 `*` names with their
 * charsets and percent escapes, and non-ASCII bytes: where Django's splitting and unquoting have
 * their own rules.
 */

const drf = referenceDrf();

// Header bytes come as latin-1 chars (WSGI's and node's), so \xd9\xa3 is UTF-8's "٣" as sent.
const PIECES = [
  ...['a', 'x', 'indent', 'q', '"', '\\', ';', '=', ' ', '\t', "'", '*', ','],
  ...["*=utf-8''", "*=UTF8''", "*=L1''", "*=latin-1''", "*=ascii''", "*=ANSI_X3.4-1968''"],
  ...['%33', '%e9', '%c3', '%a9', '%', '\xd9\xa3', '\xe9'],
];

/** Deterministic values: a fixed xorshift32 sequence, so a failure names the same value every run. */
function mediaTypes(count: number): string[] {
  let state = 0x2545f491;
  const next = (bound: number): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) % bound;
  };
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    let value = next(2) === 0 ? 'application/json;' : 'text/html; ';
    const length = next(14);
    for (let j = 0; j < length; j += 1) value += PIECES[next(PIECES.length)] ?? '';
    out.push(value);
  }
  return out;
}

/** What DRF makes of each value: its key and parameters (sorted), or that it raised. */
const PYTHON = `
import json, sys
from rest_framework.compat import parse_header_parameters
out = []
for line in json.load(sys.stdin):
    try:
        key, params = parse_header_parameters(line)
        out.append([key, sorted(params.items())])
    except Exception:
        out.append('raises')
json.dump(out, sys.stdout)
`;

function drfParses(python: string, values: readonly string[]): unknown[] {
  const run = spawnSync(python, ['-c', PYTHON], { input: JSON.stringify(values), encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`python failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as unknown[];
}

function mirrorParses(value: string): unknown {
  try {
    const { key, params } = parseHeaderParameters(value);
    return [key, [...params].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))];
  } catch {
    return 'raises';
  }
}

/**
 * Values the mirror once read otherwise: split inside a quoted string (Django 3.2 counts an escaped
 * `"` too), or unquoted whole where Python unquotes only the ASCII runs and its ascii codec replaces.
 */
const NAMED = [
  'application/json; x="a\\"b;c"; indent=2',
  'application/json; x="a\\"b"; indent=2',
  'application/json; x="a\\\\"; indent=2',
  'text/html; q="\\";x=1"',
  "application/json; indent*=utf-8''%33\xd9\xa3",
  "application/json; indent*=ascii''%33%e9",
];

describe.skipIf(missing(drf))("media type parameters are split and unquoted as DRF's parser does", () => {
  const values = [...NAMED, ...mediaTypes(20_000)];
  let expected: unknown[] = [];

  // One Python for every value: importing DRF takes most of its run.
  beforeAll(() => {
    expected = drfParses(drf.found ?? 'python3', values);
  });

  it.each(NAMED.map((value, i) => [value, i] as const))('agrees on %j', (value, i) => {
    expect(mirrorParses(value)).toEqual(expected[i]);
  });

  it('agrees on 20,000 generated values', () => {
    const differing = values
      .map((value, i) => ({ value, drf: expected[i], mirror: mirrorParses(value) }))
      .filter((row) => JSON.stringify(row.drf) !== JSON.stringify(row.mirror));
    expect(differing.slice(0, 5)).toEqual([]);
  });
});
