import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BUILT_CLI } from '../helpers/process.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

// `coworker-mirror changes | head`: the reader takes what it needs and closes the pipe. The output
// is then done, not failed: the command ends quietly with 0, as `cat` piped into `head` does.
describe('a CLI whose reader closes the pipe early', () => {
  it('regression: `changes | head` exits 0 without a stack (EPIPE)', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 3, count: 2000 });
    await sync(store, upstream);
    store.close();
    const child = spawn(process.execPath, [BUILT_CLI, 'changes', '--limit', 'all', '--db', store.file], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TZ: 'UTC' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    // Like `head`: the first lines read, then the pipe closed while the command still writes.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  });
});
