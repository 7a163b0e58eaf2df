import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { Rng, type SimulatedData } from '../../src/simulated-upstream/index.js';
import { deriveSeed } from '../../src/simulated-upstream/prng.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { sqliteCrashDatabase, type CrashDatabase, type CrashStore } from './crash-store.js';
import { spawnChildSync, type ChildLine, type ChildRun } from './sync-child.js';
import {
  changesAfter,
  expectChangesReplayTo,
  expectEventsMatch,
  expectRunCountersMatchChanges,
  expectSoundDatabase,
  expectedEvents,
  recordedEvents,
  runsAfter,
  servedListing,
  type RunRecord,
} from './verify.js';

export interface CampaignOptions {
  seed: number;
  kills: number;
  /** Upstream entries at the start; mutations keep the listing at or below maxCount. */
  initialCount: number;
  maxCount: number;
  /** Upstream latency per request, so the crawl is a window worth aiming at. */
  latencyMs: number;
  /** The store the children sync to: a new SQLite file unless given. */
  database?: CrashDatabase;
}

/** How far the child had got, by the lines the parent had read when it sent SIGKILL. */
export type Stage = 'startup' | 'crawl' | 'after-crawl' | 'commit' | 'after-commit';

export interface KillRecord {
  kill: number;
  plan: string;
  stage: Stage;
  /** The killed run's id, null when it was killed before its run row was committed. */
  runId: number | null;
  /** Whether the killed run's listing is what readers were served after the kill. */
  committed: boolean;
  entries: number;
  mutations: string;
}

type KillPlan =
  | { at: 'spawn'; delayMs: number }
  | { at: 'sync-started'; delayMs: number }
  | { at: 'progress'; fraction: number }
  | { at: 'crawled'; delayMs: number }
  | { at: 'txn'; n: number; delayMs: number }
  | { at: 'txn-end'; n: number }
  | { at: 'done' };

interface Verified {
  /** The run after which `listing` was verified (0: the empty mirror). */
  runId: number;
  listing: string[];
}

/**
 * Kill after kill: change the upstream, start a sync in a child, SIGKILL it at a planned instant,
 * check the file, recover with a sync to completion, check that what was recorded is exactly the
 * upstream's change. Every outcome is asserted; the records say where each kill landed.
 */
export async function runCrashCampaign(options: CampaignOptions): Promise<KillRecord[]> {
  const database = options.database ?? sqliteCrashDatabase();
  const upstream = await simulatedUpstream({ seed: options.seed, count: options.initialCount });
  upstream.faults.set({ latency: options.latencyMs });
  const rng = new Rng(deriveSeed(options.seed, 'crash-campaign'));
  const everSeen = new Set<string>();
  let verified: Verified = { runId: 0, listing: [] };
  const records: KillRecord[] = [];
  const nextPlan = planner(rng);

  for (let kill = 1; kill <= options.kills; kill++) {
    const plan = nextPlan();
    const mutations = mutate(upstream.data, rng, plan.at === 'txn' && rng.chance(0.6), options.maxCount);
    const target = upstream.data.entries().map((entry) => JSON.stringify(entry));

    const child = spawnChildSync(upstream.url, database.arg);
    const stage = await killAsPlanned(child, plan);
    const exit = await child.exited;
    expect(exit, `kill ${kill}: the child ended on its own\n${child.stdout}\n${child.stderr}`).toEqual({
      code: null,
      signal: 'SIGKILL',
    });

    try {
      await database.afterKill(child.pid);
      const store = await database.open();
      try {
        const killed = await checkAfterKill(store, kill, child, verified, target);
        verified = await recoverAndCheck(
          store,
          kill,
          upstream.url,
          child,
          killed,
          verified,
          target,
          everSeen,
        );
        for (const body of target) everSeen.add(String((JSON.parse(body) as { uuid: unknown }).uuid));
        records.push({
          kill,
          plan: describePlan(plan),
          stage,
          runId: killed.run?.id ?? null,
          committed: killed.committed,
          entries: target.length,
          mutations,
        });
      } finally {
        await store.close();
      }
    } catch (error) {
      // Name the kill, so a failure can be told apart and replayed (same seed, same plan order).
      if (error instanceof Error)
        error.message = `kill ${kill} (${describePlan(plan)}, stage ${stage}, [${mutations}]): ${error.message}`;
      throw error;
    }
  }
  return records;
}

interface AfterKill {
  run: RunRecord | undefined;
  committed: boolean;
}

