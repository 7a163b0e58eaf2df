import { fileURLToPath } from 'node:url';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One raw exchange of test/fixtures/drf-golden (see its README for the file format). */
export interface GoldenCase {
  name: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  status: number;
  responseHeaders: [string, string][];
  body: Buffer;
}

// The DRF captures live in the repository: tests never read anything beside the checkout.
export const GOLDEN_DIR = fileURLToPath(new URL('../fixtures/drf-golden', import.meta.url));

export function loadGoldenCases(dir = GOLDEN_DIR): GoldenCase[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.txt'))
    .sort()
    .map((f) => parseGolden(f.replace(/\.txt$/, ''), readFileSync(join(dir, f))));
}

function parseGolden(name: string, file: Buffer): GoldenCase {
  const text = file.toString('latin1');
  const reqStart = text.indexOf('==== request ====\n') + '==== request ====\n'.length;
  const reqEnd = text.indexOf('\n==== response ====\n');
  const resStart = reqEnd + '\n==== response ====\n'.length;
  const request = text.slice(reqStart, reqEnd);
  const [reqHead = ''] = request.split('\r\n\r\n');
  const [requestLine = '', ...reqLines] = reqHead.split('\r\n');
  const [method = '', url = ''] = requestLine.split(' ');
  const headers: Record<string, string> = {};
  for (const line of reqLines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  const response = text.slice(resStart);
  const headEnd = response.indexOf('\r\n\r\n');
  const [statusLine = '', ...resLines] = response.slice(0, headEnd).split('\r\n');
  const responseHeaders = resLines.map((line): [string, string] => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).trim()];
  });
  return {
    name,
    method,
    url,
    headers,
    status: Number(statusLine.split(' ')[1]),
    responseHeaders,
    body: Buffer.from(response.slice(headEnd + 4), 'latin1'),
  };
}

/** The 21 rows of the golden site, in order, as the sync would store them. */
export function goldenEntries(cases: readonly GoldenCase[]): string[] {
  const entries: string[] = [];
  for (const name of ['no_page', 'page_2', 'page_3']) {
    const found = cases.find((c) => c.name === name);
    if (!found) throw new Error(`golden case ${name} missing`);
    const page = JSON.parse(found.body.toString('utf8')) as { results: unknown[] };
    entries.push(...page.results.map((e) => JSON.stringify(e)));
  }
  return entries;
}

/** The headers a DRF client relies on, by lower-cased name, in order (a cookie Django sets included). */
export const COMPARED_HEADERS = [
  'content-type',
  'vary',
  'allow',
  'location',
  'set-cookie',
  'x-frame-options',
  'x-content-type-options',
  'referrer-policy',
];

export function comparedHeaders(headers: readonly [string, string][]): string[] {
  return headers
    .filter(([n]) => COMPARED_HEADERS.includes(n.toLowerCase()))
    .map(([n, v]) => `${n.toLowerCase()}: ${v}`);
}

/** The host the golden exchanges were asked on. */
export const GOLDEN_HOST = '127.0.0.1:8765';

/** One golden case by name (the file name without `.txt`). */
export function goldenCase(name: string, cases: readonly GoldenCase[] = loadGoldenCases()): GoldenCase {
  const found = cases.find((c) => c.name === name);
  if (!found) throw new Error(`golden case ${name} missing`);
  return found;
}
