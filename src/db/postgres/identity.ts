import type { IdentityName } from '../enums.js';
import type { PgContext } from './context.js';
import { one, run } from './sql.js';

/** The twin of src/db/sqlite/identity.ts: the value kept under `name`, else `fresh()` kept from now on. */
export async function identityValue(
  ctx: PgContext,
  name: IdentityName,
  fresh: () => string,
): Promise<string> {
  const read = () =>
    one<{ value: string }>(ctx.pool, 'select value from store_identity where name = $1', [name]);
  const held = await read();
  if (held !== undefined) return held.value;
  await run(
    ctx.pool,
    'insert into store_identity (name, value, created_at) values ($1, $2, $3) on conflict (name) do nothing',
    [name, fresh(), new Date().toISOString()],
  );
  const kept = await read();
  if (kept === undefined) throw new Error(`store_identity lost its ${name} row as it was written`);
  return kept.value;
}
