import { isIP } from 'node:net';
import { z } from 'zod';
import { parseHeaderLine, parseUpstreamUrl } from './upstream-target.js';
import { parseDuration } from '../time/duration.js';
import { parsePostgresUrl } from './database-url.js';
import { parseWholeNumber, type Parsed } from './text-values.js';
import { webhookEventTypes, type WebhookEventType } from './webhook-events.js';

// The zod schemas of single settings: each turns one variable's text into its value, or says what it
// expects. Each setting of setting-table.ts picks its own from them (through schema-kit.ts).

export const duration = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === null) {
    ctx.addIssue({ code: 'custom', message: 'expected a duration like 30s, 10m, 12h, 7d or milliseconds' });
    return z.NEVER;
  }
  return ms;
});

/** A schema over a plain parser: the parser's problem becomes the issue's message. */
export const fromParser = <T>(parse: (text: string) => Parsed<T>) =>
  z.string().transform((text, ctx): T => {
    const parsed = parse(text);
    if (parsed.ok) return parsed.value;
    ctx.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  });

export const int = (min: number, max: number) => fromParser((text) => parseWholeNumber(text, min, max));

/** DATABASE_URL parsed to its target. */
export const databaseUrl = fromParser(parsePostgresUrl);

/** A share from 0 to 1, written `0.5` or `50%`. */
export const share = z.string().transform((text, ctx) => {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(text);
  const value = match ? Number(match[1]) / (match[2] === '%' ? 100 : 1) : NaN;
  if (!(value >= 0 && value <= 1)) {
    ctx.addIssue({ code: 'custom', message: 'expected a share from 0 to 1, like 0.5 or 50%' });
    return z.NEVER;
  }
  return value;
});

export const bool = z
  .string()
  .regex(/^(1|0|true|false|yes|no|on|off)$/i, 'expected true or false')
  .transform((v) => /^(1|true|yes|on)$/i.test(v));

export const httpUrl = z
  .string()
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), 'expected an absolute http(s) URL')
  .transform((v) => v.replace(/\/+$/, ''));

export { webhookEventTypes, type WebhookEventType } from './webhook-events.js';

const commaList = (text: string): string[] =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

/** Why one WEBHOOK_URLS entry is refused (its text is not quoted: a webhook URL is a credential). */
function webhookUrlProblem(entry: string): string | null {
  const example = 'e.g. https://hooks.example.com/services/…';
  if (!URL.canParse(entry)) return `expected an absolute http(s) URL, ${example}`;
  const { protocol } = new URL(entry);
  if (protocol === 'http:' || protocol === 'https:') return null;
  return `the scheme is ${protocol}, expected https: or http: (${example})`;
}

/** WEBHOOK_URLS: comma-separated http(s) URLs; each refused entry is named by its place alone. */
export const webhookUrlList = z
  .string()
  .nullable()
  .transform((text, ctx) => {
    const urls = text === null ? [] : commaList(text);
    for (const [index, url] of urls.entries()) {
      const problem = webhookUrlProblem(url);
      if (problem === null) continue;
      ctx.addIssue({
        code: 'custom',
        message: problem,
        params: { entry: { index, count: urls.length, text: url } },
      });
    }
    return ctx.issues.length > 0 ? z.NEVER : [...new Set(urls)];
  });

// Standard Webhooks: "whsec_" then the base64 of 24 to 64 random bytes.
export const webhookSecret = z.string().refine((text) => {
  const body = text.replace(/^whsec_/, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body) || body.length % 4 !== 0) return false;
  const bytes = Buffer.from(body, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}, 'expected whsec_ followed by the base64 of 24 to 64 random bytes (e.g. whsec_$(openssl rand -base64 32))');

export const webhookEventList = z.string().transform((text, ctx) => {
  const events = commaList(text);
  const unknown = events.filter((e) => !(webhookEventTypes as readonly string[]).includes(e));
  if (unknown.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `unknown event ${unknown.join(', ')}; expected some of ${webhookEventTypes.join(', ')}`,
    });
    return z.NEVER;
  }
  return [...new Set(events)] as WebhookEventType[];
});

export const durationList = z.string().transform((text, ctx) => {
  const delays = commaList(text).map(parseDuration);
  if (delays.length === 0 || delays.some((d) => d === null)) {
    ctx.addIssue({ code: 'custom', message: 'expected comma-separated durations like 5s,5m,30m,2h' });
    return z.NEVER;
  }
  return delays as number[];
});
/** The URL to crawl, its masked label and the Basic auth its user:password part sends. */
export const upstreamUrl = z.string().transform((text, ctx) => {
  const parsed = parseUpstreamUrl(text);
  if (!parsed.ok) {
    ctx.addIssue({ code: 'custom', message: parsed.problem });
    return z.NEVER;
  }
  return { url: parsed.url, label: parsed.label, basicAuth: parsed.basicAuth };
});

export const headerLine = z
  .string()
  .refine((v) => parseHeaderLine(v) !== null, 'expected one header line like "X-Api-Key: <value>"');

/**
 * `https://a.example, http://b.example:8080` → their origins; a path or a query is refused, each
 * refused entry named by its place. None named (only commas) is null, as unset: no media mirrored.
 */
export const mediaOrigins = z.string().transform((text, ctx) => {
  const parts = commaList(text);
  const origins: string[] = [];
  for (const [index, part] of parts.entries()) {
    const url = URL.canParse(part) ? new URL(part) : null;
    const bare = url && url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '';
    if (!url || !/^https?:$/.test(url.protocol) || !bare || /[/?#]./.test(part.replace(/^\w+:\/\//, ''))) {
      ctx.addIssue({
        code: 'custom',
        message: 'expected an origin like https://media.example.com (no path, query or user)',
        params: { entry: { index, count: parts.length, text: part } },
      });
      continue;
    }
    origins.push(url.origin);
  }
  if (ctx.issues.length > 0) return z.NEVER;
  return origins.length > 0 ? origins : null;
});
function isPeerEntry(entry: string): boolean {
  if (entry === '*') return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  return prefix === undefined || (/^\d+$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
}

export const peerList = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== ''),
  )
  .refine((entries) => entries.every(isPeerEntry), 'expected comma-separated IP addresses, CIDRs or *');

/** A Cache-Control value; `none` sends no header at all. */
export const cacheControl = z.string().transform((v) => (v === 'none' ? null : v));
