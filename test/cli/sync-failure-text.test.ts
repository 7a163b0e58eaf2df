import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

// Regression: `sync` wrote the message of a failed run to the terminal as it was, and the message
// quotes the value the upstream sent: an override (U+202E) in it turned the rest of the line
// around, an escape sequence would have been obeyed. The message is now drawn as every other
// upstream text on a terminal is (`visible`): `<U+202E>`, `^[`.

beforeAll(() => ensureBuilt());

describe('sync that fails on a value the upstream sent', () => {
  it('draws the control characters the message quotes, never writes them', async () => {
    const [entry] = generateCoworkers(12, 1);
    if (!entry) throw new Error('a coworker was generated');
    const upstream = await simulatedUpstream({
      entries: [{ ...entry, images: ['\u202e\u001b[2Jgnp.live'] }],
    });
    const proc = runCli(['sync', '--upstream', upstream.url, '--db', join(tempDir(), 'mirror.db')], {});
    let stderr = '';
    proc.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    expect((await proc.exited).code).toBe(EXIT.upstreamRejected);
    const line = stderr.split('\n').find((l) => l.startsWith('coworker-mirror: sync failed')) ?? '';
    expect(line).toContain('[UPSTREAM_SCHEMA]');
    expect(line).toContain('<U+202E>\\u001b[2Jgnp.live');
    for (const raw of ['\u202e', '\u001b']) expect(line).not.toContain(raw);
  });
});
