import {
  CLEAR_ENDPOINTS_SQL,
  DIGEST_MESSAGE_IDS_SQL,
  ENDPOINT_KEY_NAME,
  EndpointKeys,
  newEndpointKeyText,
  rekeyPlan,
} from './endpoint-keys.js';
import type { SqlPort, TransactionPort } from './sql-port.js';

// Keying a store's endpoints (src/db/endpoint-keys.ts), written once for both dialects. SQLite keys
// as the store opens, which is synchronous, PostgreSQL over its pool: so the transaction's steps are
// a generator of statements, each dialect answering them (`answeredNow` on SQLite, `endpointKeysOver` here).

/** A statement of the keying (`?` placeholders): its rows, or (`run`) how many rows it changed. */
export interface KeyingStatement {
  kind: 'rows' | 'run';
  sql: string;
  params: unknown[];
}

export type KeyingSteps = Generator<KeyingStatement, EndpointKeys, unknown>;

function* ask<T>(
  kind: KeyingStatement['kind'],
  sql: string,
  params: unknown[] = [],
): Generator<KeyingStatement, T, unknown> {
  return (yield { kind, sql, params }) as T;
}

/**
 * The key kept, else a new one kept from now on, and whether this transaction kept it. A second
 * opener at once waits for the first's transaction: its insert then does nothing, and it reads the
 * first's key back.
 */
function* keyEntry(): Generator<KeyingStatement, { value: string; created: boolean }, unknown> {
  const read = 'select value from store_identity where name = ?';
  const [held] = yield* ask<[string][]>('rows', read, [ENDPOINT_KEY_NAME]);
  if (held !== undefined) return { value: held[0], created: false };
  const inserted = yield* ask<number>(
    'run',
    'insert into store_identity (name, value, created_at) values (?, ?, ?) on conflict (name) do nothing',
    [ENDPOINT_KEY_NAME, newEndpointKeyText(), new Date().toISOString()],
  );
  const [kept] = yield* ask<[string][]>('rows', read, [ENDPOINT_KEY_NAME]);
  if (kept === undefined)
    throw new Error(`store_identity lost its ${ENDPOINT_KEY_NAME} row as it was written`);
  return { value: kept[0], created: inserted === 1 };
}

/**
 * In one write transaction: the store's key (made now if it has none), and its rows re-keyed. Only
 * the transaction that made the key re-keys the ids written before it.
 */
export function* rekeying(dialect: SqlPort['dialect']): KeyingSteps {
  const key = yield* keyEntry();
  const keys = new EndpointKeys(key.value);
  const former = key.created;
  const lock = dialect === 'postgres' ? ' for update' : '';
  const endpoints = yield* ask<[number, string][]>(
    'rows',
    `select id, url from webhook_endpoints order by id${lock}`,
  );
  const digestIds = former ? (yield* ask<[string][]>('rows', DIGEST_MESSAGE_IDS_SQL)).map(([id]) => id) : [];
  const plan = rekeyPlan(
    keys,
    endpoints.map(([id, url]) => ({ id, url })),
    digestIds,
    former,
  );
  for (const row of plan.renamed) {
    yield* ask('run', 'update webhook_endpoints set url = ? where id = ?', [row.url, row.id]);
  }
  for (const { from, into } of plan.merged) {
    yield* ask('run', 'update webhook_deliveries set endpoint_id = ? where endpoint_id = ?', [into, from]);
    yield* ask('run', 'delete from webhook_endpoints where id = ?', [from]);
  }
  if (dialect === 'sqlite') {
    const message = 'update webhook_messages set webhook_id = ? where webhook_id = ?';
    for (const { from, to } of plan.messages) yield* ask('run', message, [to, from]);
  } else if (plan.messages.length > 0) {
    // A digest message per target and period: a year of hourly digests is thousands, one statement.
    yield* ask(
      'run',
      `update webhook_messages m set webhook_id = n.keyed
         from unnest(?::text[], ?::text[]) as n(former, keyed) where m.webhook_id = n.former`,
      [plan.messages.map((m) => m.from), plan.messages.map((m) => m.to)],
    );
  }
  return keys;
}

/** The steps run to their end, each statement answered at once (SQLite, in a transaction of its own). */
export function answeredNow<T>(
  steps: Generator<KeyingStatement, T, unknown>,
  answer: (s: KeyingStatement) => unknown,
): T {
  let step = steps.next();
  while (step.done !== true) step = steps.next(answer(step.value));
  return step.value;
}

/**
 * The store's endpoint keys over the port (PostgreSQL): a database without a key gets one, and its
 * rows are re-keyed, in one write transaction.
 */
export async function endpointKeysOver(port: TransactionPort): Promise<EndpointKeys> {
  const [known] = await port.values<string>('select value from store_identity where name = ?', [
    ENDPOINT_KEY_NAME,
  ]);
  // The usual open: a key, and no row left in clear; nothing to write.
  if (known !== undefined && (await port.rows(CLEAR_ENDPOINTS_SQL)).length === 0)
    return new EndpointKeys(known);
  return port.write(async (tx) => {
    const steps = rekeying(tx.dialect);
    let step = steps.next();
    while (step.done !== true) {
      const { kind, sql, params } = step.value;
      step = steps.next(kind === 'rows' ? await tx.rows(sql, params) : await tx.run(sql, params));
    }
    return step.value;
  });
}
