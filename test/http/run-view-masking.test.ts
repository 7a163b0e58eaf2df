import { describe, expect, it } from 'vitest';
import { runView } from '../../src/views/history-views.js';
import type { RunRow } from '../../src/db/schema.js';

describe('regression: runs stored with a password in their upstream (before masking at the source)', () => {
  it('are served with the password masked', () => {
    const row: RunRow = {
      id: 1,
      status: 'succeeded',
      startedAt: '2026-11-20T09:00:00.000Z',
      finishedAt: '2026-11-20T09:00:01.000Z',
      upstream: 'https://mirror:old-pass@example.com',
      holderPid: null,
      holderHost: null,
      holderToken: null,
      heartbeatAt: null,
      pages: 1,
      entries: 3,
      pageSize: 8,
      added: 3,
      changed: 0,
      removed: 0,
      returned: 0,
      unchanged: 0,
      optionsBodyId: null,
      unknownFields: null,
      errorCode: null,
      errorMessage: null,
      reboundFrom: null,
      trigger: null,
      scheduledFor: null,
    };
    expect(runView(row).upstream).toBe('https://mirror:***@example.com');
  });
});
