import type { ForgottenPerson, PruneCounts, PruneHorizon, PruneOutcome, PruneRequest } from './store.js';
import { entryField } from './entry-fields.js';
import { walk } from './port-shapes.js';
import { latestSucceededSql } from './run-reads.js';
import type { SqlPort } from './sql-port.js';

// Forgetting, written once for both dialects over `SqlPort`: every row of coworkers removed long
// enough ago, and everyone's changes and closed versions older than a horizon, with the media rows,
// files and outbox messages that only they needed.

/** The later of the two horizons: before it, a listing or the change feed is not what it was. */
export function listingHorizon({ removedBefore, historyBefore }: PruneHorizon): string | null {
  if (removedBefore === null || historyBefore === null) return removedBefore ?? historyBefore;
  return removedBefore > historyBefore ? removedBefore : historyBefore;
}

const NONE: PruneCounts = {
  coworkers: 0,
  versions: 0,
  positions: 0,
  changes: 0,
  mediaVersions: 0,
  mediaUrls: 0,
  /** Media files no kept row needed any more, marked dropped (their bytes deleted). */
  files: 0,
  /** Outbox messages (webhooks, notifications) that told of what was pruned, all delivered or given up. */
  messages: 0,
  deliveries: 0,
  attempts: 0,
};

/** The counts a prune records, in the order of the prunes table's columns. */
const RECORDED = [
  'coworkers',
  'versions',
  'positions',
  'changes',
  'mediaVersions',
  'files',
  'messages',
] as const;

/** The rows a prune wrote in its transaction, before the dialect scrubs. */
interface PruneWork extends Pick<PruneOutcome, 'counts' | 'droppedFiles' | 'pendingMessages'> {
  /** Whether anything was deleted (a prune that deleted nothing records nothing). */
  deleted: boolean;
  /**
   * Whether what was deleted named a forgotten coworker: their bytes must then go from the
   * database's free space too, not only from the rows (SQLite: VACUUM).
   */
  personal: boolean;
}

/** Rows read per statement when a prune walks a table. */
const BATCH = 1000;

/** The coworkers to forget: removed, by a run that finished at or before `?`. */
const FORGOTTEN_RUNS = `from coworkers c join runs r on r.id = c.removed_run
   where c.removed_run is not null and r.finished_at <= ?`;
const FORGOTTEN = `select c.uuid ${FORGOTTEN_RUNS}`;

/** One prune's connection and request, and what its steps count and hand each other. */
class Pass {
  readonly counts: PruneCounts = { ...NONE };
  /** Media URLs a forgotten coworker's versions named. */
  readonly urls = new Set<string>();
  /** Files whose media versions were deleted: dropped unless another version still names them. */
  readonly shas = new Set<string>();
  /** The texts by which a message tells of a forgotten coworker. */
  readonly needles: string[] = [];
  /** Messages of runs before this one are old history (`olderThan`). */
  olderRun: number | null = null;
  /** Whether the prune deleted anything that named a forgotten coworker. */
  personal = false;

  constructor(
    readonly conn: SqlPort,
    readonly request: PruneRequest,
  ) {}
}

/**
 * The prune itself, inside the dialect's transaction: forgets the coworkers, prunes the old
 * history, drops media and messages only they needed, and records the horizons it moved.
 */
