import { describe, expect, it } from 'vitest';
import { renderChanges, renderFound, renderHistory, renderRuns } from '../../src/cli/human-output.js';
import { errorReport } from '../../src/cli/report.js';
import { visible, type Style } from '../../src/cli/terminal.js';
import type { ChangeView, RunView } from '../../src/views/history-views.js';
import { MirrorError } from '../../src/errors.js';

// Regression: `changes` and `history` wrote a hostile post's escape sequences raw: clear screen,
// retitle the window, recolour; BEL, DEL, C1 and U+2028 too.
const HOSTILE = 'a\u001b[2J\u001b]0;owned\u0007b\u001b[31mred\u007f\u0085\u009b2J\u2028\u202eevil\ttab\nline';
const SHOWN = 'a^[[2J^[]0;owned^Gb^[[31mred^?<U+0085><U+009B>2J<U+2028><U+202E>evil^Itab^Jline';
const UUID = 'a30dql4rhg445q660a3hq0xmtdctzgtn';
const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const plain: Style = { color: false, now: NOW };
const coloured: Style = { color: true, now: NOW };

// eslint-disable-next-line no-control-regex -- the characters a terminal obeys are what is looked for
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e]/;
// eslint-disable-next-line no-control-regex -- the mirror's own colours are the only escapes allowed
const OWN_COLOURS = /\u001b\[[0-9;]*m/g;

const change: ChangeView = {
  id: 1,
  run: 2,
  at: '2026-11-23T11:58:00.000Z',
  uuid: UUID,
  appearance: 0,
  kind: 'changed',
  field: `post${HOSTILE}`,
  old: HOSTILE,
  new: [HOSTILE, { nested: HOSTILE }],
};
const media: ChangeView = {
  ...change,
  id: 2,
  kind: 'media_changed',
  field: 'images',
  old: { url: 'http://x/a.png', sha256: 'aa' },
  new: { url: `http://x/${HOSTILE}.png`, sha256: 'bb' },
};

function run(): RunView {
  return {
    id: 1,
    status: 'failed',
    started_at: '2026-11-23T11:55:00.000Z',
    finished_at: '2026-11-23T11:55:01.000Z',
    upstream: 'http://x',
    pages: null,
    entries: null,
    added: 0,
    changed: 0,
    removed: 0,
    returned: 0,
    unchanged: 0,
    unknown_fields: [HOSTILE],
    error: { code: 'UPSTREAM_SCHEMA', message: HOSTILE },
    rebound_from: null,
    trigger: 'schedule',
    scheduled_for: '2026-11-23T11:50:00.000Z',
  };
}

function outputs(style: Style): string[] {
  const names = new Map([[UUID, HOSTILE]]);
  const entry = { uuid: UUID, name: HOSTILE, post: HOSTILE, [HOSTILE]: 1 };
  return [
    ...renderChanges([change, media], names, style),
    ...renderFound([{ uuid: `${UUID}${HOSTILE}`, name: HOSTILE, post: HOSTILE, removed: false }], style),
    ...renderRuns([run()], style),
    ...renderHistory(
      {
        coworker: {
          uuid: `${UUID}${HOSTILE}`,
          first_seen_run: 1,
          first_seen_at: '2026-11-20T09:00:00.000Z',
          last_seen_run: 2,
          last_seen_at: '2026-11-23T11:58:00.000Z',
          removed: false,
          removed_run: null,
          removed_at: null,
          returned_count: 0,
        },
        name: HOSTILE,
        versions: [
          { id: 1, uuid: UUID, appearance: 0, valid_from_run: 1, valid_to_run: 2, entry: { uuid: UUID } },
          { id: 2, uuid: UUID, appearance: 0, valid_from_run: 2, valid_to_run: null, entry },
        ],
        changes: [change, media],
      },
      style,
    ),
  ];
}

describe('terminal escaping of upstream text', () => {
  it('draws control characters visibly, as less and git log do', () => {
    expect(visible(HOSTILE)).toBe(SHOWN);
    // Printable text, accents, wide characters and emoji (with their joiners) are left alone.
    expect(visible('Zoë 王雨桐 👩‍💻 ^ <U+0041>')).toBe('Zoë 王雨桐 👩‍💻 ^ <U+0041>');
  });

  it('changes, history, find and runs write no character a terminal obeys', () => {
    for (const line of outputs(plain)) expect(line).not.toMatch(CONTROL);
    expect(outputs(plain).join('\n')).toContain(SHOWN);
  });

  it('with colour on, the only escape sequences are the mirror own colours', () => {
    for (const line of outputs(coloured)) expect(line.replace(OWN_COLOURS, '')).not.toMatch(CONTROL);
  });

  it('an error report quoting upstream text shows it visibly (its own line breaks kept)', () => {
    const report = errorReport(new MirrorError('UPSTREAM_SCHEMA', `bad value ${HOSTILE}`), { debug: false });
    expect(report).toBe(`coworker-mirror: bad value ${SHOWN.replace('^J', '\n')}\n`);
  });
});
