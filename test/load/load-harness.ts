import { createHash } from 'node:crypto';
import { Pool } from 'undici';
import type { MirrorDatabase } from '../../src/db/open.js';
import type { Store } from '../../src/db/store.js';
import { respondList, type DrfOptions } from '../../src/drf/respond.js';
import { prepareSnapshot } from '../../src/drf/snapshot.js';
import type { SimulatedData } from '../../src/simulated-upstream/index.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { defaultServerConfig, startMirror } from '../helpers/mirror-server.js';
import { WAIT_MS } from '../helpers/patience.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

// The issue: "autocannon at 64 connections on the list endpoint while ten syncs with changes commit:
// zero errors, zero non-200 answers, and every body equals the corresponding page of one of the
// snapshots (never a mix)". The load is undici's Pool with 64 connections, 64 requests always in
// flight, rather than autocannon: autocannon hands a body over as a string decoded chunk by chunk,
// so a multi-byte character split between two socket reads (the simulated names are not ASCII)
// would arrive as U+FFFD and fail the comparison for the wrong reason.

export interface LoadPlan {
  seed: number;
  entries: number;
  syncs: number;
  connections: number;
  /**
   * Responses completed after each swap before the next change. More than `connections`, so some
   * requests were sent after the swap: every snapshot is served, whatever the scheduling.
   */
  responsesPerSnapshot: number;
}

/** What went wrong, each list empty on success; `expect(outcome.problems).toEqual(NO_PROBLEMS)`. */
export interface LoadProblems {
  errors: string[];
  timeouts: number;
  non2xx: string[];
  /** Bodies that are no snapshot's page at that URL: a mix, or something else entirely. */
  unknownBodies: string[];
  /** Bodies of a snapshot older than the one held when the request was sent, or newer than at receipt. */
  outOfOrder: string[];
  /** Syncs whose snapshot served the same bytes as the previous one on every path asked for. */
  invisibleSwaps: number[];
  /** Paths whose body, fetched once with no load after the last sync, is not the expected one. */
  quietCheck: string[];
  notes: string[];
}

export const NO_PROBLEMS: LoadProblems = {
  errors: [],
  timeouts: 0,
  non2xx: [],
  unknownBodies: [],
  outOfOrder: [],
  invisibleSwaps: [],
  quietCheck: [],
  notes: [],
};

export interface LoadOutcome {
  snapshots: number;
  responses: number;
  distinctBodies: number;
  problems: LoadProblems;
}

interface Response {
  path: string;
  status: number;
  hash: string;
  /** Run id of the snapshot the mirror held when the request was sent, and when it was answered. */
  heldAtSend: number;
  heldAtReceipt: number;
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);
// A hang detector, not a deadline: 64 connections on two loaded cores can keep one waiting long.
const REQUEST_TIMEOUT_MS = WAIT_MS;
const SAMPLE_LIMIT = 5;

/** Changes made upstream before each sync, in turn; each changes at least one page. */
const MUTATIONS: readonly ((data: SimulatedData) => void)[] = [
  (data) => void data.edit(5),
  (data) => {
    data.add(2, 'start');
    data.edit(3);
  },
  (data) => {
    data.remove(2);
    data.edit(2);
  },
  (data) => void data.reorder(),
  (data) => {
    data.returnRemoved(1);
    data.edit(4);
  },
];

const sha1 = (bytes: Buffer): string => createHash('sha1').update(bytes).digest('hex');

/**
 * Every page but the last two (adds and removes move the count by a few), plus the bare list URL
 * and `?page=last`, whose links differ from the numbered pages'.
 */
function listPaths(entries: number): string[] {
  const pages = Math.ceil(entries / 8);
  const numbered = Array.from({ length: Math.max(1, pages - 2) }, (_, i) => `${LIST_PATH}?page=${i + 1}`);
  return [LIST_PATH, `${LIST_PATH}?page=last`, ...numbered];
}

/** 64 workers over one Pool, each sending its next request as soon as the previous one is answered. */
class Load {
  readonly responses: Response[] = [];
  readonly bodies = new Map<string, Buffer>();
  readonly problems = { errors: [] as string[], errorCount: 0, timeouts: 0 };
  #sent = 0;
  #completed = 0;
  #stopping = false;
  #waiters: { target: number; resolve: () => void }[] = [];
  readonly #workers: Promise<void>[];

