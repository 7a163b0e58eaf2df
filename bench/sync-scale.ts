/**
 * Sync at scale: `--entries` coworkers (default 100,000: 12,500 pages of 8) from a simulated upstream
 * with no latency, concurrency 4. Each phase runs in its own process (so peak RSS is per phase)
 * against the upstream held by this one: (a) crawl only, the baseline; (b) first sync into an empty
 * database; (c) a sync after 1 % of entries were edited; (d) an unchanged sync. The sequence runs
 * `--rounds` times on fresh databases; times are the best round (other load only ever adds time),
 * RSS the worst.
 *
 *   npx tsx bench/sync-scale.ts [--entries 100000] [--rounds 2] [--cpu-prof-dir DIR]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startSimulatedUpstream, type SimulatedUpstream } from '../src/simulated-upstream/index.js';
import { describeOutcome, runScript } from './lib/child.js';
import { crawlListing } from './lib/client.js';
import { checkGoal, machineLine, megabytes, perSecond, ratio, seconds } from './lib/report.js';
import { benchSyncSettings } from './lib/settings.js';
import type { PhaseReport } from './lib/sync-phase.js';
import { withTempDir } from './lib/temp-dir.js';

const PAGE_SIZE = 8;
const PHASE_TIMEOUT_MS = 10 * 60_000;
const PHASE_SCRIPT = fileURLToPath(new URL('./lib/sync-phase.ts', import.meta.url));
const PHASES = ['baseline', 'first', 'edited', 'unchanged'] as const;
type PhaseName = (typeof PHASES)[number];

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '2' },
    'cpu-prof-dir': { type: 'string' },
  },
});
const entries = Number(values.entries);
const rounds = Number(values.rounds);
if (!Number.isInteger(entries) || entries < 1)
  throw new Error(`--entries must be a positive integer, got ${values.entries}`);
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds must be a positive integer, got ${values.rounds}`);
const profileDir = values['cpu-prof-dir'];
const edits = Math.max(1, Math.round(entries / 100));

async function runPhase(
  upstream: SimulatedUpstream,
  phase: PhaseName,
  args: string[],
  dir: string,
  round: number,
): Promise<PhaseReport> {
  const requestsBefore = upstream.requests.length;
  const result = join(dir, `${phase}-${round}.json`);
  // The young-generation size the CLI runs with (its shebang, `npm start`, the Dockerfile).
  const nodeFlags = ['--max-semi-space-size=2'];
  if (profileDir) {
    nodeFlags.push(
      '--cpu-prof',
      '--cpu-prof-dir',
      profileDir,
      '--cpu-prof-name',
      `sync-scale-${phase}-${round}.cpuprofile`,
    );
  }
  const outcome = await runScript(PHASE_SCRIPT, [...args, '--result', result], {
    timeoutMs: PHASE_TIMEOUT_MS,
    nodeFlags,
  });
  if (outcome.code !== 0)
    throw new Error(`phase ${phase} (round ${round}) failed: ${describeOutcome(outcome)}`);
  const report = JSON.parse(readFileSync(result, 'utf8')) as PhaseReport;
  return { ...report, upstreamRequests: upstream.requests.length - requestsBefore };
}

/**
 * The simulated upstream renders a page on first request and caches it until the data changes, so
 * whichever phase came first after a change would also pay for rendering. Crawling once here, in
 * the upstream's own process, gives every measured phase the same warm upstream.
 */
async function warmUpstream(url: string): Promise<void> {
  await crawlListing(benchSyncSettings(url));
}

/** One a–d sequence on a fresh database. */
async function runRound(
  upstream: SimulatedUpstream,
  dir: string,
  round: number,
): Promise<Record<PhaseName, PhaseReport>> {
  const url = ['--url', upstream.url];
  const db = ['--db', join(dir, `mirror-${round}.db`)];
  await warmUpstream(upstream.url);
  const baseline = await runPhase(upstream, 'baseline', ['--phase', 'crawl', ...url], dir, round);
  const first = await runPhase(upstream, 'first', ['--phase', 'sync', ...url, ...db], dir, round);
  upstream.data.edit(edits);
  await warmUpstream(upstream.url);
  const edited = await runPhase(upstream, 'edited', ['--phase', 'sync', ...url, ...db], dir, round);
  const unchanged = await runPhase(upstream, 'unchanged', ['--phase', 'sync', ...url, ...db], dir, round);
  const times = [baseline, first, edited, unchanged].map((r) => seconds(r.ms)).join(', ');
  console.log(`sync-scale round ${round}: a–d ${times}`);
  return { baseline, first, edited, unchanged };
}

