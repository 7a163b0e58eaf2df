import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { h } from 'preact';
import type { z } from 'zod';
import type { Store } from '../db/store.js';
import { runView } from '../views/history-views.js';
import { listingHorizon } from '../db/prune.js';
import { prunedListingDetail } from '../views/pruned-words.js';
import { DirectoryCache } from './directory-cache.js';
import {
  changesPageQuery,
  coworkersPageQuery,
  parsePageParams,
  runPathParam,
  runsPageQuery,
  teamPageQuery,
  uuidPathParam,
} from './page-params.js';
import { ChangesPage } from './pages/changes-page.js';
import { CoworkerPage, MAX_VERSIONS } from './pages/coworker-page.js';
import { CoworkersPage } from './pages/coworkers-page.js';
import { ErrorPage } from './pages/error-page.js';
import { RunPage, RunsPage } from './pages/runs-page.js';
import { StatusPage, type StatusData } from './pages/status-page.js';
import { FAILED_MEDIA_NAMED, type RunMedia } from './pages/run-media.js';
import { TeamPage } from './pages/team-page.js';
import { configuredTimeZone, localInputValue } from './time-zone.js';
import { sendPage, type PageDeps } from './render.js';
import type { StatusSource } from './status-source.js';
import type { Logger } from '../logger.js';
import { entryOf } from './pages/card.js';
import type { DeliveryStatus } from '../db/schema.js';
import { disabledTargetViews } from '../notify/disabled-targets.js';
import type { NotifyTarget } from '../notify/targets.js';

/** At most this many coworkers in one name filter of the timeline: more is not a filter. */
const MAX_FILTER_UUIDS = 200;

export interface WebPageDeps extends PageDeps {
  store: Store;
  logger: Logger;
  status: StatusSource | null;
  /** The snapshot the list endpoint serves right now. */
  served: () => { runId: number; entries: number; fetchedAt: Date } | null;
  staleAfterMs: number;
  /** The NOTIFY_URLS targets, to name the disabled ones by their masked labels. */
  notifyTargets?: readonly NotifyTarget[];
  /** What keeps mirrored media files from being served, or null; the status page says it. */
  mediaProblem?: () => string | null;
}

const TIMELINE_PAGE = 50;
const LIST_PAGE = 50;
const TEAM_PAGE = 48;
const RUNS_PAGE = 50;
/** Fields offered in the timeline's filter: the contract's, whatever the data holds. */
const CONTRACT_FIELDS = ['name', 'post', 'emoji_file', 'emoji_file_webm', 'show_image', 'images'];

/** `path?query` keeping `query`'s non-empty values and replacing some. */
function hrefWith(
  path: string,
  query: Record<string, string>,
  changes: Record<string, string | undefined>,
): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...query, ...changes }))
    if (v !== undefined && v !== '') params.set(k, v);
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

function stringQuery(raw: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries((raw ?? {}) as Record<string, unknown>))
    if (typeof v === 'string') out[k] = v;
  return out;
}

function parseOrAnswer<S extends z.ZodType>(
  deps: WebPageDeps,
  reply: FastifyReply,
  schema: S,
  raw: unknown,
): z.output<S> | null {
  const parsed = parsePageParams(schema, raw);
  if (parsed.ok) return parsed.value;
  sendPage(
    reply,
    deps,
    h(ErrorPage, {
      title: 'That address has a mistake',
      message: `The parameter “${parsed.parameter}” is not right: ${parsed.problem}.`,
    }),
    400,
  );
  return null;
}

function notFound(deps: WebPageDeps, reply: FastifyReply, message: string): FastifyReply {
  return sendPage(reply, deps, h(ErrorPage, { title: 'Not found', message }), 404);
}

async function deliveriesOf(store: Store): Promise<StatusData['deliveries']> {
  const { byStatus, disabledEndpoints } = await store.deliveryFigures();
  if (byStatus.size === 0) return null;
  const n = (status: DeliveryStatus) => byStatus.get(status) ?? 0;
  return { pending: n('pending'), succeeded: n('succeeded'), failed: n('failed'), disabledEndpoints };
}

/** A run's media figures and the first of its failed files; null when the run mirrored none. */
async function runMediaOf(store: Store, runId: number | null): Promise<RunMedia | null> {
  if (runId === null) return null;
  const counts = (await store.mediaRunsByIds([runId])).get(runId);
  if (counts === undefined) return null;
  const failures =
    counts.failed > 0 ? await store.mediaFailuresOf(runId, FAILED_MEDIA_NAMED) : { byCode: [], first: [] };
  return { runId, counts, failures };
}

