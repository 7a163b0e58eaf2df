import { WriteStream } from 'node:tty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  renderChanges,
  renderDeliveries,
  renderFound,
  renderHistory,
  renderRuns,
} from '../../src/cli/human-output.js';
import { styleFor, type Style } from '../../src/cli/terminal.js';
import type { ChangeView, RunView } from '../../src/views/history-views.js';

// Local times print in the process's zone; the expectations are written for UTC.
const savedTz = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'UTC';
});
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const plain: Style = { color: false, now: NOW };

function run(patch: Partial<RunView>): RunView {
  return {
    id: 1,
    status: 'succeeded',
    started_at: '2026-11-23T11:55:00.123Z',
    finished_at: '2026-11-23T11:55:00.423Z',
    upstream: 'https://example.com',
    pages: 6,
    entries: 45,
    added: 0,
    changed: 0,
    removed: 0,
    returned: 0,
    unchanged: 45,
    unknown_fields: [],
    error: null,
    rebound_from: null,
    trigger: 'schedule',
    scheduled_for: '2026-11-23T11:55:00.000Z',
    ...patch,
  };
}

const CHANGES: ChangeView[] = [
  {
    id: 3,
    run: 12,
    at: '2026-11-23T11:58:00.000Z',
    uuid: 'a30dql4rhg445q660a3hq0xmtdctzgtn',
    appearance: 0,
    kind: 'changed',
    field: 'post',
    old: 'QA',
    new: 'qa lead',
  },
  {
    id: 2,
    run: 3,
    at: '2026-11-20T09:00:00.000Z',
    uuid: 'fajzlasz8nqsai6525cfh4wk90vxdyg2',
    appearance: 1,
    kind: 'added',
    new: { name: 'Zoë Dvořák' },
  },
];
const NAMES = new Map([
  ['a30dql4rhg445q660a3hq0xmtdctzgtn', '王雨桐'],
  ['fajzlasz8nqsai6525cfh4wk90vxdyg2', 'Zoë Dvořák'],
]);

