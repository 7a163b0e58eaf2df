import type { Config } from '../config/load-config.js';
import { runView } from '../views/history-views.js';
import type { RunReader } from '../db/sqlite/run-reader.js';
import { stringifyJson } from '../json/safe-json.js';
import { EXIT } from './exit-codes.js';
import { renderRuns } from './human-output.js';
import { stdoutOutput, type Output } from './output.js';

/**
 * Reads runs through the cheapest open that can: a current SQLite file without the ORM, anything
 * else (PostgreSQL, a file to migrate, refuse or open read-only) through the store's one open.
 */
async function withRunReader<T>(
  config: Pick<Config, 'database'>,
  fn: (reader: Pick<RunReader, 'listRuns' | 'mediaRunsByIds'>) => Promise<T>,
): Promise<T> {
  const { target } = config.database;
  if (target.kind === 'sqlite') {
    const { openRunReader } = await import('../db/sqlite/run-reader.js');
    const reader = openRunReader(target.path);
    if (reader) {
      try {
        return await fn(reader);
      } finally {
        reader.close();
      }
    }
  }
  const { withExistingStoreAsync } = await import('./with-store.js');
  return withExistingStoreAsync(config, fn);
}

/** `runs`: newest first, as a table or JSON Lines. */
export async function runRunsCommand(
  config: Pick<Config, 'database'>,
  limit: number,
  json: boolean,
  out: Output = stdoutOutput(),
): Promise<number> {
  return withRunReader(config, async (reader) => {
    const runs = await reader.listRuns({ limit });
    const media = await reader.mediaRunsByIds(runs.map((r) => r.id));
    const rows = runs.map((r) => runView(r, media.get(r.id)));
    if (json) for (const r of rows) out.write(stringifyJson(r));
    else for (const line of renderRuns(rows, out.style)) out.write(line);
    return EXIT.ok;
  });
}