/** Best time, worst RSS, and the size figures of the last round. */
function combine(reports: readonly PhaseReport[]): PhaseReport {
  const last = reports[reports.length - 1];
  if (!last) throw new Error('no rounds');
  return {
    ...last,
    ms: Math.min(...reports.map((r) => r.ms)),
    maxRssBytes: Math.max(...reports.map((r) => r.maxRssBytes)),
  };
}

const LABELS: Record<PhaseName, string> = {
  baseline: '(a) baseline crawl, not stored',
  first: '(b) first sync',
  edited: `(c) after editing ${edits}`,
  unchanged: '(d) unchanged',
};

function phaseLine(phase: PhaseName, report: PhaseReport, dbBefore: number): string {
  const parts = [
    `sync-scale ${LABELS[phase]}: ${seconds(report.ms)}, ${perSecond(report.entries, report.ms)} entries/s`,
    `peak RSS ${megabytes(report.maxRssBytes)} (${megabytes(report.startRssBytes)} after imports)`,
    `${(report.upstreamRequests ?? 0).toLocaleString('en-US')} upstream requests`,
  ];
  if (report.dbBytes !== undefined) {
    parts.push(
      `db ${megabytes(report.dbBytes)} (growth ${(report.dbBytes - dbBefore).toLocaleString('en-US')} B)`,
    );
  }
  if (report.counts) {
    const c = report.counts;
    parts.push(`added ${c.added}, changed ${c.changed}, removed ${c.removed}, unchanged ${c.unchanged}`);
  }
  if (report.stageMs) parts.push(`in the stage: ${stageLine(report.stageMs)}`);
  return parts.join('; ');
}

/** The stage's operations by the time spent in them, largest first. */
function stageLine(spent: Record<string, number>): string {
  return Object.entries(spent)
    .filter(([, ms]) => ms >= 1)
    .sort(([, a], [, b]) => b - a)
    .map(([name, ms]) => `${name} ${seconds(ms)}`)
    .join(', ');
}

function printGoals(r: Record<PhaseName, PhaseReport>): void {
  const firstRatio = r.first.ms / r.baseline.ms;
  console.log(
    `sync-scale first sync / baseline: ${ratio(firstRatio)} ${checkGoal('sync-scale', 'first sync / crawl baseline', firstRatio, 2, '×')}`,
  );
  const editRatio = r.edited.ms / r.unchanged.ms;
  console.log(
    `sync-scale 1%-edited / unchanged: ${ratio(editRatio)} ${checkGoal('sync-scale', '1%-edited sync / unchanged sync', editRatio, 1.5, '×')}`,
  );
  const growth = (r.unchanged.dbBytes ?? 0) - (r.edited.dbBytes ?? 0);
  console.log(
    `sync-scale unchanged growth: ${growth} B ${checkGoal('sync-scale', 'unchanged sync db growth', growth, 1024, ' B')}`,
  );
  const peak = PHASES.reduce((worst, phase) => (r[phase].maxRssBytes > r[worst].maxRssBytes ? phase : worst));
  const peakMb = Number((r[peak].maxRssBytes / 1e6).toFixed(1));
  console.log(
    `sync-scale peak RSS: ${megabytes(r[peak].maxRssBytes)} (${peak}) ${checkGoal('sync-scale', 'peak RSS of a phase', peakMb, 200, ' MB')}`,
  );
}

console.log(machineLine());
const generationStart = performance.now();
const upstream = await startSimulatedUpstream({ seed: 11, count: entries, pageSize: PAGE_SIZE });
try {
  const pages = Math.ceil(entries / PAGE_SIZE);
  console.log(
    `sync-scale: ${entries.toLocaleString('en-US')} entries, ${pages.toLocaleString('en-US')} pages of ${PAGE_SIZE}, ` +
      `no latency, concurrency 4, ${rounds} round(s), each phase in its own process ` +
      `(upstream generated in ${seconds(performance.now() - generationStart)})`,
  );
  await withTempDir(async (dir) => {
    const all: Record<PhaseName, PhaseReport>[] = [];
    for (let round = 1; round <= rounds; round++) all.push(await runRound(upstream, dir, round));
    const best = Object.fromEntries(
      PHASES.map((phase) => [phase, combine(all.map((r) => r[phase]))]),
    ) as Record<PhaseName, PhaseReport>;
    console.log(phaseLine('baseline', best.baseline, 0));
    console.log(phaseLine('first', best.first, 0));
    console.log(phaseLine('edited', best.edited, best.first.dbBytes ?? 0));
    console.log(phaseLine('unchanged', best.unchanged, best.edited.dbBytes ?? 0));
    printGoals(best);
  });
} finally {
  await upstream.close();
}