/** Readers see entirely the listing before the run or entirely the run's; the run row agrees. */
async function checkAfterKill(
  store: CrashStore,
  kill: number,
  child: ChildRun,
  verified: Verified,
  target: readonly string[],
): Promise<AfterKill> {
  await expectSoundDatabase(store);
  const served = await servedListing(store);
  const committed = sameListing(served.entries, target);
  const previous = sameListing(served.entries, verified.listing);
  expect(
    committed || previous,
    `kill ${kill}: served listing (run ${served.runId}) is neither the one before the run nor the run's own: ` +
      `${mismatch(served.entries, verified.listing)} vs before; ${mismatch(served.entries, target)} vs upstream`,
  ).toBe(true);
  const newRuns = await runsAfter(store, verified.runId);
  // Only the killed child's run can be new, and only if it got as far as inserting its row.
  expect(newRuns.map((r) => r.holderPid)).toEqual(newRuns.length === 0 ? [] : [child.pid]);
  const run = newRuns[0];
  if (committed) {
    expect({ status: run?.status, served: served.runId }).toEqual({ status: 'succeeded', served: run?.id });
  } else {
    // Opening the store found the killed holder dead and recorded its run as aborted.
    expect(run?.status ?? 'none').toMatch(/^(none|aborted)$/);
    expect(served.runId).toBe(verified.runId);
  }
  return { run, committed };
}

async function recoverAndCheck(
  store: CrashStore,
  kill: number,
  upstreamUrl: string,
  child: ChildRun,
  killed: AfterKill,
  verified: Verified,
  target: readonly string[],
  everSeen: ReadonlySet<string>,
): Promise<Verified> {
  let atStart: RunRecord[] = [];
  const summary = await runSync(syncConfig(upstreamUrl), {
    store: store.store,
    logger: silentLogger(),
    onRunStarted: async () => {
      atStart = await runsAfter(store, verified.runId);
    },
  });

  // Once the next sync has started, the killed run is no longer `running`.
  const expectedAtStart = [
    ...(killed.run
      ? [
          killed.committed
            ? { id: killed.run.id, status: 'succeeded', errorCode: null }
            : { id: killed.run.id, status: 'aborted', errorCode: 'RUN_ABORTED' },
        ]
      : []),
    { id: summary.runId, status: 'running', errorCode: null },
  ];
  expect(atStart.map((r) => ({ id: r.id, status: r.status, errorCode: r.errorCode }))).toEqual(
    expectedAtStart,
  );
  if (killed.run && !killed.committed) {
    expect(atStart[0]?.errorMessage).toContain(`process ${child.pid} `);
  }

  await expectSoundDatabase(store);
  const served = await servedListing(store);
  expect(served.runId).toBe(summary.runId);
  expect(
    sameListing(served.entries, target),
    `kill ${kill}: after recovery, ${mismatch(served.entries, target)}`,
  ).toBe(true);
  const runs = await runsAfter(store, verified.runId);
  expect(runs.map((r) => r.status)).toEqual([
    ...(killed.run ? [killed.committed ? 'succeeded' : 'aborted'] : []),
    'succeeded',
  ]);

  // Exactly the upstream's change since the last verified state, each event recorded once.
  const recorded = await changesAfter(store, verified.runId);
  await expectChangesReplayTo(store, verified.runId, verified.listing, recorded, summary.runId, target);
  expectEventsMatch(expectedEvents(verified.listing, target, everSeen), recordedEvents(recorded));
  expectRunCountersMatchChanges(runs, recorded);
  if (killed.committed) expect(recorded.filter((c) => c.runId === summary.runId)).toEqual([]);
  return { runId: summary.runId, listing: [...target] };
}

// Each cycle of eight kills aims at every kind of instant (the commit twice), in a random order;
// the instant within each kind is random.
const CYCLE = ['spawn', 'sync-started', 'progress', 'crawled', 'txn', 'txn', 'txn-end', 'done'] as const;

function planner(rng: Rng): () => KillPlan {
  let queue: (typeof CYCLE)[number][] = [];
  return () => {
    if (queue.length === 0) queue = rng.shuffle([...CYCLE]);
    return drawPlan(rng, queue.pop() ?? 'done');
  };
}

function drawPlan(rng: Rng, at: (typeof CYCLE)[number]): KillPlan {
  switch (at) {
    case 'spawn':
      return { at, delayMs: 300 + rng.int(900) };
    case 'sync-started':
      return { at, delayMs: rng.int(400) };
    case 'progress':
      return { at, fraction: Math.round(rng.next() * 100) / 100 };
    case 'crawled':
      return { at, delayMs: rng.int(60) };
    case 'txn':
      // Transaction 1 is beginRun's, 2 the run's commit; a 3rd would be a commit in pieces.
      return rng.chance(0.2)
        ? { at, n: 3, delayMs: 0 }
        : { at, n: 2, delayMs: rng.chance(0.6) ? 0 : rng.int(30) };
    case 'txn-end':
      return { at, n: rng.chance(0.3) ? 1 : 2 };
    case 'done':
      return { at };
  }
}

function describePlan(plan: KillPlan): string {
  switch (plan.at) {
    case 'progress':
      return `at ${Math.round(plan.fraction * 100)}% of pages`;
    case 'done':
      return 'after runSync resolved';
    case 'txn':
      // The run opens no 3rd transaction unless its commit comes in pieces: then this is the run's end.
      return plan.n === 3 ? 'at txn 3 began, if any' : `${plan.delayMs} ms after txn ${plan.n} began`;
    case 'txn-end':
      return `right after txn ${plan.n} committed`;
    default:
      return `${plan.delayMs} ms after ${plan.at}`;
  }
}

