import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Store } from '../db/store.js';
import { changesQuery, parseParams, selfUrl, type LinkBase } from '../request/params.js';
import { changesCsv } from './change-csv.js';
import { changesAtom } from './feeds.js';
import type { MediaResolver } from './media-source.js';
import { PAGE_HEADERS } from './render.js';

export interface FeedDeps {
  store: Store;
  media: MediaResolver;
  links: LinkBase;
}

/** Feeds answer the newest 50 changes unless `page_size` (≤ 500, as the API) asks otherwise. */
const DEFAULT_FEED_SIZE = 50;

/** A feed opened in a browser runs and loads nothing. */
const FEED_HEADERS = { ...PAGE_HEADERS, 'Content-Security-Policy': "default-src 'none'" };

type FeedQuery = NonNullable<ReturnType<typeof parseParams<typeof changesQuery>>>;

/** The mirror's base URL as this request sees it: PUBLIC_BASE_URL with its path, else the request's origin. */
function baseUrl(request: FastifyRequest, links: LinkBase): string {
  const self = selfUrl(request, {}, links);
  const path = request.url.split('?')[0] ?? '/';
  const base = self.endsWith(path) ? self.slice(0, self.length - path.length) : new URL(self).origin;
  return base.replace(/\/+$/, '');
}

/**
 * `/api/mirror/changes.atom` and `/api/mirror/changes.csv`: the change feed's filters and keyset
 * (`since`, `until`, `uuid`, `field`, `kind`, `before`, `page_size`), parsed by the API's own schema.
 */
export function registerFeedRoutes(app: FastifyInstance, deps: FeedDeps): void {
  const read = async (query: FeedQuery, request: FastifyRequest) => {
    const { before, page_size: size, ...filters } = query;
    const pageSize = size ?? DEFAULT_FEED_SIZE;
    const fetched = await deps.store.listChanges({
      ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)),
      limit: pageSize + 1,
      ...(before !== undefined ? { beforeId: before } : {}),
    });
    const rows = fetched.slice(0, pageSize);
    const last = rows.at(-1);
    // The next page's address rides in a Link header (RFC 8288), as GitHub's paged API does.
    const next =
      fetched.length > pageSize && last
        ? selfUrl(
            request,
            { ...(request.query as Record<string, string>), before: String(last.id) },
            deps.links,
          )
        : null;
    return { rows, subjects: await deps.store.changeSubjects(rows), next };
  };
  const linkHeader = (next: string | null): Record<string, string> =>
    next === null ? {} : { Link: `<${next}>; rel="next"` };

  app.get('/api/mirror/changes.atom', async (request, reply) => {
    const query = parseParams(changesQuery, request.query, reply);
    if (!query) return reply;
    const { rows, subjects, next } = await read(query, request);
    const params = Object.fromEntries(Object.entries(request.query as Record<string, string>));
    const body = changesAtom({
      origin: baseUrl(request, deps.links),
      selfUrl: selfUrl(request, params, deps.links),
      changes: rows,
      subjects,
      media: deps.media,
      now: new Date(),
    });
    return reply
      .headers({ ...FEED_HEADERS, ...linkHeader(next) })
      .type('application/atom+xml; charset=utf-8')
      .send(body);
  });

  app.get('/api/mirror/changes.csv', async (request, reply) => {
    const query = parseParams(changesQuery, request.query, reply);
    if (!query) return reply;
    const { rows, subjects, next } = await read(query, request);
    return reply
      .headers({ ...FEED_HEADERS, ...linkHeader(next) })
      .header('Content-Disposition', 'attachment; filename="changes.csv"')
      .type('text/csv; charset=utf-8; header=present')
      .send(changesCsv(rows, subjects));
  });
}
