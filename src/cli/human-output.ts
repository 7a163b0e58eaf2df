import type { NamedCoworker } from '../db/store.js';
import type { ChangeView, CoworkerView, RunView, VersionView } from '../views/history-views.js';
import type { DeliveryView } from '../webhooks/delivery-queries.js';
import { localTime, paint, table, visible, when, type Style } from './terminal.js';
import { stringifyJson } from '../json/safe-json.js';
import { appearanceLabel, describeChange, phraseText } from '../notify/describe-change.js';

/** The symbols of change kinds, explained by every listing that uses them. */
const MARK = { added: '+', changed: '~', removed: '-', returned: '↺', media_changed: '▣' } as const;
const CHANGE_LEGEND = 'legend: + added  ~ changed  - removed  ↺ returned';

/** The legend of a listing: the media symbol is explained only where it shows. */
function changeLegend(changes: readonly ChangeView[]): string {
  const media = changes.some((c) => c.kind === 'media_changed');
  return media ? `${CHANGE_LEGEND}  ▣ new media bytes at the same URL` : CHANGE_LEGEND;
}
const RUN_LEGEND = 'legend: + added  ~ changed  - removed  ↺ returned  = unchanged';

const KIND_COLOUR = {
  added: 'green',
  changed: 'yellow',
  removed: 'red',
  returned: 'cyan',
  media_changed: 'magenta',
} as const;
const STATUS_COLOUR = { succeeded: 'green', failed: 'red', aborted: 'yellow', running: 'cyan' } as const;

/**
 * A value as a person reads it: strings bare, lists as "2 images", absent as "(none)"; control
 * characters drawn visibly, since every value is the upstream's.
 */
function showValue(value: unknown): string {
  if (value === undefined) return '(absent)';
  if (value === null) return '(none)';
  if (typeof value === 'string') return value === '' ? '""' : visible(value);
  if (Array.isArray(value))
    return value.length === 0 ? '(empty list)' : value.map((v) => showValue(v)).join(', ');
  // Numbers, booleans and objects read fine as JSON (which escapes C0 but not DEL, C1 or U+2028).
  return visible(stringifyJson(value));
}

/**
 * What started a run and the tick it served: `schedule 11:50:00`, with the date when the tick was on
 * another day than the start (a catch-up); `-` for a run recorded before triggers were kept.
 */
function startedBy(run: RunView): string {
  const trigger = run.trigger ?? '-';
  if (run.scheduled_for === null) return trigger;
  const tick = localTime(run.scheduled_for);
  const sameDay = tick.slice(0, 10) === localTime(run.started_at).slice(0, 10);
  return `${trigger} ${sameDay ? tick.slice(11) : tick}`;
}

function seconds(run: RunView): string {
  if (!run.finished_at) return '';
  const ms = new Date(run.finished_at).getTime() - new Date(run.started_at).getTime();
  return `${(ms / 1000).toFixed(1)} s`;
}