  constructor(
    private readonly pool: Pool,
    private readonly paths: readonly string[],
    private readonly held: () => number,
    connections: number,
    private readonly maxRequests: number,
  ) {
    this.#workers = Array.from({ length: connections }, () => this.#work());
  }

  get completed(): number {
    return this.#completed;
  }

  get exhausted(): boolean {
    return this.#sent >= this.maxRequests;
  }

  /** Resolves once `n` responses (or errors) are in, or when the request budget is spent. */
  completedAtLeast(n: number): Promise<void> {
    if (this.#completed >= n || this.exhausted) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ target: n, resolve }));
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await Promise.all(this.#workers);
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
  }

  async #work(): Promise<void> {
    while (!this.#stopping && this.#sent < this.maxRequests) {
      const path = this.paths[this.#sent % this.paths.length] ?? LIST_PATH;
      this.#sent += 1;
      await this.#fetch(path);
      this.#completed += 1;
      this.#waiters = this.#waiters.filter((w) => {
        const done = this.#completed >= w.target || this.exhausted;
        if (done) w.resolve();
        return !done;
      });
    }
  }

  async #fetch(path: string): Promise<void> {
    const heldAtSend = this.held();
    try {
      const { statusCode, body } = await this.pool.request({ method: 'GET', path });
      const bytes = Buffer.from(await body.arrayBuffer());
      const hash = sha1(bytes);
      if (!this.bodies.has(hash)) this.bodies.set(hash, bytes);
      this.responses.push({ path, status: statusCode, hash, heldAtSend, heldAtReceipt: this.held() });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && TIMEOUT_CODES.has(code)) this.problems.timeouts += 1;
      else {
        this.problems.errorCount += 1;
        if (this.problems.errors.length < SAMPLE_LIMIT)
          this.problems.errors.push(`${path}: ${String(error)}`);
      }
    }
  }
}

/**
 * The body of every path in every succeeded run's snapshot, by run id, built from the database the
 * way the server builds its snapshots and answered for a request like the load's (same Host).
 */
async function expectedBodies(
  store: MirrorDatabase & Store,
  paths: readonly string[],
  host: string,
): Promise<Map<number, Map<string, Buffer>>> {
  const options: DrfOptions = {
    trustProxyHeaders: defaultServerConfig.trustProxy,
    publicBaseUrl: defaultServerConfig.publicBaseUrl,
    cacheControl: defaultServerConfig.cacheControl,
  };
  const runs = (await store.listRuns({ limit: 100_000 }))
    .filter((run) => run.status === 'succeeded')
    .sort((a, b) => a.id - b.id);
  const byRun = new Map<number, Map<string, Buffer>>();
  for (const run of runs) {
    const listing = await store.listingAt(run);
    const snapshot = prepareSnapshot({
      id: String(run.id),
      entries: listing.entries,
      pageSize: run.pageSize ?? 8,
      optionsBody: listing.optionsBody,
      fetchedAt: new Date(run.finishedAt ?? run.startedAt),
    });
    const pages = new Map<string, Buffer>();
    for (const path of paths) {
      pages.set(
        path,
        Buffer.concat(respondList({ method: 'GET', url: path, headers: { host } }, snapshot, options).body),
      );
    }
    byRun.set(run.id, pages);
  }
  return byRun;
}

function sample(path: string, body: Buffer | undefined): string {
  return `${path}: ${JSON.stringify((body ?? Buffer.alloc(0)).toString('utf8').slice(0, 160))}`;
}