describe('human output', () => {
  it('runs: aligned columns, what started each, local time without milliseconds, relative time, counts, errors, legend', () => {
    const lines = renderRuns(
      [
        run({ id: 13, trigger: 'catch-up', scheduled_for: '2026-11-22T23:50:00.000Z' }),
        run({ id: 12, added: 1, changed: 2, unchanged: 42, rebound_from: 'https://old.example' }),
        run({
          id: 11,
          status: 'failed',
          trigger: 'admin',
          scheduled_for: null,
          started_at: '2026-11-22T11:00:00.000Z',
          finished_at: '2026-11-22T11:00:02.000Z',
          entries: null,
          error: { code: 'UPSTREAM_NETWORK', message: 'network error (ECONNREFUSED)' },
        }),
        run({
          id: 10,
          trigger: null,
          scheduled_for: null,
          started_at: '2026-11-21T11:00:00.000Z',
          finished_at: '2026-11-21T11:00:00.300Z',
        }),
      ],
      plain,
    );
    expect(lines).toEqual([
      'RUN  STATUS     TRIGGER                       STARTED                            TOOK  ENTRIES  +  ~  -  ↺   =  NOTE',
      ' 13  succeeded  catch-up 2026-11-22 23:50:00  2026-11-23 11:55:00 (5 min. ago)  0.3 s       45  0  0  0  0  45',
      ' 12  succeeded  schedule 11:55:00             2026-11-23 11:55:00 (5 min. ago)  0.3 s       45  1  2  0  0  42  rebound from https://old.example',
      ' 11  failed     admin                         2026-11-22 11:00:00 (yesterday)   2.0 s        -                  UPSTREAM_NETWORK: network error (ECONNREFUSED)',
      ' 10  succeeded  -                             2026-11-21 11:00:00 (2 days ago)  0.3 s       45  0  0  0  0  45',
      '',
      'legend: + added  ~ changed  - removed  ↺ returned  = unchanged',
    ]);
  });

  it('changes: the name beside every uuid, aligned whatever the display width of names', () => {
    expect(renderChanges(CHANGES, NAMES, plain)).toEqual([
      'WHEN                              RUN  NAME        UUID                                CHANGE',
      "2026-11-23 11:58:00 (2 min. ago)   12  王雨桐      a30dql4rhg445q660a3hq0xmtdctzgtn    ~ post 'QA' → 'qa lead'",
      '2026-11-20 09:00:00 (3 days ago)    3  Zoë Dvořák  fajzlasz8nqsai6525cfh4wk90vxdyg2#2  + joined',
      '',
      'legend: + added  ~ changed  - removed  ↺ returned',
    ]);
    expect(renderChanges([], NAMES, plain)).toEqual(['no changes']);
  });

  it('history: each version as its fields, what changed marked with the value before', () => {
    const entry = (post: string) => ({
      uuid: 'a30dql4rhg445q660a3hq0xmtdctzgtn',
      name: '王雨桐',
      post,
      emoji_file: null,
      emoji_file_webm: null,
      show_image: true,
      images: [],
    });
    const lines = renderHistory(
      {
        coworker: {
          uuid: 'a30dql4rhg445q660a3hq0xmtdctzgtn',
          first_seen_run: 3,
          first_seen_at: '2026-11-20T09:00:00.000Z',
          last_seen_run: 12,
          last_seen_at: '2026-11-23T11:58:00.000Z',
          removed: false,
          removed_run: null,
          removed_at: null,
          returned_count: 0,
        },
        name: '王雨桐',
        versions: [
          { id: 7, uuid: 'x', appearance: 0, valid_from_run: 3, valid_to_run: 12, entry: entry('QA') },
          {
            id: 9,
            uuid: 'x',
            appearance: 0,
            valid_from_run: 12,
            valid_to_run: null,
            entry: entry('qa lead'),
          },
        ],
        changes: [CHANGES[0] as ChangeView],
      },
      plain,
    );
    expect(lines).toEqual([
      '王雨桐  a30dql4rhg445q660a3hq0xmtdctzgtn',
      'present · first seen run 3, 2026-11-20 09:00:00 (3 days ago) · last seen run 12, 2026-11-23 11:58:00 (2 min. ago)',
      '',
      '  version 1 · runs 3–11',
      '       name             王雨桐',
      '       post             QA',
      '       emoji_file       (none)',
      '       emoji_file_webm  (none)',
      '       show_image       true',
      '       images           (empty list)',
      '  version 2 · from run 12, current',
      '       name             王雨桐',
      '    ~  post             qa lead  (was QA)',
      '       emoji_file       (none)',
      '       emoji_file_webm  (none)',
      '       show_image       true',
      '       images           (empty list)',
      '',
      'changes',
      "  2026-11-23 11:58:00  run 12  ~ post 'QA' → 'qa lead'",
      '',
      'legend: + added  ~ changed  - removed  ↺ returned; versions: ~ differs from the version before',
    ]);
  });

  it('find: name, uuid, post and whether present', () => {
    expect(
      renderFound(
        [{ uuid: 'a30dql4rhg445q660a3hq0xmtdctzgtn', name: 'Zoë', post: 'CTO', removed: true }],
        plain,
      ),
    ).toEqual([
      'NAME  UUID                              POST  STATUS',
      'Zoë   a30dql4rhg445q660a3hq0xmtdctzgtn  CTO   removed',
    ]);
  });

  it('colours only when asked, and the widths ignore the colour codes', () => {
    const coloured = renderChanges(CHANGES, NAMES, { color: true, now: NOW });
    expect(coloured.join('\n')).toContain('\u001b[');
    expect(renderChanges(CHANGES, NAMES, plain).join('\n')).not.toContain('\u001b[');
    // eslint-disable-next-line no-control-regex -- ANSI colour codes are exactly what is stripped
    const strip = (line: string) => line.replace(/\u001b\[[0-9;]*m/g, '');
    expect(coloured.map(strip)).toEqual(renderChanges(CHANGES, NAMES, plain));
  });

  it('NO_COLOR turns colour off even on a terminal that has it', () => {
    // Node's own colour rules (NO_COLOR, FORCE_COLOR, TERM), applied to a given environment.
    const terminal = (env: Record<string, string>) =>
      ({
        isTTY: true,
        hasColors: () => WriteStream.prototype.getColorDepth.call(undefined, env) >= 4,
      }) as unknown as NodeJS.WriteStream;
    expect(styleFor(terminal({ TERM: 'xterm-256color' })).color).toBe(true);
    expect(styleFor(terminal({ TERM: 'xterm-256color', NO_COLOR: '1' })).color).toBe(false);
    expect(styleFor({ isTTY: false, hasColors: () => true } as unknown as NodeJS.WriteStream).color).toBe(
      false,
    );
  });
});

describe('deliveries', () => {
  it('print like runs: a header row, local times without a Z, the answer in words', () => {
    const lines = renderDeliveries(
      [
        {
          id: 12,
          webhook_id: 'msg_abc',
          type: 'coworkers.changed',
          run: 7,
          endpoint: { id: 2, url: 'https://hooks.example.com/…', disabled: true, disabled_reason: '410' },
          status: 'failed',
          attempts: 3,
          next_attempt_at: null,
          created_at: '2026-11-23T11:50:00.000Z',
          finished_at: '2026-11-23T11:55:00.000Z',
          last_attempt: {
            at: '2026-11-23T11:55:00.123Z',
            duration_ms: 41,
            http_status: 410,
            ok: false,
            error: null,
            response_excerpt: null,
          },
        },
      ],
      plain,
    );
    expect(lines).toEqual([
      'DELIVERY  STATUS  TYPE               RUN  WEBHOOK-ID  ENDPOINT                                  TRIES  LAST TRY                          ANSWER        NEXT TRY',
      '      12  failed  coworkers.changed    7  msg_abc     2 https://hooks.example.com/… (disabled)      3  2026-11-23 11:55:00 (5 min. ago)  410 in 41 ms',
    ]);
    expect(renderDeliveries([], plain)).toEqual(['no deliveries']);
  });
});