export function renderRuns(runs: readonly RunView[], style: Style): string[] {
  if (runs.length === 0) return ['no runs yet'];
  const header = ['RUN', 'STATUS', 'TRIGGER', 'STARTED', 'TOOK', 'ENTRIES', '+', '~', '-', '↺', '=', 'NOTE'];
  const rows = runs.map((r) => {
    const note = r.error
      ? paint(style, 'red', `${r.error.code}: ${r.error.message}`)
      : r.rebound_from
        ? `rebound from ${visible(r.rebound_from)}`
        : r.unknown_fields.length > 0
          ? `new fields: ${visible(r.unknown_fields.join(', '))}`
          : r.media
            ? mediaNote(r.media)
            : '';
    return [
      String(r.id),
      paint(style, STATUS_COLOUR[r.status], r.status),
      startedBy(r),
      when(r.started_at, style),
      seconds(r),
      r.entries === null ? '-' : String(r.entries),
      ...(r.status === 'succeeded'
        ? [r.added, r.changed, r.removed, r.returned, r.unchanged].map(String)
        : ['', '', '', '', '']),
      note,
    ];
  });
  const lines = table(
    [header.map((h) => paint(style, 'bold', h)), ...rows],
    ['right', 'left', 'left', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  );
  return [...lines, '', paint(style, 'dim', RUN_LEGEND)];
}

/** People count appearances from 1, as `appearanceLabel` does everywhere; JSON keeps the 0-based slot. */
const appearanceNumber = (slot: number): number => slot + 1;

function who(c: { uuid: string; appearance: number }, names: ReadonlyMap<string, string>): [string, string] {
  const uuid = c.appearance > 0 ? `${c.uuid}#${appearanceNumber(c.appearance)}` : c.uuid;
  return [visible(names.get(c.uuid) ?? '?'), visible(uuid)];
}

function mediaNote(m: NonNullable<RunView['media']>): string {
  const failed = m.failed > 0 ? `, ${m.failed} failed` : '';
  return `media: ${m.fetched} fetched, ${m.revalidated} unchanged${failed} (${m.bytes} B)`;
}

/** The change without the name (a column of its own): the words of `describeChange`. */
function changeText(c: ChangeView, style: Style): string {
  const mark = paint(style, KIND_COLOUR[c.kind], MARK[c.kind]);
  const words = describeChange({
    kind: c.kind,
    field: c.field ?? null,
    old: c.old,
    new: c.new,
    uuid: c.uuid,
    slot: c.appearance,
    name: '',
    post: '',
  });
  // The upstream's text drawn for the terminal, its controls visible, as in every other column.
  const what = phraseText(words.what, visible);
  if (c.kind !== 'media_changed') return `${mark} ${what}`;
  // Operators compare files by hash: the CLI adds both to the shared words.
  const [before, after] = [c.old, c.new] as ({ sha256?: string } | undefined)[];
  const short = (hash: string | undefined) => (hash ? hash.slice(0, 12) : '(none)');
  return `${mark} ${what} ${short(before?.sha256)} → ${short(after?.sha256)}`;
}

export function renderChanges(
  changes: readonly ChangeView[],
  names: ReadonlyMap<string, string>,
  style: Style,
): string[] {
  if (changes.length === 0) return ['no changes'];
  const header = ['WHEN', 'RUN', 'NAME', 'UUID', 'CHANGE'].map((h) => paint(style, 'bold', h));
  const rows = changes.map((c) => [when(c.at, style), String(c.run), ...who(c, names), changeText(c, style)]);
  return [...table([header, ...rows], ['left', 'right']), '', paint(style, 'dim', changeLegend(changes))];
}

export interface HistoryInput {
  coworker: CoworkerView;
  name: string;
  versions: readonly VersionView[];
  changes: readonly ChangeView[];
}

function statusLine(c: CoworkerView, style: Style): string {
  const parts = [`first seen run ${c.first_seen_run}, ${when(c.first_seen_at, style)}`];
  if (c.removed && c.removed_at) {
    parts.unshift(paint(style, 'red', 'removed'));
    parts.push(`removed run ${c.removed_run ?? '?'}, ${when(c.removed_at, style)}`);
  } else {
    parts.unshift(paint(style, 'green', 'present'));
    if (c.last_seen_at) parts.push(`last seen run ${c.last_seen_run ?? '?'}, ${when(c.last_seen_at, style)}`);
  }
  if (c.returned_count > 0) parts.push(`returned ${c.returned_count}×`);
  return parts.join(' · ');
}

/** One version as its fields; those that differ from the version before are marked with what they were. */
function versionLines(v: VersionView, n: number, previous: VersionView | undefined, style: Style): string[] {
  const last = v.valid_to_run === null ? null : v.valid_to_run - 1;
  const span =
    last === null
      ? `from run ${v.valid_from_run}, current`
      : last === v.valid_from_run
        ? `run ${last} only`
        : `runs ${v.valid_from_run}–${last}`;
  const entry = (v.entry ?? {}) as Record<string, unknown>;
  const before = previous ? ((previous.entry ?? {}) as Record<string, unknown>) : null;
  const rows = Object.entries(entry)
    .filter(([field]) => field !== 'uuid')
    .map(([field, value]) => {
      const changed = before !== null && stringifyJson(before[field]) !== stringifyJson(value);
      const shown = showValue(value);
      return [
        changed ? paint(style, 'yellow', '~') : ' ',
        visible(field),
        changed
          ? `${paint(style, 'yellow', shown)}  ${paint(style, 'dim', `(was ${showValue(before[field])})`)}`
          : shown,
      ];
    });
  return [`  ${paint(style, 'bold', `version ${n}`)} · ${span}`, ...table(rows).map((line) => `    ${line}`)];
}

export function renderHistory(input: HistoryInput, style: Style): string[] {
  const { coworker, name, versions, changes } = input;
  const lines = [`${paint(style, 'bold', name)}  ${visible(coworker.uuid)}`, statusLine(coworker, style), ''];
  const appearances = [...new Set(versions.map((v) => v.appearance))];
  for (const appearance of appearances) {
    const mine = versions.filter((v) => v.appearance === appearance);
    if (appearances.length > 1) lines.push(paint(style, 'bold', appearanceLabel(appearance)));
    mine.forEach((v, i) => lines.push(...versionLines(v, i + 1, mine[i - 1], style)));
  }
  lines.push('', paint(style, 'bold', 'changes'));
  const repeated = changes.some((c) => c.appearance > 0);
  const rows = changes.map((c) => [
    localTime(c.at),
    `run ${c.run}`,
    ...(repeated ? [`#${appearanceNumber(c.appearance)}`] : []),
    changeText(c, style),
  ]);
  lines.push(...table(rows, ['left', 'right']).map((line) => `  ${line}`));
  lines.push(
    '',
    paint(style, 'dim', `${changeLegend(changes)}; versions: ~ differs from the version before`),
  );
  return lines;
}

export function renderFound(found: readonly NamedCoworker[], style: Style): string[] {
  if (found.length === 0) return ['nobody by that name'];
  const rows = found.map((c) => [
    visible(c.name),
    visible(c.uuid),
    visible(c.post),
    c.removed ? paint(style, 'red', 'removed') : paint(style, 'green', 'present'),
  ]);
  return table([['NAME', 'UUID', 'POST', 'STATUS'].map((h) => paint(style, 'bold', h)), ...rows]);
}

const DELIVERY_COLOUR = { succeeded: 'green', failed: 'red', pending: 'cyan' } as const;

/** What a delivery's last attempt got: an HTTP status, an error code, or '-'. */
function answerOf(d: DeliveryView): string {
  const last = d.last_attempt;
  if (!last) return '';
  return `${last.http_status ?? last.error?.code ?? '-'} in ${last.duration_ms} ms`;
}

/** Deliveries as `runs` prints runs: a header row, local times (TZ), one row each. */
export function renderDeliveries(deliveries: readonly DeliveryView[], style: Style): string[] {
  if (deliveries.length === 0) return ['no deliveries'];
  const header = [
    'DELIVERY',
    'STATUS',
    'TYPE',
    'RUN',
    'WEBHOOK-ID',
    'ENDPOINT',
    'TRIES',
    'LAST TRY',
    'ANSWER',
    'NEXT TRY',
  ];
  const rows = deliveries.map((d) => [
    String(d.id),
    paint(style, DELIVERY_COLOUR[d.status], d.status),
    visible(d.type),
    String(d.run),
    visible(d.webhook_id),
    `${d.endpoint.id} ${visible(d.endpoint.url)}${d.endpoint.disabled ? ' (disabled)' : ''}`,
    String(d.attempts),
    d.last_attempt ? when(d.last_attempt.at, style) : '',
    answerOf(d),
    d.next_attempt_at ? localTime(d.next_attempt_at) : '',
  ]);
  return table(
    [header.map((h) => paint(style, 'bold', h)), ...rows],
    ['right', 'left', 'left', 'right', 'left', 'left', 'right'],
  );
}