/** Checks every response against the snapshots: a known page, of a snapshot within its window. */
function judge(load: Load, expected: Map<number, Map<string, Buffer>>, problems: LoadProblems): void {
  // path → body hash → ids of the runs whose page at that path has these bytes
  const runsByBody = new Map<string, Map<string, number[]>>();
  for (const [runId, pages] of expected) {
    for (const [path, body] of pages) {
      const byHash = runsByBody.get(path) ?? new Map<string, number[]>();
      runsByBody.set(path, byHash);
      const hash = sha1(body);
      byHash.set(hash, [...(byHash.get(hash) ?? []), runId]);
    }
  }
  const push = (list: string[], text: string) => void (list.length < SAMPLE_LIMIT && list.push(text));
  let non2xx = 0;
  let unknown = 0;
  let outOfOrder = 0;
  for (const r of load.responses) {
    if (r.status < 200 || r.status > 299) {
      non2xx += 1;
      push(problems.non2xx, `${r.status} ${sample(r.path, load.bodies.get(r.hash))}`);
      continue;
    }
    const runs = runsByBody.get(r.path)?.get(r.hash);
    if (runs === undefined) {
      unknown += 1;
      push(problems.unknownBodies, sample(r.path, load.bodies.get(r.hash)));
    } else if (!runs.some((id) => id >= r.heldAtSend && id <= r.heldAtReceipt)) {
      outOfOrder += 1;
      push(
        problems.outOfOrder,
        `${r.path}: body of run ${runs.join('/')}, held ${r.heldAtSend}..${r.heldAtReceipt}`,
      );
    }
  }
  const counts = { non2xx, unknown, outOfOrder };
  for (const [name, n] of Object.entries(counts))
    if (n > SAMPLE_LIMIT) problems.notes.push(`${n} ${name} in all`);
}

function invisibleSwaps(expected: Map<number, Map<string, Buffer>>, paths: readonly string[]): number[] {
  const runs = [...expected.values()];
  const invisible: number[] = [];
  for (let i = 1; i < runs.length; i++) {
    const [before, after] = [runs[i - 1], runs[i]];
    if (paths.every((path) => before?.get(path)?.equals(after?.get(path) ?? Buffer.alloc(0))))
      invisible.push(i);
  }
  return invisible;
}

/** After the load: one request per path, alone, must match the last snapshot exactly. */
async function quietCheck(
  pool: Pool,
  paths: readonly string[],
  last: Map<string, Buffer> | undefined,
): Promise<string[]> {
  const wrong: string[] = [];
  for (const path of paths) {
    const { statusCode, body } = await pool.request({ method: 'GET', path });
    const bytes = Buffer.from(await body.arrayBuffer());
    if (statusCode !== 200 || !last?.get(path)?.equals(bytes))
      wrong.push(`${statusCode} ${sample(path, bytes)}`);
  }
  return wrong;
}

/**
 * A mirror over a temp db and a simulated upstream; the load runs from the first snapshot to the
 * last while `plan.syncs` syncs, each after a change upstream, commit and are swapped in.
 */
export async function runLoadDuringSyncs(plan: LoadPlan): Promise<LoadOutcome> {
  const store = tempDatabase();
  const upstream = await simulatedUpstream({ seed: plan.seed, count: plan.entries });
  await sync(store, upstream);
  const mirror = await startMirror(store);
  const paths = listPaths(plan.entries);
  const held = () => mirror.snapshots.info?.runId ?? 0;
  const pool = new Pool(mirror.url, {
    connections: plan.connections,
    pipelining: 1,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  // A budget well past what the plan needs, so a stuck sync cannot make the load run forever.
  const budget = (plan.syncs + 1) * plan.responsesPerSnapshot * 4;
  const load = new Load(pool, paths, held, plan.connections, budget);
  const problems: LoadProblems = structuredClone(NO_PROBLEMS);
  try {
    await load.completedAtLeast(plan.responsesPerSnapshot);
    for (let i = 0; i < plan.syncs; i++) {
      MUTATIONS[i % MUTATIONS.length]?.(upstream.data);
      await sync(store, upstream);
      await mirror.snapshots.refresh();
      await load.completedAtLeast(load.completed + plan.responsesPerSnapshot);
    }
    if (load.exhausted)
      problems.notes.push(`the load spent its budget of ${budget} requests before the last sync`);
    await load.stop();
    const host = new URL(mirror.url).host;
    const expected = await expectedBodies(store, paths, host);
    judge(load, expected, problems);
    problems.errors.push(...load.problems.errors);
    if (load.problems.errorCount > SAMPLE_LIMIT)
      problems.notes.push(`${load.problems.errorCount} errors in all`);
    problems.timeouts = load.problems.timeouts;
    problems.invisibleSwaps = invisibleSwaps(expected, paths);
    problems.quietCheck = await quietCheck(pool, paths, [...expected.values()].at(-1));
    return {
      snapshots: expected.size,
      responses: load.responses.length,
      distinctBodies: load.bodies.size,
      problems,
    };
  } finally {
    await load.stop();
    await pool.close();
  }
}
