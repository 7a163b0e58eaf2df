import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';
import {
  findReferencePython,
  startReferenceServer,
  type ReferenceServer,
} from '../http/drf/reference-server.js';
import { syncConfig } from '../helpers/config.js';
import { startMirror } from '../helpers/mirror-server.js';
import { runSync } from '../../src/sync/run-sync.js';
import { silentLogger } from '../../src/logger.js';

/**
 * The history, judged against the truth of the upstream's own rows: the reference DRF site serves
 * rows that each have a primary key the listing never shows; rounds edit, reorder, remove and
 * restore the appearances of repeated uuids, and every change the mirror records must be exactly
 * what happened to one row (nothing invented, nothing missed, no identity swapped).
 */

const python = findReferencePython();
if (python === null) {
  console.warn(
    'repeated-uuid-history.test.ts skipped: no python3 can `import rest_framework, django, gunicorn`. ' +
      'Install with: apt-get install -y python3-djangorestframework python3-django gunicorn',
  );
}

const LIST = '/api/model/team-block-coworker/list/';

interface Row {
  pk: number;
  /** The entry's JSON text, as the site stores it (numbers written as given). */
  fields: Record<string, string>;
}

const uuidOf = (n: number) =>
  n
    .toString(16)
    .padStart(32, '0')
    .replace(/[^a-z0-9]/g, '0');

function row(pk: number, uuid: string, name: string, post: string, extra: Record<string, string> = {}): Row {
  return {
    pk,
    fields: {
      uuid: JSON.stringify(uuid),
      name: JSON.stringify(name),
      post: JSON.stringify(post),
      emoji_file: 'null',
      emoji_file_webm: 'null',
      show_image: 'true',
      images: '[]',
      ...extra,
    },
  };
}

const textOf = (r: Row) =>
  `{${Object.entries(r.fields)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
    .join(',')}}`;

/** What happened to the rows between two rounds, keyed by pk: the truth. */
function truth(before: readonly Row[], after: readonly Row[], everSeen: Set<number>): string[] {
  const old = new Map(before.map((r) => [r.pk, r]));
  const now = new Map(after.map((r) => [r.pk, r]));
  const events: string[] = [];
  for (const r of after) {
    const prev = old.get(r.pk);
    if (!prev) {
      events.push(`${r.pk} ${everSeen.has(r.pk) ? 'returned' : 'added'}`);
      continue;
    }
    for (const field of new Set([...Object.keys(prev.fields), ...Object.keys(r.fields)])) {
      if (prev.fields[field] !== r.fields[field]) {
        events.push(`${r.pk} changed ${field} ${prev.fields[field] ?? '-'} → ${r.fields[field] ?? '-'}`);
      }
    }
  }
  for (const r of before) if (!now.has(r.pk)) events.push(`${r.pk} removed`);
  return events.sort();
}

/** The mirror's changes of one run, with each appearance named by the pk the test knows it as. */
function recorded(store: MirrorDatabase, runId: number, pkOf: Map<string, number>): string[] {
  const rows = store.sqlite
    .prepare('select uuid, slot, kind, field, old_value, new_value from changes where run_id = ?')
    .all(runId) as {
    uuid: string;
    slot: number;
    kind: string;
    field: string | null;
    old_value: string | null;
    new_value: string | null;
  }[];
  return rows
    .map((c) => {
      const pk = pkOf.get(`${c.uuid}/${c.slot}`) ?? `unknown ${c.uuid}/${c.slot}`;
      return c.kind === 'changed'
        ? `${pk} changed ${c.field} ${c.old_value ?? '-'} → ${c.new_value ?? '-'}`
        : `${pk} ${c.kind}`;
    })
    .sort();
}

/** Which appearance (uuid/slot) each listed row is, read from the listing the run stored. */
function appearances(store: MirrorDatabase): string[] {
  return (
    store.sqlite
      .prepare(
        `select v.uuid || '/' || v.slot as id from listing_positions lp join versions v on v.id = lp.version_id
          where lp.valid_to_run is null order by lp.position`,
      )
      .all() as { id: string }[]
  ).map((r) => r.id);
}

