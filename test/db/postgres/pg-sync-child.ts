/**
 * One sync into PostgreSQL in its own process, for the crash test:
 * `node --import tsx test/db/postgres/pg-sync-child.ts <database url> <upstream url>`. Prints one
 * JSON line per marker: `{"marker":"commit"}` as the run's commit starts, `{"marker":"done","runId":n}`
 * once runSync resolved (then waits for stdin to close, so a kill aimed past the commit still finds
 * it alive), `{"marker":"error",code,message}` and exit 9 when the sync threw.
 */
import { writeSync } from 'node:fs';
import { parsePostgresUrl } from '../../../src/config/database-url.js';
import { openPgStore } from '../../../src/db/postgres/store.js';
import { toMirrorError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/logger.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { syncConfig } from '../../helpers/config.js';

const mark = (marker: string, fields: Record<string, unknown> = {}): void => {
  writeSync(1, `${JSON.stringify({ marker, ...fields })}\n`);
};

const [databaseUrl = '', upstreamUrl = ''] = process.argv.slice(2);
const target = parsePostgresUrl(databaseUrl);
if (!target.ok) throw new Error(target.problem);
const store = await openPgStore(target.value, { instanceId: `crash-child/${process.pid}` });
// A sync commits through its stage: mark as that commit starts.
const openStage = store.openStage;
store.openStage = async (runId) => {
  const stage = await openStage(runId);
  const commit = stage.commit.bind(stage);
  stage.commit = (input) => {
    mark('commit');
    return commit(input);
  };
  return stage;
};
try {
  const summary = await runSync(syncConfig(upstreamUrl), { store, logger: silentLogger() });
  mark('done', { runId: summary.runId });
  process.stdin.resume();
  process.stdin.on('end', () => void store.close().then(() => process.exit(0)));
} catch (error) {
  const failure = toMirrorError(error);
  mark('error', { code: failure.code, message: failure.message });
  await store.close();
  process.exit(9);
}
