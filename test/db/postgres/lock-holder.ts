/**
 * A process that takes the run lock and keeps it until killed, for the lock tests:
 * `node --import tsx test/db/postgres/lock-holder.ts <url> <instance id>`. Prints the JSON line
 * `{"marker":"held"}` once it holds the lock, or `{"marker":"refused",code,message}` and exits 4.
 */
import { parsePostgresUrl } from '../../../src/config/database-url.js';
import { takeRunLock } from '../../../src/db/postgres/run-lock.js';
import { isMirrorError } from '../../../src/errors.js';

const [url = '', instanceId = ''] = process.argv.slice(2);
const target = parsePostgresUrl(url);
if (!target.ok) throw new Error(target.problem);
try {
  const lock = await takeRunLock(target.value, instanceId);
  lock.lost.addEventListener('abort', () => process.exit(9));
  console.log(JSON.stringify({ marker: 'held' }));
  setInterval(() => undefined, 60_000);
} catch (error) {
  if (!isMirrorError(error)) throw error;
  console.log(JSON.stringify({ marker: 'refused', code: error.code, message: error.message }));
  process.exit(4);
}