/** A small seeded generator: the same rounds on every machine. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe.skipIf(python === null)('history of repeated uuids against the real DRF site', () => {
  let reference: ReferenceServer;
  let store: MirrorDatabase;
  let dir: string;
  let rows: Row[];
  const everSeen = new Set<number>();
  const removedRows = new Map<number, Row>();
  /** uuid/slot → pk, learnt from the first run and from each added appearance. */
  const pkOf = new Map<string, number>();
  const slotOf = new Map<number, string>();

  const R1 = uuidOf(0xa1);
  const R2 = uuidOf(0xa2);
  const R3 = uuidOf(0xa3);

  beforeAll(async () => {
    rows = [
      row(1, uuidOf(1), 'Ines Ortolan', 'Designer'),
      row(2, R1, 'Oren Vask', 'qa engineer'),
      row(3, uuidOf(2), 'Tilde Marr', 'Developer'),
      row(4, R1, 'Pia Lund', 'Office manager'),
      row(5, R2, 'Team North', 'Support'),
      row(6, R2, 'Team South', 'Support lead'),
      // The same post as pk 5: only the name tells the two apart.
      row(7, R2, 'Team East', 'Support'),
      row(8, uuidOf(3), 'Juno Pell', 'CTO', { score: '9007199254740993', ratio: '100.0' }),
      row(9, R3, 'Aki Soro', 'Intern', { level: '-0.0' }),
      row(10, R3, 'Aki Soro', 'Intern', { level: '1e+16' }),
    ];
    reference = await startReferenceServer(python ?? '', { texts: rows.map(textOf) }, 8, false, true);
    dir = mkdtempSync(join(tmpdir(), 'coworker-mirror-'));
    store = openDatabase(join(dir, 'mirror.db'));
  });
  afterAll(async () => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
    await reference.stop();
  });

  async function round(next: Row[]): Promise<void> {
    const expected = truth(rows, next, everSeen);
    for (const r of rows) if (!next.some((n) => n.pk === r.pk)) removedRows.set(r.pk, r);
    reference.replace(next.map(textOf));
    // Drops are held by default; these rounds check what is recorded once a drop is accepted.
    const config = syncConfig(`http://127.0.0.1:${reference.port}`, { SYNC_CONFIRM_DROP: '0' });
    const summary = await runSync(config, { store, logger: silentLogger() });
    const listed = appearances(store);
    if (process.env.DEBUG_ROUNDS) {
      console.log(next.map((r, i) => `${r.pk}@${listed[i]} ${textOf(r).slice(60, 140)}`).join('\n'));
      console.log(recorded(store, summary.runId, pkOf), expected);
    }
    // New appearances are learnt from where they stand; known ones must keep their identity.
    next.forEach((r, position) => {
      const id = listed[position] ?? 'missing';
      const known = slotOf.get(r.pk);
      if (known === undefined) {
        slotOf.set(r.pk, id);
        pkOf.set(id, r.pk);
      } else expect(id, `row ${r.pk} keeps its appearance`).toBe(known);
    });
    if (everSeen.size > 0) expect(recorded(store, summary.runId, pkOf)).toEqual(expected);
    for (const r of next) everSeen.add(r.pk);
    rows = next;
  }

  const edit = (r: Row, field: string, value: string): Row => ({
    pk: r.pk,
    fields: { ...r.fields, [field]: value },
  });
  const byPk = (pk: number): Row =>
    rows.find((r) => r.pk === pk) ?? removedRows.get(pk) ?? row(pk, '', '', '');

  it('a first sync learns every appearance', async () => {
    await round(rows);
    expect(new Set(slotOf.values()).size).toBe(10);
  });

  it('both appearances of a uuid edited (one post each) and swapped: two changes', async () => {
    const [a, b, c, d, ...rest] = rows as [Row, Row, Row, Row, ...Row[]];
    await round([a, edit(d, 'post', '"Office lead"'), c, edit(b, 'post', '"QA engineer"'), ...rest]);
  });

  it('one appearance deleted and another edited: the right one removed, one change', async () => {
    await round(
      rows.filter((r) => r.pk !== 6).map((r) => (r.pk === 7 ? edit(r, 'post', '"Support lead"') : r)),
    );
  });

  it('the deleted appearance restored unchanged: it returned', async () => {
    const restored = byPk(6);
    await round([...rows.slice(0, 4), restored, ...rows.slice(4)]);
  });

  it('appearances differing only in an unnamed number field: edits and moves', async () => {
    const moved = rows.filter((r) => r.pk !== 9 && r.pk !== 10);
    await round([edit(byPk(10), 'level', '1e+17'), ...moved, byPk(9)]);
  });

  it('a whole repeated uuid removed, then restored', async () => {
    await round(rows.filter((r) => r.pk !== 2 && r.pk !== 4));
    await round([byPk(4), ...rows, byPk(2)]);
  });

  it('seeded rounds of edits, reorders, removals, restores and additions of repeated uuids', async () => {
    const random = prng(18);
    let nextPk = 100;
    for (let n = 0; n < 8; n++) {
      let next = rows.map((r) => r);
      // Edit about a third of the repeated appearances, one field each, as a person edits a row.
      next = next.map((r) => {
        if (![R1, R2, R3].includes(JSON.parse(r.fields.uuid ?? '""') as string) || random() > 0.35) return r;
        const pick = random();
        if (pick < 0.6) return edit(r, 'post', JSON.stringify(`post ${n}-${r.pk}`));
        if (pick < 0.8) return edit(r, 'show_image', r.fields.show_image === 'true' ? 'false' : 'true');
        return edit(r, 'images', JSON.stringify([`https://media.example.com/${n}-${r.pk}.png`]));
      });
      // Remove one, restore one removed before, add a new appearance of a repeated uuid.
      const repeated = next.filter((r) => [R1, R2, R3].includes(JSON.parse(r.fields.uuid ?? '""') as string));
      const victim = repeated[Math.floor(random() * repeated.length)];
      if (victim && next.length > 6) next = next.filter((r) => r !== victim);
      const back = [...removedRows.values()].find((r) => !next.some((x) => x.pk === r.pk) && r !== victim);
      if (back && random() < 0.6) next.splice(Math.floor(random() * next.length), 0, back);
      // A new person under a repeated uuid: another name, post and picture.
      if (random() < 0.5) {
        const images = JSON.stringify([`https://media.example.com/team-${nextPk}.png`]);
        next.push(row(nextPk, R2, `Team ${nextPk}`, `Helpdesk ${nextPk++}`, { images }));
      }
      // Shuffle a little.
      for (let i = next.length - 1; i > 0; i--) {
        if (random() < 0.3) {
          const j = Math.floor(random() * (i + 1));
          [next[i], next[j]] = [next[j] as Row, next[i] as Row];
        }
      }
      await round(next);
    }
  });

  it('numbers the contract does not name round-trip byte for byte: list endpoint, as_of and history', async () => {
    const mirror = await startMirror(store);
    // The hosts differ in next/previous; every entry's bytes are the same, on every page.
    const results = (body: string) => body.slice(body.indexOf('"results":'));
    let served = '';
    for (const page of [1, 2]) {
      const path = `${LIST}?page=${page}`;
      const [fromMirror, fromReference] = await Promise.all([
        fetch(`${mirror.url}${path}`).then((r) => r.text()),
        fetch(`http://127.0.0.1:${reference.port}${path}`).then((r) => r.text()),
      ]);
      expect(results(fromMirror)).toBe(results(fromReference));
      served += fromMirror;
    }
    expect(served).toContain('"score":9007199254740993,"ratio":100.0');
    const second = store.sqlite.prepare('select finished_at from runs where id = 2').pluck().get() as string;
    const asOf = await fetch(`${mirror.url}${LIST}?as_of=${encodeURIComponent(second)}`).then((r) =>
      r.text(),
    );
    expect(asOf).toContain('"score":9007199254740993,"ratio":100.0');
    const asOfPage2 = await fetch(`${mirror.url}${LIST}?as_of=${encodeURIComponent(second)}&page=2`).then(
      (r) => r.text(),
    );
    expect(asOfPage2).toContain('"level":-0.0');
    const history = await fetch(`${mirror.url}/api/mirror/changes/?field=level`).then((r) => r.text());
    expect(history).toContain('"old":1e+16,"new":1e+17');
  });
});
