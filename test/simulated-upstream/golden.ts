import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';

export const GOLDEN_DIR = fileURLToPath(new URL('../fixtures/drf-golden', import.meta.url));
export const GOLDEN_HOST = '127.0.0.1:8765';

export interface GoldenExchange {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  readonly body: Buffer;
}

/** Reads one recorded exchange: the response after the marker, CRLF headers, body verbatim. */
export function readGolden(name: string): GoldenExchange {
  const raw = readFileSync(`${GOLDEN_DIR}/${name}.txt`);
  const marker = Buffer.from('==== response ====\n');
  const response = raw.subarray(raw.indexOf(marker) + marker.length);
  const split = response.indexOf('\r\n\r\n');
  const [statusLine = '', ...headerLines] = response.subarray(0, split).toString('utf8').split('\r\n');
  const headers = new Map(
    headerLines.map((line) => {
      const colon = line.indexOf(':');
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const;
    }),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: response.subarray(split + 4) };
}

/** The 21 rows of the golden listing, in order (pages 1, 2 and 3). */
export function goldenEntries(): Record<string, unknown>[] {
  return ['no_page', 'page_2', 'page_3'].flatMap((name) => {
    const page = JSON.parse(readGolden(name).body.toString('utf8')) as { results: Record<string, unknown>[] };
    return page.results;
  });
}
