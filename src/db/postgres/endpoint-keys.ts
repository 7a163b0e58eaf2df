import { NOTIFY_ENDPOINT_PREFIX, WEBHOOK_ENDPOINT_PREFIX, webhookEndpointKey } from '../run-commit.js';
import type { PgContext } from './context.js';
import { one, rows, run, transaction } from './sql.js';

/**
 * Rows written before endpoints were keyed hold a webhook URL in clear: each becomes its key (a
 * row already holding that key takes over its deliveries), as src/db/sqlite/outbox.ts's
 * keyClearEndpointUrls does on SQLite. Idempotent, and safe when instances open at once: the rows
 * are locked, and a second opener finds nothing left to convert. Answers the rows converted.
 */
export async function keyClearEndpointUrls(ctx: PgContext): Promise<number> {
  return transaction(ctx.pool, async ({ client }) => {
    const clear = await rows<{ id: number; url: string }>(
      client,
      `select id, url from webhook_endpoints
        where left(url, $1) != $2 and left(url, $3) != $4 order by id for update`,
      [
        WEBHOOK_ENDPOINT_PREFIX.length,
        WEBHOOK_ENDPOINT_PREFIX,
        NOTIFY_ENDPOINT_PREFIX.length,
        NOTIFY_ENDPOINT_PREFIX,
      ],
    );
    for (const row of clear) {
      const key = webhookEndpointKey(row.url);
      const existing = await one<{ id: number }>(client, 'select id from webhook_endpoints where url = $1', [
        key,
      ]);
      if (existing === undefined) {
        await run(client, 'update webhook_endpoints set url = $1 where id = $2', [key, row.id]);
        continue;
      }
      await run(client, 'update webhook_deliveries set endpoint_id = $1 where endpoint_id = $2', [
        existing.id,
        row.id,
      ]);
      await run(client, 'delete from webhook_endpoints where id = $1', [row.id]);
    }
    return clear.length;
  });
}