const isLine =
  (msg: string) =>
  (line: ChildLine): boolean =>
    line.msg === msg;

/** The line to kill on; the end of the run (`done`, `error`) stands in for one that never comes. */
function triggerOf(plan: KillPlan): ((line: ChildLine) => boolean) | null {
  const aimed = aimedLine(plan);
  return aimed && ((line) => aimed(line) || line.marker === 'done' || line.marker === 'error');
}

function aimedLine(plan: KillPlan): ((line: ChildLine) => boolean) | null {
  switch (plan.at) {
    case 'spawn':
      return null;
    case 'sync-started':
      return isLine('sync started');
    case 'progress':
      return (line) =>
        line.marker === 'progress' && (line.done ?? 0) >= Math.ceil(plan.fraction * (line.total ?? 0));
    case 'crawled':
      return (line) => line.marker === 'progress' && line.done === line.total;
    case 'txn':
      return (line) => line.marker === 'txn' && line.n === plan.n;
    case 'txn-end':
      return (line) => line.marker === 'txn-end' && line.n === plan.n;
    case 'done':
      return (line) => line.marker === 'done';
  }
}

async function killAsPlanned(child: ChildRun, plan: KillPlan): Promise<Stage> {
  const trigger = triggerOf(plan);
  if (trigger) {
    const seen = await child.waitFor(trigger);
    if (!seen) return stageOf(child.lines);
  }
  const delayMs = 'delayMs' in plan ? plan.delayMs : 0;
  if (delayMs > 0) await sleep(delayMs);
  const stage = stageOf(child.lines);
  child.kill();
  return stage;
}

function stageOf(lines: readonly ChildLine[]): Stage {
  if (lines.some((l) => isLine('sync succeeded')(l) || (l.marker === 'txn-end' && l.n === 2)))
    return 'after-commit';
  if (lines.some((l) => l.marker === 'txn' && l.n === 2)) return 'commit';
  if (lines.some((l) => l.marker === 'progress' && l.done === l.total)) return 'after-crawl';
  if (lines.some(isLine('sync started'))) return 'crawl';
  return 'startup';
}

/** Every run has changes: edits always, and a random mix of adds, removes, returns, duplicates, reorders. */
function mutate(data: SimulatedData, rng: Rng, heavy: boolean, maxCount: number): string {
  const done: string[] = [];
  const removed = data.removedUuids().length;
  if (removed > 0 && rng.chance(0.5)) {
    const n = 1 + rng.int(Math.min(8, removed));
    data.returnRemoved(n);
    done.push(`return ${n}`);
  }
  const edits = 1 + rng.int(40);
  data.edit(edits);
  done.push(`edit ${edits}`);
  if (rng.chance(0.6)) {
    const n = 1 + rng.int(30);
    data.add(n, rng.pick(['start', 'end', 'random'] as const));
    done.push(`add ${n}`);
  }
  if (rng.chance(0.5)) {
    const n = 1 + rng.int(15);
    data.remove(n);
    done.push(`remove ${n}`);
  }
  if (rng.chance(0.15)) {
    data.duplicate(String(data.at(rng.int(data.count))?.uuid));
    done.push('duplicate 1');
  }
  // A large write transaction, so kills aimed at the commit land inside it.
  if (heavy || rng.chance(0.1)) {
    if (rng.chance(0.5)) {
      data.reorder();
      done.push('reorder');
    } else if (data.count + 1500 <= maxCount) {
      const n = 500 + rng.int(1000);
      data.add(n, 'random');
      done.push(`add ${n}`);
    } else {
      const n = 300 + rng.int(700);
      data.remove(n);
      done.push(`remove ${n}`);
    }
  }
  return done.join(', ');
}

function sameListing(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((entry, i) => entry === b[i]);
}

/** A short account of how two listings differ (a full diff of thousands of entries helps no one). */
function mismatch(got: readonly string[], want: readonly string[]): string {
  const first = got.findIndex((entry, i) => entry !== want[i]);
  const at = first === -1 ? Math.min(got.length, want.length) : first;
  return `${got.length} entries vs ${want.length}, first difference at position ${at}`;
}

/** A table of where the kills landed and what they left, for the test's output. */
export function summarize(records: readonly KillRecord[]): string {
  const rows = records.map(
    (r) =>
      `#${String(r.kill).padStart(3)} ${r.plan.padEnd(30)} stage=${r.stage.padEnd(12)} run=${String(r.runId ?? '-').padEnd(4)} ` +
      `${r.committed ? 'committed' : 'rolled back'} entries=${r.entries} [${r.mutations}]`,
  );
  const tally = new Map<string, number>();
  for (const r of records) {
    const key = `${r.stage}/${r.committed ? 'committed' : 'not committed'}`;
    tally.set(key, (tally.get(key) ?? 0) + 1);
  }
  return [...rows, `kills: ${records.length}; ${[...tally].map(([k, n]) => `${k}: ${n}`).join(', ')}`].join(
    '\n',
  );
}
