import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { createLogger } from '../../src/logger.js';
import type { LogFormat } from '../../src/sync/child-output.js';
import { runIsolatedSync } from '../../src/sync/isolated-sync.js';
import { MemoryLog } from '../fuzz/memory-log.js';
import { tempDir } from '../helpers/temp-db.js';

/**
 * A stand-in for the CLI that writes to stderr what a real child may: its log records, then text
 * that is not one (node's warnings, V8's last words before an out-of-heap death), the last line
 * without its newline; it echoes its arguments first, as a record.
 */
const CHILD = `
process.stderr.write(JSON.stringify({ level: 30, msg: 'child arguments', args: process.argv.slice(2) }) + '\\n');
process.stderr.write('{"level":40,"msg":"a warning of the run"}\\n<--- Last few GCs --->\\n');
process.stderr.write('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory');
`;

async function runChild(format: LogFormat) {
  const dir = tempDir();
  const cliPath = join(dir, 'child.mjs');
  writeFileSync(cliPath, CHILD);
  const store = openDatabase(join(dir, 'mirror.db'));
  onTestFinished(() => store.close());
  const parentLog = new MemoryLog();
  let stderr = '';
  const sink = new PassThrough().on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const outcome = await runIsolatedSync(
    {
      execPath: process.execPath,
      nodeArgs: [],
      cliPath,
      syncArgs: ['--rebind'],
      start: { trigger: 'schedule', scheduledFor: '2026-11-22T10:00:00.000Z' },
      env: { PATH: process.env.PATH ?? '' },
      maxHeapMb: 64,
      maxDurationMs: 60_000,
      store,
      upstream: 'https://example.com',
      logger: createLogger({ level: 'info', pretty: false, destination: parentLog }),
      logFormat: format,
      stdout: new PassThrough().resume(),
      stderr: sink,
    },
    new AbortController().signal,
    () => undefined,
  ).then(
    () => 'resolved',
    (error: unknown) => (error as { code?: string }).code,
  );
  return { outcome, stderr, parentLog };
}

/**
 * The stand-in's first record: the arguments `start` gives its child, telling it the log format,
 * then the sync's own arguments, then what started the run.
 */
function argumentsRecord(format: LogFormat): string {
  const start = ['--trigger', 'schedule', '--scheduled-for', '2026-11-22T10:00:00.000Z'];
  const args = ['sync', '--sync-process', '--log-format', format, '--rebind', ...start];
  return JSON.stringify({ level: 30, msg: 'child arguments', args });
}

describe("the sync child's output under start", () => {
  it('in JSON the child is told so, its records pass as they are and any other line becomes a record of the parent', async () => {
    const { outcome, stderr, parentLog } = await runChild('json');
    // The stand-in exits 0 without a run: what matters here is its output.
    expect(outcome).toBe('resolved');
    expect(stderr.split('\n')).toEqual([
      argumentsRecord('json'),
      '{"level":40,"msg":"a warning of the run"}',
      '',
    ]);
    expect(parentLog.lines().map(({ level, msg, output }) => ({ level, msg, output }))).toEqual([
      {
        level: 40,
        msg: 'the sync process wrote a line that is not a log record',
        output: '<--- Last few GCs --->',
      },
      {
        level: 40,
        msg: 'the sync process wrote a line that is not a log record',
        output: 'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory',
      },
    ]);
  });

  it('on a terminal the child is told to log pretty lines, and its text goes to the person as it is', async () => {
    const { outcome, stderr, parentLog } = await runChild('pretty');
    expect(outcome).toBe('resolved');
    expect(stderr).toBe(
      argumentsRecord('pretty') +
        '\n{"level":40,"msg":"a warning of the run"}\n<--- Last few GCs --->\n' +
        'FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory',
    );
    expect(parentLog.lines()).toEqual([]);
  });
});
