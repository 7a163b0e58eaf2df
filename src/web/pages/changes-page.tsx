import type { PruneHorizon } from '../../db/store.js';
import type { ChangeSubject } from '../../db/run-commit.js';
import { changeKinds, type ChangeRow } from '../../db/schema.js';
import type { ChangesPageQuery } from '../page-params.js';
import { ChangeSentence, Notice, Pager, PrunedNote, Text, Time } from './components.js';
import { Layout } from './layout.js';
import { usePage } from '../page-context.js';
import { localDay } from '../time-zone.js';
import { isolatedText } from '../../text/bidi.js';

export interface ChangesData {
  query: ChangesPageQuery;
  /** The raw filter values, to refill the form as typed. */
  form: Record<string, string>;
  changes: ChangeRow[];
  subjects: Map<number, ChangeSubject>;
  fields: string[];
  olderHref: string | null;
  newestHref: string | null;
  /** Set when the name filter matched more coworkers than a filter takes. */
  nameMatches: number | null;
  /** What prunes took from the feed. */
  pruned: PruneHorizon;
}

interface RunGroup {
  runId: number;
  at: string;
  changes: ChangeRow[];
}
interface DayGroup {
  day: string;
  runs: RunGroup[];
}

/** Newest first, by the day in the pages' zone, then by run within the day. */
function groupByDayAndRun(rows: readonly ChangeRow[], timeZone: string): DayGroup[] {
  const days: DayGroup[] = [];
  for (const row of rows) {
    const day = localDay(row.at, timeZone);
    let dayGroup = days.at(-1);
    if (dayGroup?.day !== day) days.push((dayGroup = { day, runs: [] }));
    let run = dayGroup.runs.at(-1);
    if (run?.runId !== row.runId) dayGroup.runs.push((run = { runId: row.runId, at: row.at, changes: [] }));
    run.changes.push(row);
  }
  return days;
}

// Built once: toLocaleDateString builds a formatter at every call.
const DAY_WORDS = new Intl.DateTimeFormat('en-GB', {
  weekday: 'long',
  day: 'numeric',
  month: 'long',
  year: 'numeric',
  timeZone: 'UTC',
});

/** "Tuesday, 24 November 2026 (Europe/Berlin)": a calendar day of the zone, named with it. */
function dayTitle(day: string, timeZone: string): string {
  // The day is already the zone's: name it at noon UTC of that date, where no offset moves it.
  const words = DAY_WORDS.format(new Date(`${day}T12:00:00Z`));
  return `${words} (${timeZone})`;
}

function Filters(props: { form: Record<string, string>; fields: string[]; timeZone: string }) {
  const value = (name: string) => props.form[name] ?? '';
  return (
    <form class="filters" method="get" action="/changes/" role="search" aria-label="Filter changes">
      <label>
        Kind
        <select name="kind">
          <option value="">any</option>
          {changeKinds.map((kind) => (
            <option key={kind} value={kind} selected={value('kind') === kind}>
              {kind}
            </option>
          ))}
        </select>
      </label>
      <label>
        Field
        <select name="field">
          <option value="">any</option>
          {props.fields.map((field) => (
            <option key={field} value={field} selected={value('field') === field}>
              {isolatedText(field)}
            </option>
          ))}
        </select>
      </label>
      <label>
        Name
        <input type="search" name="name" value={value('name')} maxLength={200} />
      </label>
      <label>
        From (day in {props.timeZone})
        <input type="date" name="from" value={value('from')} />
      </label>
      <label>
        To (day in {props.timeZone})
        <input type="date" name="to" value={value('to')} />
      </label>
      <button type="submit">Filter</button>
    </form>
  );
}

export function ChangesPage(props: ChangesData) {
  const { timeZone } = usePage();
  const days = groupByDayAndRun(props.changes, timeZone);
  return (
    <Layout title="What changed, and when" section="changes">
      <Filters form={props.form} fields={props.fields} timeZone={timeZone} />
      {props.nameMatches !== null ? (
        <Notice kind="warn">
          “<Text value={props.form.name ?? ''} max={200} />” matches {props.nameMatches} coworkers; only the
          first ones are shown. Type more of the name.
        </Notice>
      ) : null}
      <PrunedNote horizon={props.pruned} />
      {days.length === 0 ? <p>No change matches.</p> : null}
      {days.map((day) => (
        <section class="day" key={day.day} aria-label={dayTitle(day.day, timeZone)}>
          <h2>
            <time datetime={day.day}>{dayTitle(day.day, timeZone)}</time>
          </h2>
          {day.runs.map((run) => (
            <div key={run.runId}>
              <p class="run-head">
                <a href={`/runs/${run.runId}/`}>Run {run.runId}</a>, <Time at={run.at} />
              </p>
              <ol class="changes">
                {run.changes.map((change) => {
                  const subject = props.subjects.get(change.id);
                  return (
                    <li key={change.id}>
                      <ChangeSentence change={change} name={subject?.name ?? ''} post={subject?.post ?? ''} />
                    </li>
                  );
                })}
              </ol>
            </div>
          ))}
        </section>
      ))}
      <Pager
        newer={props.newestHref}
        older={props.olderHref}
        newerLabel="Newest"
        olderLabel="Older changes"
      />
    </Layout>
  );
}