async function pruneRows(conn: SqlPort, request: PruneRequest): Promise<PruneWork> {
  const pass = new Pass(conn, request);
  const removedBefore =
    request.removedBefore === null ? null : await forgetRemoved(pass, request.removedBefore);
  const historyBefore = request.olderThan === null ? null : await pruneOlder(pass, request.olderThan);
  await dropMediaUrls(pass);
  const droppedFiles = await dropUnusedFiles(pass);
  const pendingMessages = await forgetMessages(pass);
  const { counts } = pass;
  const deleted = Object.values(counts).some((n) => n > 0);
  if (deleted && (removedBefore !== null || historyBefore !== null)) {
    await conn.run(
      `insert into prunes (at, removed_before, history_before, coworkers, versions, positions, changes,
         media_versions, files, messages) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [request.now, removedBefore, historyBefore, ...RECORDED.map((name) => counts[name])],
    );
  }
  const personal = pass.personal || counts.coworkers > 0;
  return { counts, droppedFiles, pendingMessages, deleted, personal };
}

/** Forgets every coworker removed by `cutoff`; the removal horizon, or null when none was. */
async function forgetRemoved(pass: Pass, cutoff: string): Promise<string | null> {
  const { conn, counts } = pass;
  const latest = `select max(r.finished_at) ${FORGOTTEN_RUNS}`;
  const [horizon = null] = await conn.values<string | null>(latest, [cutoff]);
  if (horizon === null) return null;
  await readForgotten(pass, cutoff);
  const pruned = `(select v.id from versions v where v.uuid in (${FORGOTTEN}))`;
  counts.changes += await conn.run(`delete from changes where uuid in (${FORGOTTEN})`, [cutoff]);
  counts.positions += await conn.run(`delete from listing_positions where version_id in ${pruned}`, [cutoff]);
  counts.versions += await conn.run(`delete from versions where uuid in (${FORGOTTEN})`, [cutoff]);
  counts.coworkers += await conn.run(`delete from coworkers where uuid in (${FORGOTTEN})`, [cutoff]);
  return horizon;
}

/**
 * The texts that tell of the coworkers to forget (their names read from their versions) into
 * `needles`, and the media URLs those versions name into `urls`.
 */
async function readForgotten(pass: Pass, cutoff: string): Promise<void> {
  const people = new Map<string, ForgottenPerson>();
  const versions = `select v.id, v.uuid, v.body from versions v where v.uuid in (${FORGOTTEN}) and v.id > ? order by v.id`;
  for await (const [, uuid, body] of walk<[number, string, string]>(pass.conn, versions, [cutoff], BATCH)) {
    const person = people.get(uuid) ?? { uuid, names: [] };
    const name = entryField(body, 'name');
    if (typeof name === 'string' && name.trim() !== '' && !person.names.includes(name))
      person.names.push(name);
    people.set(uuid, person);
    for (const url of pass.request.mediaUrlsOf(body)) pass.urls.add(url);
  }
  // A coworker without any version left (none is written so, but a row is a row) is forgotten too.
  for (const uuid of await pass.conn.values<string>(FORGOTTEN, [cutoff])) {
    if (!people.has(uuid)) people.set(uuid, { uuid, names: [] });
  }
  for (const person of people.values()) pass.needles.push(...pass.request.mentions(person));
}

/**
 * Prunes the changes and closed versions older than the latest succeeded run finished by `olderThan`
 * (Rh), keeping everything the listing at Rh and every later run needs, each coworker's latest state
 * of each appearance (a removed one's last entry included), and Rh's own changes. The history
 * horizon (Rh's finish), or null when there was nothing before it.
 */
async function pruneOlder(pass: Pass, olderThan: string): Promise<string | null> {
  const { conn, counts } = pass;
  const [kept] = await conn.rows<[number, string]>(latestSucceededSql('id, finished_at', true), [olderThan]);
  if (kept === undefined) return null;
  const older = () => counts.changes + counts.positions + counts.versions + counts.mediaVersions;
  const before = older();
  const [rh, finishedAt] = kept;
  pass.olderRun = rh;
  // A run's changes come from its diff against the run before: Rh's say how its listing came to be.
  counts.changes += await conn.run('delete from changes where run_id < ?', [rh]);
  // Succeeded runs commit one at a time, in id order: a span closed by Rh or earlier ends before Rh.
  counts.positions += await conn.run(
    'delete from listing_positions where valid_to_run is not null and valid_to_run <= ?',
    [rh],
  );
  // A version closed by Rh or earlier is no listing's from Rh on (its positions closed with it);
  // the latest of its appearance stays (a removed coworker's last entry), and so does one that a
  // change of Rh still names (a removal at Rh).
  counts.versions += await conn.run(
    `delete from versions
      where valid_to_run is not null and valid_to_run <= ?
        and exists (select 1 from versions w
                     where w.uuid = versions.uuid and w.slot = versions.slot and w.id > versions.id)
        and id not in (select version_id from changes where run_id = ? and version_id is not null)`,
    [rh, rh],
  );
  await deleteMediaVersions(pass, 'valid_to_run is not null and valid_to_run <= ?', [rh]);
  return older() > before ? finishedAt : null;
}

/** Deletes the media versions `where` selects; their files are dropped if nothing else names them. */
async function deleteMediaVersions(pass: Pass, where: string, params: readonly unknown[]): Promise<void> {
  const deleted = `delete from media_versions where ${where} returning sha256`;
  const shas = await pass.conn.values<string>(deleted, params);
  for (const sha of shas) pass.shas.add(sha);
  pass.counts.mediaVersions += shas.length;
}

/**
 * Deletes the media versions and validators of the URLs only forgotten coworkers named: a URL that
 * a kept version's entry still names keeps its rows (another coworker's picture, the same file).
 */
async function dropMediaUrls(pass: Pass): Promise<void> {
  const { conn, counts } = pass;
  if (pass.urls.size === 0) return;
  const named = conn.list('text', [...pass.urls]);
  const held = await conn.values<string>(
    `select url from media_versions where url in ${named.sql}
      union select url from media_urls where url in ${named.sql}`,
    [named.param, named.param],
  );
  const candidates = new Set(held);
  if (candidates.size === 0) return;
  // Every kept entry, read once: a media URL is named by a field, never found by a text search.
  const versions = 'select id, body from versions where id > ? order by id';
  for await (const [, body] of walk<[number, string]>(conn, versions, [], BATCH)) {
    if (candidates.size === 0) break;
    for (const url of pass.request.mediaUrlsOf(body)) candidates.delete(url);
  }
  if (candidates.size === 0) return;
  const gone = conn.list('text', [...candidates]);
  await deleteMediaVersions(pass, `url in ${gone.sql}`, [gone.param]);
  counts.mediaUrls += await conn.run(`delete from media_urls where url in ${gone.sql}`, [gone.param]);
}

/**
 * Marks dropped the files whose media versions went and that no other version names, as
 * MEDIA_RETENTION drops files (the row stays, saying a file was there); their sha256s, sorted.
 */
async function dropUnusedFiles({ conn, request, counts, shas }: Pass): Promise<string[]> {
  if (shas.size === 0) return [];
  const named = conn.list('text', [...shas]);
  const dropped = await conn.values<string>(
    `update media_blobs set dropped_at = ?
      where dropped_at is null and sha256 in ${named.sql}
        and not exists (select 1 from media_versions mv where mv.sha256 = media_blobs.sha256)
      returning sha256`,
    [request.now, named.param],
  );
  counts.files += dropped.length;
  return dropped.sort();
}

/** A digest's period is its key: the row is kept, emptied, so the period is not written again. */
const DIGEST_KEY = "substr(webhook_id, 1, 7) = 'digest_'";

/** Whether a delivery of message `m` is still pending, as 1 or 0 in both dialects. */
const WAITING = `case when exists (select 1 from webhook_deliveries d
                                   where d.message_id = m.id and d.status = 'pending') then 1 else 0 end`;

/** A message an earlier prune found still owed: its people are forgotten already, but not the message. */
const OWED = "m.pruned_at is not null and m.body <> ''";

/**
 * Forgets the outbox messages that told of what was pruned and that no receiver is still owed:
 * their deliveries and delivery log go, the message too (a digest keeps its key, emptied). A
 * message of a run before the history horizon tells of pruned history; one whose text holds a
 * forgotten coworker's uuid or name tells of them. One still owed to a receiver is marked, and the
 * first prune after its deliveries end forgets it. Answers how many such messages are still pending.
 */
async function forgetMessages(pass: Pass): Promise<number> {
  const { conn, counts } = pass;
  // The third column: whether the message tells of a forgotten coworker.
  const told = await conn.rows<[number, number, number]>(
    `select m.id, ${WAITING}, case when ${OWED} then 1 else 0 end from webhook_messages m
      where m.run_id < ? or ${OWED}`,
    [pass.olderRun],
  );
  const waitingOf = new Map<number, boolean>();
  for (const [id, waiting, personal] of [...told, ...(await messagesMentioning(pass))]) {
    waitingOf.set(id, waiting === 1);
    if (personal === 1 && waiting === 0) pass.personal = true;
  }
  const done = [...waitingOf].filter(([, waiting]) => !waiting).map(([id]) => id);
  const waiting = [...waitingOf].filter(([, w]) => w).map(([id]) => id);
  if (waiting.length > 0) {
    const marked = conn.list('bigint', waiting);
    await conn.run(
      `update webhook_messages set pruned_at = ? where id in ${marked.sql} and pruned_at is null`,
      [pass.request.now, marked.param],
    );
  }
  if (done.length === 0) return waiting.length;
  const ids = conn.list('bigint', done);
  counts.attempts += await conn.run(
    `delete from webhook_attempts where delivery_id in
       (select id from webhook_deliveries where message_id in ${ids.sql})`,
    [ids.param],
  );
  counts.deliveries += await conn.run(`delete from webhook_deliveries where message_id in ${ids.sql}`, [
    ids.param,
  ]);
  const deleted = await conn.run(
    `delete from webhook_messages where id in ${ids.sql} and not ${DIGEST_KEY}`,
    [ids.param],
  );
  const emptied = await conn.run(
    `update webhook_messages set body = '' where id in ${ids.sql} and ${DIGEST_KEY} and body <> ''`,
    [ids.param],
  );
  counts.messages += deleted + emptied;
  return waiting.length;
}

/** The messages whose text holds a forgotten coworker's needle, as `forgetMessages` reads them. */
async function messagesMentioning({ conn, needles }: Pass): Promise<[number, number, number][]> {
  const found: [number, number, number][] = [];
  if (needles.length === 0) return found;
  const messages = `select m.id, m.body, ${WAITING} from webhook_messages m where m.id > ? order by m.id`;
  for await (const [id, body, waiting] of walk<[number, string, number]>(conn, messages, [], BATCH)) {
    if (needles.some((needle) => body.includes(needle))) found.push([id, waiting, 1]);
  }
  return found;
}

/**
 * The prune: its rows in the dialect's `transaction` (one, under the run lock), `scrub` after the
 * commit (null when the deleted bytes are unreadable in the database's files, else why not), and
 * the horizons it leaves, read with `port`.
 */
export async function prune(
  port: Pick<SqlPort, 'rows'>,
  request: PruneRequest,
  transaction: (work: (tx: SqlPort) => Promise<PruneWork>) => Promise<PruneWork>,
  scrub: (work: PruneWork) => Promise<string | null>,
): Promise<PruneOutcome> {
  const work = await transaction((tx) => pruneRows(tx, request));
  const scrubProblem = await scrub(work);
  const { counts, droppedFiles, pendingMessages } = work;
  const horizon = await readHorizon(port);
  return { counts, droppedFiles, pendingMessages, horizon, scrubbed: scrubProblem === null, scrubProblem };
}

/** The horizons the recorded prunes leave: the latest of each kind. */
export async function readHorizon(conn: Pick<SqlPort, 'rows'>): Promise<PruneHorizon> {
  const [row] = await conn.rows<[string | null, string | null]>(
    'select max(removed_before), max(history_before) from prunes',
  );
  return { removedBefore: row?.[0] ?? null, historyBefore: row?.[1] ?? null };
}
