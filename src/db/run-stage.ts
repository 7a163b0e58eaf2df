import { writeMediaRows } from './media-commit.js';
import { writeRunOutboxes } from './run-outbox.js';
import { assertStillRunning, markSucceeded } from './run-ends.js';
import type { RunStage, StageChunk, StageCommit, StagedEntry, StageOutcome } from './run-commit.js';
import { latestSucceededRun } from './run-reads.js';
import { columns, walk } from './port-shapes.js';
import type { InsertColumn, SqlPort } from './sql-port.js';

// A run's stage: the crawled listing, the current listing it is diffed against and the diff's
// outcome, in TEMP tables of the one connection the run writes with. Nothing reaches the
// database's own tables until the commit, which reads them set-based in ONE transaction; a crash
// or a failed run leaves nothing (a temp table dies with its connection). One implementation for
// both dialects over `StageConnection`: the SQL below is what SQLite and PostgreSQL both speak.

/** What the stage needs of a connection besides the port's reads and writes. */
export interface StageConnection extends SqlPort {
  /**
   * `id` limited to the ids a subquery of stage tables answers, as a condition that seeks each by
   * primary key: a commit touches the rows it changes, never a scan of the history they are in.
   */
  byIds(subquery: string): string;
  /** Runs `work` in one transaction on this connection. */
  transaction<T>(work: () => Promise<T>): Promise<T>;
}

/** Builds the deferred indexes of a filled table (every table's left, without one). */
type Built = (table?: string) => void;

/** What differs between the stores around the commit's shared statements. */
export interface StageDialect {
  conn: StageConnection;
  /**
   * Runs `write` (the whole commit over `conn`) in ONE write transaction, with the dialect's checks
   * around it. A dialect that dropped the indexes a first sync's tables would keep up row by row
   * hands it what builds them again, a table's once it is filled (`Built`).
   */
  commit(runId: number, write: (built?: Built) => Promise<void>): Promise<void>;
  /** Gives the connection back, once the stage tables are dropped. */
  release(): Promise<void>;
}

// At a million entries (docs/benchmarks.md): a b-tree kept up row by row in
// random order (a uuid index filled in listing order, a position key filled in uuid order) costs
// a page read and write per row once it outgrows the page cache, and dominated the first sync.
// So each table is filled in its key's order, or its index is built by one sort once it is full:
// stage_entries' and stage_current's uuid indexes when the crawl is over (`holdCurrent`), and the
// diff's placements, which come in uuid order, land in stage_placed and are copied into
// stage_places in listing order once (`placesInOrder`).
const TABLES = {
  stage_entries: `pos integer primary key, page integer not null, idx integer not null, uuid text not null,
    body text not null, hash text not null`,
  stage_current: `pos integer primary key, position_id bigint not null, version_id bigint not null,
    uuid text not null, slot integer not null, hash text`,
  stage_placed: 'pos integer not null, version_id bigint, uuid text, slot integer',
  stage_places: 'pos integer primary key, version_id bigint, uuid text, slot integer',
  stage_slots: 'pos integer primary key, slot integer not null',
  stage_copies: 'hash text primary key, uuid text not null, placed integer not null',
  stage_closed: 'version_id bigint primary key',
  stage_events: `k1 integer not null, k2 integer not null, k3 integer not null, uuid text not null,
    slot integer not null, kind text not null, field text, old_value text, new_value text, ref_pos integer,
    ref_version bigint`,
  stage_coworkers: 'uuid text primary key, kind text not null, ord integer not null',
};

/** Each stage table's columns, as the port inserts its rows. */
const COLUMNS = Object.fromEntries(
  Object.entries(TABLES).map(([table, definition]) => [table, columns(definition)]),
) as Record<keyof typeof TABLES, InsertColumn[]>;

/** Rows read at once where the stage walks a table. */
const READ_BATCH = 1_000;

