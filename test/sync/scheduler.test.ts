import type { RunStart } from '../../src/db/store.js';
import { hostname } from 'node:os';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MirrorError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import { createScheduler } from '../../src/sync/scheduler.js';
import { tickServedError, type TickServer } from '../../src/db/tick-claims.js';

interface Line {
  level: 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

/** A logger that records what the scheduler says. */
function recordingLogger(lines: Line[]): Logger {
  const at =
    (level: Line['level']) =>
    (obj: Record<string, unknown>, msg: string): void =>
      void lines.push({ level, obj, msg });
  const logger = { info: at('info'), warn: at('warn'), error: at('error') } as unknown as Logger;
  (logger as unknown as { child: () => Logger }).child = () => logger;
  return logger;
}

const locked = () =>
  new MirrorError('SYNC_LOCKED', 'another sync holds the lock: run 7 (pid 4242 on other-host, started …)', {
    runId: 7,
    pid: 4242,
    host: 'other-host',
    startedAt: '2026-11-22T00:00:00.000Z',
  });

describe('scheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-11-22T00:00:00.500Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('regression: every tick refused by another process holding the lock is logged with the holder', async () => {
    const lines: Line[] = [];
    const run = vi.fn(() => Promise.reject(locked()));
    const scheduler = createScheduler({
      cronExpression: '* * * * * *',
      randomDelayMs: 0,
      logger: recordingLogger(lines),
      run,
    });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(3_000);
    await scheduler.stop(0);
    expect(run.mock.calls.length).toBeGreaterThanOrEqual(2);
    const refusals = lines.filter((l) => l.msg === 'sync refused: another process holds the lock');
    expect(refusals).toHaveLength(run.mock.calls.length);
    expect(refusals[0]).toEqual({
      level: 'warn',
      msg: 'sync refused: another process holds the lock',
      obj: {
        holderRunId: 7,
        holderPid: 4242,
        holderHost: 'other-host',
        holderStartedAt: '2026-11-22T00:00:00.000Z',
      },
    });
  });

  it('a tick during a run of this process is skipped and logged with the run, pid and host', async () => {
    const lines: Line[] = [];
    let finish: () => void = () => undefined;
    const run = vi.fn((_signal: AbortSignal, started: (id: number) => void) => {
      started(3);
      return new Promise<void>((resolve) => (finish = resolve));
    });
    const scheduler = createScheduler({
      cronExpression: '* * * * * *',
      randomDelayMs: 0,
      logger: recordingLogger(lines),
      run,
    });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(2_100);
    expect(run).toHaveBeenCalledTimes(1);
    expect(lines.filter((l) => l.msg === 'sync skipped: a run is in progress')[0]).toEqual({
      level: 'warn',
      msg: 'sync skipped: a run is in progress',
      obj: {
        trigger: 'schedule',
        tick: '2026-11-22T00:00:02.000Z',
        holderRunId: 3,
        holderPid: process.pid,
        holderHost: hostname(),
      },
    });
    finish();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(run).toHaveBeenCalledTimes(2);
    finish();
    await scheduler.stop(0);
  });

  it('the random delay postpones each run within its bound', async () => {
    const run = vi.fn(() => Promise.resolve());
    const scheduler = createScheduler({
      cronExpression: '* * * * * *',
      randomDelayMs: 10_000,
      random: () => 0.5,
      logger: recordingLogger([]),
      run,
    });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(run).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(run).toHaveBeenCalledTimes(1);
    await scheduler.stop(0);
  });

  it('each run claims the nominal time of its tick, the same on every instance whatever its random delay', async () => {
    const starts: RunStart[] = [];
    const run = vi.fn((_signal: AbortSignal, _started: (id: number) => void, start: RunStart) => {
      starts.push(start);
      return Promise.resolve();
    });
    const scheduler = createScheduler({
      cronExpression: '*/10 * * * * *',
      randomDelayMs: 8_000,
      random: () => 0.75,
      logger: recordingLogger([]),
      run,
    });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(30_000);
    await scheduler.stop(0);
    // Ticks at :10 and :20 ran 6 s late; each names its tick, not the moment it ran.
    expect(starts).toEqual([
      { trigger: 'schedule', scheduledFor: '2026-11-22T00:00:10.000Z' },
      { trigger: 'schedule', scheduledFor: '2026-11-22T00:00:20.000Z' },
    ]);
  });

  it('regression: a tick another instance already served starts no run, and says so in one info line naming that instance', async () => {
    const lines: Line[] = [];
    const run = vi.fn(() => Promise.resolve());
    const served: TickServer = {
      id: 41,
      status: 'succeeded',
      startedAt: '2026-11-22T00:00:01.200Z',
      holderPid: 4242,
      holderHost: 'other-host',
    };
    const asked: string[] = [];
    const scheduler = createScheduler({
      cronExpression: '* * * * * *',
      randomDelayMs: 0,
      logger: recordingLogger(lines),
      run,
      runOfTick: (tick) => {
        asked.push(tick);
        return Promise.resolve(served);
      },
    });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(2_000);
    await scheduler.stop(0);
    expect(run).not.toHaveBeenCalled();
    expect(asked).toEqual(['2026-11-22T00:00:01.000Z', '2026-11-22T00:00:02.000Z']);
    expect(lines.filter((l) => l.msg !== 'sync scheduled')).toEqual(
      asked.map(() => ({
        level: 'info',
        msg: 'tick already served',
        obj: { servedByRun: 41, servedBy: 'other-host/4242', servedByStatus: 'succeeded' },
      })),
    );
  });

  it('a claim lost in the store (TICK_SERVED from the run) is the same info line, and no warning', async () => {
    const lines: Line[] = [];
    const holder: TickServer = {
      id: 8,
      status: 'running',
      startedAt: '2026-11-22T00:00:01.100Z',
      holderPid: 77,
      holderHost: 'host-b',
    };
    const run = vi.fn((_signal: AbortSignal, _started: (id: number) => void, start: RunStart) =>
      Promise.reject(tickServedError(start.scheduledFor ?? '', holder)),
    );
    const scheduler = createScheduler({
      cronExpression: '* * * * * *',
      randomDelayMs: 0,
      logger: recordingLogger(lines),
      run,
      runOfTick: () => Promise.resolve(undefined),
    });
    const answer = await scheduler.trigger({ trigger: 'schedule', scheduledFor: '2026-11-22T00:00:00.000Z' });
    await vi.waitFor(() => expect(scheduler.running).toBe(false));
    await scheduler.stop(0);
    expect(answer).toEqual({ started: false, runningRunId: 8 });
    expect(lines).toEqual([
      {
        level: 'info',
        msg: 'tick already served',
        obj: { servedByRun: 8, servedBy: 'host-b/77', servedByStatus: 'running' },
      },
    ]);
  });
});