function statusPage(deps: WebPageDeps) {
  return async (_request: FastifyRequest, reply: FastifyReply) => {
    const { store } = deps;
    const latestChanges = await store.listChanges({ limit: 10 });
    const [latestRun] = await store.listRuns({ limit: 1 });
    const subjects = await store.changeSubjects(latestChanges);
    const deliveries = await deliveriesOf(store);
    const disabledTargets = disabledTargetViews(
      await store.disabledNotifyTargets(),
      deps.notifyTargets ?? null,
      store.endpointKeys,
    );
    const served = deps.served();
    // A failed run commits no media: the files served are those of the last run that succeeded.
    const media = await runMediaOf(
      store,
      latestRun?.status === 'succeeded' ? latestRun.id : (served?.runId ?? null),
    );
    return sendPage(
      reply,
      deps,
      h(StatusPage, {
        status: deps.status,
        latestRun,
        served,
        staleAfterMs: deps.staleAfterMs,
        latestChanges,
        subjects,
        deliveries,
        disabledTargets,
        mediaProblem: deps.mediaProblem?.() ?? null,
        media,
      }),
    );
  };
}

function changesPage(deps: WebPageDeps, directory: DirectoryCache) {
  const schema = changesPageQuery(deps.timeZone ?? configuredTimeZone());
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const query = parseOrAnswer(deps, reply, schema, request.query);
    if (!query) return reply;
    let uuids: string[] | undefined;
    let nameMatches: number | null = null;
    if (query.uuid !== undefined) uuids = [query.uuid];
    if (query.name !== undefined) {
      const named = await directory.uuidsByName(query.name);
      if (named.length > MAX_FILTER_UUIDS) nameMatches = named.length;
      uuids = uuids ? uuids.filter((u) => named.includes(u)) : named.slice(0, MAX_FILTER_UUIDS);
    }
    const rows = await deps.store.listChanges({
      since: query.from,
      until: query.to,
      uuids: uuids?.slice(0, MAX_FILTER_UUIDS),
      field: query.field,
      kind: query.kind,
      beforeId: query.before,
      limit: TIMELINE_PAGE + 1,
    });
    const shown = rows.slice(0, TIMELINE_PAGE);
    const form = stringQuery(request.query);
    const last = shown.at(-1);
    const subjects = await deps.store.changeSubjects(shown);
    return sendPage(
      reply,
      deps,
      h(ChangesPage, {
        query,
        form,
        changes: shown,
        subjects,
        fields: [...new Set([...CONTRACT_FIELDS, ...(query.field ? [query.field] : [])])],
        olderHref:
          rows.length > TIMELINE_PAGE && last
            ? hrefWith('/changes/', form, { before: String(last.id) })
            : null,
        newestHref: query.before !== undefined ? hrefWith('/changes/', form, { before: undefined }) : null,
        nameMatches,
        pruned: await deps.store.pruneHorizon(),
      }),
    );
  };
}

function coworkersPage(deps: WebPageDeps, directory: DirectoryCache) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const query = parseOrAnswer(deps, reply, coworkersPageQuery, request.query);
    if (!query) return reply;
    const status = query.status ?? 'present';
    const matches = await directory.search(query.q ?? '', status);
    const page = query.page ?? 1;
    const form = stringQuery(request.query);
    return sendPage(
      reply,
      deps,
      h(CoworkersPage, {
        q: query.q ?? '',
        status,
        rows: matches.slice((page - 1) * LIST_PAGE, page * LIST_PAGE),
        asOfRun: directory.runId,
        total: matches.length,
        page,
        pageSize: LIST_PAGE,
        href: (p: number) => hrefWith('/coworkers/', form, { page: p === 1 ? undefined : String(p) }),
      }),
    );
  };
}

function coworkerPage(deps: WebPageDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const params = parseOrAnswer(deps, reply, uuidPathParam, request.params);
    if (!params) return reply;
    const history = await deps.store.coworkerHistory(params.uuid);
    if (!history) return notFound(deps, reply, `No coworker with uuid ${params.uuid} was ever mirrored.`);
    const versions = history.versions.slice(-MAX_VERSIONS).reverse();
    const current = await deps.store.currentVersions(params.uuid);
    const latest = versions[0];
    const name = entryOf(current[0]?.body ?? latest?.body ?? '{}').name;
    const runIds = versions.flatMap((v) =>
      v.validToRun === null ? [v.validFromRun] : [v.validFromRun, v.validToRun],
    );
    const runTimes = await deps.store.runFinishTimes(runIds);
    return sendPage(
      reply,
      deps,
      h(CoworkerPage, {
        coworker: history.coworker,
        current,
        versions,
        totalVersions: history.versions.length,
        changes: history.changes,
        runTimes,
        title: typeof name === 'string' && name.trim() !== '' ? name.slice(0, 200) : params.uuid,
        pruned: { historyBefore: (await deps.store.pruneHorizon()).historyBefore, removedBefore: null },
      }),
    );
  };
}

