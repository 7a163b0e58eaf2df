import type { FastifyReply } from 'fastify';
import { h, type ComponentChild } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { policyOrigin, type MediaResolver } from './media-source.js';
import { PageContextValue, type PageContext } from './page-context.js';
import { configuredTimeZone } from './time-zone.js';

/**
 * The Content-Security-Policy of a page: nothing inline, scripts and styles from the mirror only,
 * images from the mirror and from exactly the origins of the images this page shows.
 */
export function contentSecurityPolicy(imageOrigins: Iterable<string>): string {
  // Each origin is parsed again and rebuilt from its parts: a source list is never given text as it came.
  const sources = new Set([...imageOrigins].map(policyOrigin).filter((o) => o !== null));
  const images = ["'self'", ...[...sources].sort()].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${images}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers every page and feed carries, besides its CSP. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'X-Frame-Options': 'DENY',
  'X-Content-Type-Options': 'nosniff',
  // Thumbnails load from the upstream's media host: it need not learn the mirror's page addresses.
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-cache',
};

export interface PageDeps {
  media: MediaResolver;
  now?: () => Date;
  /** True in the demo (invented data): every page then says so. */
  demo?: () => boolean;
  /** The zone of every time on the pages; the configured `TZ` (the process's zone) by default. */
  timeZone?: string;
}

/** Renders a page tree (escaped by construction) and sends it with its headers. */
export function sendPage(
  reply: FastifyReply,
  deps: PageDeps,
  page: ComponentChild,
  status = 200,
): FastifyReply {
  const context: PageContext = {
    now: deps.now?.() ?? new Date(),
    media: deps.media,
    imageOrigins: new Set(),
    demo: deps.demo?.() ?? false,
    timeZone: deps.timeZone ?? configuredTimeZone(),
  };
  const html = '<!DOCTYPE html>\n' + renderToString(h(PageContextValue.Provider, { value: context }, page));
  return reply
    .code(status)
    .headers({ ...PAGE_HEADERS, 'Content-Security-Policy': contentSecurityPolicy(context.imageOrigins) })
    .type('text/html; charset=utf-8')
    .send(html);
}
