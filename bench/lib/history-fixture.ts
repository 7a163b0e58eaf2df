import type { MirrorDatabase } from '../../src/db/open.js';
import { EDITABLE_FIELDS, generateCoworkers, Rng } from '../../src/simulated-upstream/index.js';
import type { Coworker } from '../../src/upstream/contract.js';

export interface FixtureShape {
  coworkers: number;
  /** Run 1 adds everyone; each later run edits `editsPerRun` coworkers, `fieldsPerEdit` fields each. */
  runs: number;
  editsPerRun: number;
  fieldsPerEdit: number;
}

export interface Fixture {
  uuids: string[];
  changeRows: number;
  versionRows: number;
}

const UPSTREAM = 'http://127.0.0.1:8000';
const MEDIA = 'http://127.0.0.1:8766/media/';
const START = Date.parse('2024-01-01T00:00:00Z');
const HOUR = 3_600_000;

/** Rows a sync would have written, through prepared statements on the raw handle. */
function statements(store: MirrorDatabase) {
  const s = store.sqlite;
  return {
    run: s.prepare(
      `insert into runs (id, status, started_at, finished_at, upstream, pages, entries, page_size, added, changed, unchanged)
       values (?, 'succeeded', ?, ?, '${UPSTREAM}', ?, ?, 8, ?, ?, ?)`,
    ),
    coworker: s.prepare('insert into coworkers (uuid, first_seen_run) values (?, 1)'),
    version: s.prepare('insert into versions (uuid, slot, body, valid_from_run) values (?, 0, ?, ?)'),
    closeVersion: s.prepare('update versions set valid_to_run = ? where id = ?'),
    position: s.prepare(
      'insert into listing_positions (position, version_id, valid_from_run) values (?, ?, ?)',
    ),
    closePosition: s.prepare('update listing_positions set valid_to_run = ? where id = ?'),
    change: s.prepare(
      `insert into changes (run_id, uuid, slot, kind, field, old_value, new_value) values (?, ?, 0, ?, ?, ?, ?)`,
    ),
    // As a sync writes it (migration body_once): the entry is the version's body, named, not copied.
    added: s.prepare(
      `insert into changes (run_id, uuid, slot, kind, version_id) values (1, ?, 0, 'added', ?)`,
    ),
  };
}

type Statements = ReturnType<typeof statements>;

interface Current {
  entry: Coworker;
  versionId: number;
  positionId: number;
}

/** Each edit gives a field a value no earlier run used, so every change row is a real change. */
function changedValue(entry: Coworker, field: (typeof EDITABLE_FIELDS)[number], run: number): unknown {
  switch (field) {
    case 'name':
      return `${entry.name.split(' (')[0] ?? ''} (${run})`;
    case 'post':
      return `Role ${run}`;
    case 'emoji_file':
      return `${MEDIA}emoji/${entry.uuid}-${run}.png`;
    case 'show_image':
      return !entry.show_image;
    case 'images':
      return [`${MEDIA}images/${entry.uuid}-${run}.jpg`];
  }
}

function firstRun(st: Statements, entries: readonly Coworker[]): Current[] {
  const at = new Date(START).toISOString();
  st.run.run(1, at, at, Math.ceil(entries.length / 8), entries.length, entries.length, 0, 0);
  return entries.map((entry, position) => {
    const body = JSON.stringify(entry);
    st.coworker.run(entry.uuid);
    const versionId = Number(st.version.run(entry.uuid, body, 1).lastInsertRowid);
    const positionId = Number(st.position.run(position, versionId, 1).lastInsertRowid);
    st.added.run(entry.uuid, versionId);
    return { entry, versionId, positionId };
  });
}

function editRun(st: Statements, current: Current[], run: number, shape: FixtureShape, rng: Rng): number {
  const at = new Date(START + (run - 1) * HOUR).toISOString();
  const n = current.length;
  st.run.run(run, at, at, Math.ceil(n / 8), n, 0, shape.editsPerRun, n - shape.editsPerRun);
  let changes = 0;
  for (const position of rng.sample(n, shape.editsPerRun)) {
    const now = current[position];
    if (!now) continue;
    const fields = rng
      .sample(EDITABLE_FIELDS.length, shape.fieldsPerEdit)
      .map((i) => EDITABLE_FIELDS[i] ?? 'post');
    const entry: Coworker = { ...now.entry };
    for (const field of fields) {
      const value = changedValue(entry, field, run);
      st.change.run(run, entry.uuid, 'changed', field, JSON.stringify(entry[field]), JSON.stringify(value));
      Object.assign(entry, { [field]: value });
      changes++;
    }
    st.closeVersion.run(run, now.versionId);
    st.closePosition.run(run, now.positionId);
    const versionId = Number(st.version.run(entry.uuid, JSON.stringify(entry), run).lastInsertRowid);
    const positionId = Number(st.position.run(position, versionId, run).lastInsertRowid);
    current[position] = { entry, versionId, positionId };
  }
  return changes;
}

/**
 * Fills an empty, migrated database with the history `shape` describes, consistent with the schema
 * (runs, coworkers, SCD versions and listing positions, change rows), one transaction per run.
 */
export function buildHistory(store: MirrorDatabase, shape: FixtureShape, seed = 5): Fixture {
  const st = statements(store);
  const rng = new Rng(seed);
  const entries = generateCoworkers(seed, shape.coworkers, { dupRate: 0 });
  let current: Current[] = [];
  store.sqlite.transaction(() => (current = firstRun(st, entries))).immediate();
  let changeRows = entries.length;
  for (let run = 2; run <= shape.runs; run++) {
    changeRows += store.sqlite.transaction(() => editRun(st, current, run, shape, rng)).immediate();
  }
  store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  return {
    uuids: entries.map((e) => e.uuid),
    changeRows,
    versionRows: entries.length + (shape.runs - 1) * shape.editsPerRun,
  };
}