/** Creates the stage tables on the dialect's connection and answers the stage over them. */
export async function openRunStage(dialect: StageDialect): Promise<RunStage> {
  const { conn } = dialect;
  await dropTables(conn);
  for (const [table, definition] of Object.entries(TABLES)) {
    await conn.run(`create temp table ${table} (${definition})`);
  }
  await conn.run('create index stage_entries_page on stage_entries (page, idx)');
  return new SqlRunStage(dialect);
}

async function dropTables(conn: StageConnection): Promise<void> {
  for (const table of Object.keys(TABLES)) await conn.run(`drop table if exists ${table}`);
}

class SqlRunStage implements RunStage {
  readonly #dialect: StageDialect;
  readonly #conn: StageConnection;
  #closed = false;
  /** Placements recorded since stage_places was last brought up to date. */
  #unordered = false;
  /** The diff was `recordFirstListing`'s: every placement is an addition (see FIRST_LISTING). */
  #firstListing = false;

  constructor(dialect: StageDialect) {
    this.#dialect = dialect;
    this.#conn = dialect.conn;
  }

  append(entries: readonly StagedEntry[]): Promise<void> {
    if (entries.length === 0) return Promise.resolve();
    const rows = entries.map((e) => [e.position, e.page, e.index, e.uuid, e.body, e.hash]);
    return this.#conn.transaction(() => this.#conn.insert('stage_entries', COLUMNS.stage_entries, rows));
  }

  async reset(): Promise<void> {
    await this.#conn.run('delete from stage_entries');
  }

