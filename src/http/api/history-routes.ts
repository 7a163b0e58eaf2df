import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Store } from '../../db/store.js';
import { listingHorizon } from '../../db/prune.js';
import { changeView, coworkerView, runView, versionView } from '../../views/history-views.js';
import {
  changesQuery,
  pageQuery,
  parseParams,
  runIdParam,
  selfUrl,
  uuidParam,
  type LinkBase,
} from '../../request/params.js';

const DEFAULT_PAGE_SIZE = 50;

interface PageRequest {
  page: number;
  pageSize: number;
}

/** DRF's page-number envelope: count, absolute next/previous, results. */
function pageEnvelope<T>(
  base: LinkBase,
  request: FastifyRequest,
  { page, pageSize }: PageRequest,
  count: number,
  results: T[],
) {
  const size = pageSize === DEFAULT_PAGE_SIZE ? undefined : pageSize;
  const last = Math.max(1, Math.ceil(count / pageSize));
  return {
    count,
    next: page < last ? selfUrl(request, { page: page + 1, page_size: size }, base) : null,
    previous:
      page > 1 ? selfUrl(request, { page: page === 2 ? undefined : page - 1, page_size: size }, base) : null,
    results,
  };
}

function pageOf(query: { page?: number | undefined; page_size?: number | undefined }): PageRequest {
  return { page: query.page ?? 1, pageSize: query.page_size ?? DEFAULT_PAGE_SIZE };
}

const notFound = (detail: string) => ({ detail });

/** The history API under /api/mirror/: runs, coworkers, their history, and the change feed. */
export function registerHistoryRoutes(app: FastifyInstance, store: Store, base: LinkBase): void {
  registerRunRoutes(app, store, base);
  registerCoworkerRoutes(app, store, base);
  registerChangeRoutes(app, store, base);
}

function registerRunRoutes(app: FastifyInstance, store: Store, base: LinkBase): void {
  app.get('/api/mirror/runs/', async (request, reply) => {
    const query = parseParams(pageQuery, request.query, reply);
    if (!query) return reply;
    const p = pageOf(query);
    const runs = await store.listRuns({ limit: p.pageSize, offset: (p.page - 1) * p.pageSize });
    const media = await store.mediaRunsByIds(runs.map((r) => r.id));
    const rows = runs.map((r) => runView(r, media.get(r.id)));
    return pageEnvelope(base, request, p, await store.countRuns(), rows);
  });

  app.get('/api/mirror/runs/:id/', async (request, reply) => {
    const params = parseParams(runIdParam, request.params, reply);
    if (!params) return reply;
    const run = await store.getRun(params.id);
    return run
      ? runView(run, (await store.mediaRunsByIds([run.id])).get(run.id))
      : reply.code(404).send(notFound(`no run ${params.id}`));
  });
}

function registerCoworkerRoutes(app: FastifyInstance, store: Store, base: LinkBase): void {
  app.get('/api/mirror/coworkers/', async (request, reply) => {
    const query = parseParams(pageQuery, request.query, reply);
    if (!query) return reply;
    const p = pageOf(query);
    const latest = await store.latestSucceededRun();
    const rows = await store.listCoworkers({
      limit: p.pageSize,
      offset: (p.page - 1) * p.pageSize,
      includeRemoved: false,
    });
    return pageEnvelope(
      base,
      request,
      p,
      await store.countCoworkers(false),
      rows.map((row) => coworkerView(row, latest)),
    );
  });

  app.get('/api/mirror/coworkers/:uuid/', async (request, reply) => {
    const params = parseParams(uuidParam, request.params, reply);
    if (!params) return reply;
    const row = await store.getCoworker(params.uuid);
    if (!row) return reply.code(404).send(notFound(`no coworker with uuid ${params.uuid}`));
    const latest = await store.latestSucceededRun();
    const appearances = await store.currentVersions(params.uuid);
    return { ...coworkerView(row, latest), appearances: appearances.map(versionView) };
  });

  app.get('/api/mirror/coworkers/:uuid/history/', async (request, reply) => {
    const params = parseParams(uuidParam, request.params, reply);
    if (!params) return reply;
    const history = await store.coworkerHistory(params.uuid);
    if (!history) return reply.code(404).send(notFound(`no coworker with uuid ${params.uuid}`));
    return {
      ...coworkerView(history.coworker, await store.latestSucceededRun()),
      // Only a history prune shortens a kept coworker's history: forgetting others leaves it whole.
      pruned_before: (await store.pruneHorizon()).historyBefore,
      versions: history.versions.map(versionView),
      changes: history.changes.map(changeView),
    };
  });
}

function registerChangeRoutes(app: FastifyInstance, store: Store, base: LinkBase): void {
  // Keyset pages (DRF's cursor envelope: next/previous, no count): a count over millions of
  // changes would cost more than the page itself.
  app.get('/api/mirror/changes/', async (request, reply) => {
    const query = parseParams(changesQuery, request.query, reply);
    if (!query) return reply;
    const pageSize = query.page_size ?? DEFAULT_PAGE_SIZE;
    const { before, page_size: _size, ...filters } = query;
    const rows = await store.listChanges({
      ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)),
      limit: pageSize + 1,
      ...(before !== undefined ? { beforeId: before } : {}),
    });
    const results = rows.slice(0, pageSize).map(changeView);
    const lastId = results.at(-1)?.id;
    return {
      next:
        rows.length > pageSize && lastId !== undefined
          ? selfUrl(request, { ...stringify(filters), before: lastId, page_size: query.page_size }, base)
          : null,
      previous: null,
      // Changes before it are gone (old history, or every change of the coworkers forgotten).
      pruned_before: listingHorizon(await store.pruneHorizon()),
      results,
    };
  });
}

function stringify(values: Record<string, string | number | undefined>): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(values).map(([k, v]) => [k, v === undefined ? undefined : String(v)]),
  );
}