function teamPage(deps: WebPageDeps) {
  const timeZone = deps.timeZone ?? configuredTimeZone();
  const schema = teamPageQuery(timeZone);
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const query = parseOrAnswer(deps, reply, schema, request.query);
    if (!query) return reply;
    const run =
      query.run !== undefined
        ? await deps.store.getRun(query.run)
        : await deps.store.latestSucceededRun(query.as_of);
    if (query.run !== undefined && run?.status !== 'succeeded') {
      return notFound(
        deps,
        reply,
        `Run ${query.run} stored no listing (it does not exist or did not succeed).`,
      );
    }
    const pruned = await deps.store.pruneHorizon();
    const horizon = listingHorizon(pruned);
    if (run?.finishedAt && horizon !== null && run.finishedAt < horizon) {
      // Shown without the forgotten coworkers or the pruned history, it would not be the team then.
      const at = query.as_of ?? run.finishedAt;
      return sendPage(
        reply,
        deps,
        h(ErrorPage, { title: 'No longer kept', message: prunedListingDetail(at, pruned) }),
        410,
      );
    }
    const page = query.page ?? 1;
    const form = stringQuery(request.query);
    const entries = run ? await deps.store.listingPage(run.id, (page - 1) * TEAM_PAGE, TEAM_PAGE) : [];
    const runChoices = await deps.store.succeededRunTimes(200);
    return sendPage(
      reply,
      deps,
      h(TeamPage, {
        run,
        asOf: query.as_of,
        // The asked moment as the picker shows it, so it keeps its value after `?as_of=`.
        asOfInput: query.as_of === undefined ? '' : localInputValue(query.as_of, timeZone),
        entries,
        total: run?.entries ?? 0,
        page,
        pageSize: TEAM_PAGE,
        runChoices,
        href: (p: number) => hrefWith('/team/', form, { page: p === 1 ? undefined : String(p) }),
      }),
    );
  };
}

function runsPage(deps: WebPageDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const query = parseOrAnswer(deps, reply, runsPageQuery, request.query);
    if (!query) return reply;
    const page = query.page ?? 1;
    const runs = await deps.store.listRuns({ limit: RUNS_PAGE, offset: (page - 1) * RUNS_PAGE });
    const total = await deps.store.countRuns();
    const media = await deps.store.mediaRunsByIds(runs.map((run) => run.id));
    return sendPage(
      reply,
      deps,
      h(RunsPage, {
        runs,
        media,
        total,
        page,
        pageSize: RUNS_PAGE,
        href: (p: number) => (p === 1 ? '/runs/' : `/runs/?page=${p}`),
      }),
    );
  };
}

function runPage(deps: WebPageDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const params = parseOrAnswer(deps, reply, runPathParam, request.params);
    if (!params) return reply;
    const run = await deps.store.getRun(params.id);
    if (!run) return notFound(deps, reply, `There is no run ${params.id}.`);
    const media = await runMediaOf(deps.store, run.id);
    return sendPage(reply, deps, h(RunPage, { run, unknownFields: runView(run).unknown_fields, media }));
  };
}

/** The people-facing pages: status, timeline, coworkers, the team as it was, runs. */
export function registerPageRoutes(app: FastifyInstance, deps: WebPageDeps): void {
  const directory = new DirectoryCache(deps.store, ({ runId, error }) =>
    deps.logger.error({ err: error, runId }, 'coworker directory rebuild failed; the previous one is kept'),
  );
  // Built once the server listens, never before it answers: /healthz and the list endpoint need none of
  // it. `inject()` tests, which never listen, build it at the first page that asks.
  app.addHook('onListen', (done) => {
    directory.warm();
    done();
  });
  app.get('/', statusPage(deps));
  app.get('/changes/', changesPage(deps, directory));
  app.get('/coworkers/', coworkersPage(deps, directory));
  app.get('/coworkers/:uuid/', coworkerPage(deps));
  app.get('/team/', teamPage(deps));
  app.get('/runs/', runsPage(deps));
  app.get('/runs/:id/', runPage(deps));
}