  entryCount(): Promise<number> {
    return count(this.#conn, 'select count(*) from stage_entries');
  }

  holdCurrent = (hashOf: (body: string) => string): Promise<number> => holdCurrent(this.#conn, hashOf);
  chunk = (after: string, rows: number): Promise<StageChunk> => readChunk(this.#conn, after, rows);

  async entryTexts(positions: readonly number[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (let at = 0; at < positions.length; at += READ_BATCH) {
      const list = this.#conn.list('int', positions.slice(at, at + READ_BATCH));
      const found = await this.#conn.rows<[number, string]>(
        `select pos, body from stage_entries where pos in ${list.sql}`,
        [list.param],
      );
      for (const [position, body] of found) out.set(position, body);
    }
    return out;
  }

  record(outcome: StageOutcome): Promise<void> {
    this.#unordered = true;
    return this.#conn.transaction(() => recordOutcome(this.#conn, outcome));
  }

  async recordFirstListing(): Promise<number | null> {
    // A removed coworker stays a row (a tombstone): no row at all is a store that never held one.
    if ((await this.#conn.values('select 1 from coworkers limit 1')).length > 0) return null;
    const added = await this.#conn.transaction(() => recordFirstListing(this.#conn));
    this.#firstListing = true;
    return added;
  }

  /** stage_places holds every placement recorded so far, each appended in listing order. */
  async #placesInOrder(): Promise<void> {
    if (!this.#unordered) return;
    await this.#conn.transaction(async () => {
      await this.#conn.run('insert into stage_places select * from stage_placed order by pos');
      await this.#conn.run('delete from stage_placed');
    });
    this.#unordered = false;
  }

  async repeatedUuids(limit: number): Promise<{ count: number; first: string[] }> {
    // One grouping of the stage, counted by a window over all of it before the limit applies (a
    // count and a list grouped it once each, a second walk of a large stage: bench/stage-steps.ts).
    // At least one row is read, whatever `limit`, to carry the count.
    const wanted = Math.max(0, Math.trunc(limit));
    const found = await this.#conn.rows<[string, number]>(
      `select uuid, count(*) over () from (
         select uuid, min(pos) as first from stage_entries group by uuid having count(*) > 1) r
        order by first limit ${Math.max(1, wanted)}`,
    );
    return { count: Number(found[0]?.[1] ?? 0), first: found.slice(0, wanted).map(([uuid]) => uuid) };
  }

  async exactCopies(): Promise<{ copies: number; pages: number[] }> {
    await this.#placesInOrder();
    const count = await this.#conn.transaction(() => findCopies(this.#conn));
    if (count === 0) return { copies: 0, pages: [] };
    // A copy's appearances, found by its uuid: a few seeks of the uuid index, not a scan by hash
    // (CROSS JOIN keeps SQLite's order; PostgreSQL plans it as an inner join).
    const pages = await this.#conn.values<number>(
      `select distinct e.page from stage_copies c cross join stage_entries e
        where e.uuid = c.uuid and e.hash = c.hash and c.placed = 1 order by e.page`,
    );
    return { copies: count, pages };
  }

  pageTexts(page: number): Promise<string[]> {
    return this.#conn.values<string>('select body from stage_entries where page = ? order by idx', [page]);
  }

  async *texts(): AsyncIterable<string> {
    const sql = 'select pos, body from stage_entries where pos > ? order by pos';
    for await (const [, body] of walk<[number, string]>(this.#conn, sql, [], READ_BATCH)) yield body;
  }

  async commit(commit: StageCommit): Promise<void> {
    await this.#placesInOrder();
    const conn = this.#conn;
    // Read before the transaction: the run lock keeps any other run from succeeding meanwhile.
    const lastSeen = await latestSucceededRun(conn);
    const entries = await this.entryCount();
    await this.#dialect.commit(commit.runId, async (built) => {
      await assertStillRunning(conn, commit.runId);
      await writeListing(conn, commit.runId, lastSeen, this.#firstListing, built);
      await markSucceeded(conn, commit, entries);
      // Media rows first: a notification's thumbnails are the media this run holds.
      if (commit.media) await writeMediaRows(conn, commit.runId, commit.media);
      await writeRunOutboxes(conn, commit.runId, [commit.outbox, commit.notify]);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await dropTables(this.#conn);
    } finally {
      await this.#dialect.release();
    }
  }
}

/**
 * Texts listed twice or more (by hash) into stage_copies, `placed` where one of them is a new
 * state; how many are. An entry's text names its uuid, so equal texts are appearances of one uuid:
 * only the repeated uuids' entries are grouped (read in order from the uuid index, their hashes
 * sorted), and each copy's appearances are found again by its uuid, a few seeks. Grouping every
 * entry's hash and walking every entry against the copies instead costs much more over a large
 * stage whose uuids repeat.
 */
async function findCopies(conn: StageConnection): Promise<number> {
  await conn.run('delete from stage_copies');
  await conn.run(
    `insert into stage_copies (hash, uuid, placed)
     select hash, min(uuid), 0 from stage_entries
      where uuid in (select uuid from stage_entries group by uuid having count(*) > 1)
      group by hash having count(*) > 1`,
  );
  await conn.run(
    `update stage_copies set placed = 1
      where exists (select 1 from stage_entries n join stage_places p on p.pos = n.pos
                     where n.uuid = stage_copies.uuid and n.hash = stage_copies.hash and p.version_id is null)`,
  );
  return count(conn, 'select count(*) from stage_copies where placed = 1');
}

/**
 * The current listing into stage_current, set-based: no row passes through the process. Called
 * once the crawl is over, it also builds the uuid indexes the diff walks (see TABLES).
 */
async function holdCurrent(conn: StageConnection, hashOf: (body: string) => string): Promise<number> {
  // Covering: the diff's chunks read a group's positions and hashes from the index alone.
  await conn.run('create index if not exists stage_entries_uuid on stage_entries (uuid, pos, hash)');
  await conn.transaction(async () => {
    await conn.run('drop index if exists stage_current_uuid');
    await conn.run('delete from stage_current');
    await conn.run(
      `insert into stage_current (pos, position_id, version_id, uuid, slot, hash)
       select lp.position, lp.id, v.id, v.uuid, v.slot, v.body_hash
         from listing_positions lp join versions v on v.id = lp.version_id
        where lp.valid_to_run is null`,
    );
    // Rows written before body_hash existed are hashed here, a batch at a time.
    const missing = `select c.pos, v.body from stage_current c join versions v on v.id = c.version_id
      where c.hash is null and c.pos > ? order by c.pos`;
    for await (const [position, body] of walk<[number, string]>(conn, missing, [], READ_BATCH)) {
      await conn.run('update stage_current set hash = ? where pos = ?', [hashOf(body), position]);
    }
    await conn.run('create index stage_current_uuid on stage_current (uuid, pos, version_id, slot, hash)');
  });
  await conn.run('analyze stage_current');
  await conn.run('analyze stage_entries');
  return count(conn, 'select count(*) from stage_current');
}

/**
 * The uuid `rows` rows past `after` on one side, or null when that side has fewer left: the chunk
 * ends at the smaller of the two sides' bounds, so it holds about `rows` rows of each, and whole
 * groups (a uuid listed 20,000 times comes in one chunk, the walk stays linear).
 */
async function boundOf(conn: SqlPort, table: string, after: string, rows: number): Promise<string | null> {
  const sql = `select uuid from ${table} where uuid > ? order by uuid limit 1 offset ${Math.trunc(rows)}`;
  const [uuid = null] = await conn.values<string>(sql, [after]);
  return uuid;
}

async function readChunk(conn: StageConnection, after: string, rows: number): Promise<StageChunk> {
  const bounds = [
    await boundOf(conn, 'stage_entries', after, rows),
    await boundOf(conn, 'stage_current', after, rows),
  ];
  // The smaller bound; none when both sides end before theirs: this chunk takes the rest.
  const [last = null] = bounds.filter((b): b is string => b !== null).sort();
  const upper = last === null ? '' : ' and uuid <= ?';
  const params = last === null ? [after] : [after, last];
  const news = await conn.rows<[number, string, string]>(
    `select pos, uuid, hash from stage_entries where uuid > ?${upper} order by uuid, pos`,
    params,
  );
  const held = await conn.rows<[number, number, string, number, string]>(
    `select pos, version_id, uuid, slot, hash from stage_current where uuid > ?${upper} order by uuid, pos`,
    params,
  );
  const known = await conn.rows<[string, number | boolean]>(
    `select uuid, case when removed_run is null then 0 else 1 end from coworkers where uuid > ?${upper}`,
    params,
  );
  return {
    news: news.map(([position, uuid, hash]) => ({ position, uuid, hash })),
    held: held.map(([position, versionId, uuid, slot, hash]) => ({ position, versionId, uuid, slot, hash })),
    known: new Map(known.map(([uuid, removed]) => [uuid, Number(removed) === 1])),
    last,
  };
}

/**
 * What `diffGroup` decides for a uuid never stored, for every uuid at once. Only the placements are
 * written, in listing order, as `#placesInOrder` would leave stage_places: the commit derives the
 * changes and new coworkers from them (FIRST_LISTING). On a large first sync the groups' walk, its
 * records and their reordering cost several times this (docs/benchmarks.md);
 * test/sync/first-listing.test.ts holds both ways to the same rows.
 */
async function recordFirstListing(conn: StageConnection): Promise<number> {
  // A uuid listed once takes slot 0; only the repeated ones' appearances are numbered (a window
  // over them alone, in stage_slots), and the placements join them in listing order. A window
  // over every entry, then sorted back into listing order, costs more even where many uuids repeat,
  // and far more where none does.
  await conn.run('delete from stage_slots');
  await conn.run(
    `insert into stage_slots (pos, slot)
     select pos, row_number() over (partition by uuid order by pos) - 1 from stage_entries
      where uuid in (select uuid from stage_entries group by uuid having count(*) > 1)
      order by pos`,
  );
  await conn.run(
    `insert into stage_places (pos, version_id, uuid, slot)
     select e.pos, null, e.uuid, coalesce(s.slot, 0)
       from stage_entries e left join stage_slots s on s.pos = e.pos
      order by e.pos`,
  );
  return count(conn, 'select count(*) from stage_places');
}

async function recordOutcome(conn: StageConnection, outcome: StageOutcome): Promise<void> {
  await conn.insert('stage_placed', COLUMNS.stage_placed, outcome.places);
  const closed = outcome.closed.map((id) => [id]);
  await conn.insert('stage_closed', COLUMNS.stage_closed, closed);
  const { events } = outcome;
  await conn.insert(
    'stage_events',
    COLUMNS.stage_events,
    events.map((e) => [
      ...e.order,
      e.uuid,
      e.slot,
      e.kind,
      e.field,
      e.oldValue,
      e.newValue,
      e.refPosition,
      e.refVersion,
    ]),
  );
  await conn.insert('stage_coworkers', COLUMNS.stage_coworkers, outcome.coworkers);
}

/** The one number a `select count(*) …` answers. */
async function count(conn: SqlPort, sql: string): Promise<number> {
  const [n] = await conn.values<number>(sql);
  return Number(n ?? 0);
}

/**
 * The ids of the versions the commit just opened, into their placements. A run opens one version
 * per (uuid, slot) at most: that triple finds each new id, a seek per placement in uuid order.
 * SQLite assigns them by rank instead where it can (`assignedByRank`). The seek is
 * on (uuid, run), versions_uuid_idx: `+v.slot` keeps either planner off versions_slot_idx, whose
 * (uuid, slot) would read every version the slot has had.
 */
const NEW_VERSION_IDS = `update stage_places set version_id = (select v.id from versions v
    where v.uuid = stage_places.uuid and v.valid_from_run = ? and +v.slot = stage_places.slot)
  where version_id is null`;

/**
 * The new versions' ids into their placements by rank, on SQLite: the versions were inserted by
 * one INSERT … SELECT in listing order, under the write lock, into an AUTOINCREMENT table, so
 * SQLite numbered them one after another up to its sequence; the n-th new placement in listing
 * order holds the n-th id. One pass in listing order, where NEW_VERSION_IDS seeks the uuid index
 * once per placement in random order (a large part of a big first sync). Both ends are checked
 * against the versions themselves; false, should they ever disagree (NEW_VERSION_IDS then does it).
 */
async function assignedByRank(conn: StageConnection, runId: number): Promise<boolean> {
  const [[placed, low, high] = [0, null, null]] = await conn.rows<[number, number | null, number | null]>(
    'select count(*), min(pos), max(pos) from stage_places where version_id is null',
  );
  if (placed === 0 || low === null || high === null) return true;
  const [last = 0] = await conn.values<number>(`select seq from sqlite_sequence where name = 'versions'`);
  if (high - low + 1 === placed) {
    // Every position from low to high is new (a first sync: all of them): the rank is the position's
    // offset, no sort needed (a sort fewer in a first sync's commit).
    await conn.run('update stage_places set version_id = pos - ? + ? where version_id is null', [
      low,
      last - placed + 1,
    ]);
  } else {
    await conn.run(
      `update stage_places set version_id = r.id
         from (select pos, ? + row_number() over (order by pos) as id from stage_places where version_id is null) r
        where r.pos = stage_places.pos`,
      [last - placed],
    );
  }
  const [matching] = await conn.values<number>(
    `select count(*) from stage_places p join versions v on v.id = p.version_id
      where p.uuid is not null and p.version_id in (?, ?)
        and v.uuid = p.uuid and v.slot = p.slot and v.valid_from_run = ?`,
    [last - placed + 1, last, runId],
  );
  if (matching === (placed === 1 ? 1 : 2)) return true;
  await conn.run('update stage_places set version_id = null where uuid is not null');
  return false;
}

/**
 * The listing part of a commit, set-based from the stage: coworkers, versions (new ones inserted in
 * listing order, so their ids ascend with the listing), the positions whose version changed, and
 * the changes in the diff's order. An added, returned or removed change refers to the version
 * holding its entry (migration body_once) and stores no text. `lastSeen` is the last run that
 * still saw the coworkers removed now.
 */
async function writeListing(
  conn: StageConnection,
  runId: number,
  lastSeen: { id: number } | undefined,
  firstListing: boolean,
  built?: Built,
): Promise<void> {
  const from = firstListing ? FIRST_LISTING : BY_GROUPS;
  // With `built`, a filled table's deferred indexes are built right after its insert.
  const run = async (sql: string, params: readonly unknown[], fills?: string) => {
    await conn.run(sql, params);
    if (fills !== undefined) built?.(fills);
  };
  await run(from.newCoworkers, [runId], 'coworkers');
  await run(
    `update coworkers set removed_run = null, returned_count = returned_count + 1,
            last_returned_run = ? where uuid in (select uuid from stage_coworkers where kind = 'returned')`,
    [runId],
  );
  await run(
    `update coworkers set removed_run = ?, last_seen_run = ?
      where uuid in (select uuid from stage_coworkers where kind = 'removed')`,
    [runId, lastSeen?.id ?? null],
  );
  await run(
    `update versions set valid_to_run = ? where ${conn.byIds('select version_id from stage_closed')}`,
    [runId],
  );
  await run(
    `insert into versions (uuid, slot, body, body_hash, valid_from_run)
     select p.uuid, p.slot, e.body, e.hash, cast(? as bigint)
       from stage_places p join stage_entries e on e.pos = p.pos
      where p.version_id is null
      order by p.pos`,
    [runId],
    'versions',
  );
  if (conn.dialect !== 'sqlite' || !(await assignedByRank(conn, runId))) await run(NEW_VERSION_IDS, [runId]);
  // Only the positions whose version changed are rewritten: an unchanged run writes nothing here.
  await run(
    `update listing_positions set valid_to_run = ?
      where ${conn.byIds(`select c.position_id from stage_current c left join stage_places p on p.pos = c.pos
                           where p.pos is null or p.version_id <> c.version_id`)}`,
    [runId],
  );
  await run(
    `insert into listing_positions (position, version_id, valid_from_run)
     select p.pos, p.version_id, cast(? as bigint)
       from stage_places p left join stage_current c on c.pos = p.pos
      where c.pos is null or c.version_id <> p.version_id
      order by p.pos`,
    [runId],
    'listing_positions',
  );
  await run(from.changes, [runId], 'changes');
  built?.();
}

const NEW_COWORKERS = 'insert into coworkers (uuid, first_seen_run) select uuid, cast(? as bigint) from';
const NEW_CHANGES = `insert into changes (run_id, uuid, slot, kind, field, old_value, new_value, version_id)
     select cast(? as bigint),`;

/** The new coworkers and the run's changes, as the groups' diff records them (`record`). */
const BY_GROUPS = {
  newCoworkers: `${NEW_COWORKERS} stage_coworkers where kind = 'new' order by uuid`,
  changes: `${NEW_CHANGES} e.uuid, e.slot, e.kind, e.field, e.old_value, e.new_value,
            coalesce(e.ref_version, p.version_id)
       from stage_events e left join stage_places p on p.pos = e.ref_pos
      order by e.k1, e.k2, e.k3`,
};

/**
 * The same after `recordFirstListing`, from the placements and entries themselves: every listed uuid
 * is a new coworker, and every placement an `added` change keyed (LISTED, position, 0), so in
 * listing order, referring to the version it opens. Writing them to stage_coworkers and
 * stage_events first cost a copy of each in the stage and the commit (bench/stage-steps.ts).
 */
const FIRST_LISTING = {
  newCoworkers: `${NEW_COWORKERS} stage_entries group by uuid order by uuid`,
  changes: `${NEW_CHANGES} p.uuid, p.slot, 'added', null, null, null, p.version_id from stage_places p order by p.pos`,
};
