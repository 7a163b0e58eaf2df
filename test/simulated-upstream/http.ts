import { request } from 'undici';

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
  readonly text: string;
}

/** One raw HTTP exchange through undici: status, headers and the body bytes as sent. */
export async function fetchRaw(
  url: string,
  options: { method?: 'GET' | 'HEAD' | 'OPTIONS' | 'POST' | 'DELETE'; headers?: Record<string, string> } = {},
): Promise<RawAnswer> {
  const response = await request(url, { method: options.method ?? 'GET', headers: options.headers ?? {} });
  const body = Buffer.from(await response.body.arrayBuffer());
  return { status: response.statusCode, headers: response.headers, body, text: body.toString('utf8') };
}

export interface Page {
  count: number;
  next: string | null;
  previous: string | null;
  results: Record<string, unknown>[];
}

export async function fetchPage(url: string): Promise<Page> {
  const answer = await fetchRaw(url);
  if (answer.status !== 200) throw new Error(`${url} answered ${answer.status}: ${answer.text}`);
  return JSON.parse(answer.text) as Page;
}

/** Follows `next` from the first page; returns every page in order. */
export async function walk(listUrl: string, maxPages = 1000): Promise<Page[]> {
  const pages: Page[] = [];
  let url: string | null = listUrl;
  while (url !== null) {
    if (pages.length >= maxPages) throw new Error(`more than ${maxPages} pages`);
    const page: Page = await fetchPage(url);
    pages.push(page);
    url = page.next;
  }
  return pages;
}
