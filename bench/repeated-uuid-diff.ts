/**
 * The diff of one uuid listed K times with every appearance changed (issue 8: quadratic matching
 * took 18.7 s at K = 2,000). Times `diffListing` on K = 20,000 against a baseline measured in the
 * same run: the same diff over 20,000 distinct uuids, each listed once and changed (the common case).
 *
 *   npx tsx bench/repeated-uuid-diff.ts [--k 20000]
 */
import { parseArgs } from 'node:util';
import { bodyHash } from '../src/sync/body-hash.js';
import { diffListing, type CurrentAppearance, type ListingEntry } from '../src/sync/diff.js';
import { checkGoal, machineLine, ratio, seconds } from './lib/report.js';

const GOAL_MS = 5_000;
const { values } = parseArgs({ options: { k: { type: 'string', default: '20000' } } });
const k = Number(values.k);

function body(uuid: string, i: number, edit: string): string {
  return JSON.stringify({ uuid, name: `Name ${i}`, post: `post ${i} ${edit}`, show_image: true, images: [] });
}

function scenario(uuidOf: (i: number) => string) {
  const bodies = new Map<number, string>();
  const current: CurrentAppearance[] = [];
  const listing: ListingEntry[] = [];
  const slots = new Map<string, number>();
  for (let i = 0; i < k; i++) {
    const uuid = uuidOf(i);
    const slot = slots.get(uuid) ?? 0;
    slots.set(uuid, slot + 1);
    const old = body(uuid, i, 'before');
    bodies.set(i + 1, old);
    current.push({ versionId: i + 1, uuid, slot, hash: bodyHash(old) });
    const next = body(uuid, i, 'after');
    listing.push({ uuid, json: next, hash: bodyHash(next) });
  }
  const known = new Map([...slots.keys()].map((uuid) => [uuid, false]));
  return { current, known, listing, bodyOf: (id: number) => bodies.get(id) ?? '' };
}

function time(input: ReturnType<typeof scenario>): { ms: number; changed: number } {
  const started = performance.now();
  const diff = diffListing(input);
  return { ms: performance.now() - started, changed: diff.counts.changed };
}

console.log(machineLine());
const distinct = time(scenario((i) => `u${String(i).padStart(31, '0')}`));
const repeated = time(scenario(() => 'r'.repeat(32)));
console.log(
  `baseline: ${k.toLocaleString('en-US')} distinct uuids, each changed: ${seconds(distinct.ms)} (${distinct.changed} changed)`,
);
console.log(
  `one uuid listed ${k.toLocaleString('en-US')} times, each appearance changed: ${seconds(repeated.ms)} ` +
    `(${repeated.changed} changed), ratio ${ratio(repeated.ms / distinct.ms)} ` +
    checkGoal('repeated-uuid-diff', `diff of one uuid ×${k}`, repeated.ms / 1000, GOAL_MS / 1000, ' s'),
);
