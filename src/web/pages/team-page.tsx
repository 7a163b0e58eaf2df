import type { ListedEntry } from '../../db/store.js';
import type { RunRow } from '../../db/schema.js';
import { NumberedPager, Time } from './components.js';
import { Card, entryOf } from './card.js';
import { Layout } from './layout.js';
import { usePage } from '../page-context.js';
import { localClock } from '../time-zone.js';

export interface TeamData {
  run: RunRow | undefined;
  asOf: string | undefined;
  /** The "as of" input's value: the asked moment as a wall time of the pages' zone, or ''. */
  asOfInput: string;
  entries: ListedEntry[];
  total: number;
  page: number;
  pageSize: number;
  runChoices: { id: number; finishedAt: string; entries: number | null }[];
  href: (page: number) => string;
}

export function TeamPage(props: TeamData) {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize));
  const first = (props.page - 1) * props.pageSize;
  return (
    <Layout title="The team as it was" section="team">
      <MomentPickers {...props} />
      {props.run ? (
        <p>
          The &ldquo;Our team&rdquo; block as served after{' '}
          <a href={`/runs/${props.run.id}/`}>run {props.run.id}</a>, fetched{' '}
          <Time at={props.run.finishedAt} />: {props.total} cards
          {pages > 1 ? `, ${first + 1}–${first + props.entries.length} shown` : ''}.
        </p>
      ) : (
        <p>
          {props.asOf ? (
            <>
              Nothing was mirrored yet at <Time at={props.asOf} />.
            </>
          ) : (
            'Nothing has been mirrored yet.'
          )}
        </p>
      )}
      <ul class="cards">
        {props.entries.map((item) => (
          <li key={item.position}>
            <Card entry={entryOf(item.body)} uuid={item.uuid} link headingLevel={2} />
          </li>
        ))}
      </ul>
      <NumberedPager
        page={props.page}
        pages={pages}
        href={props.href}
        newerLabel="Previous"
        olderLabel="Next"
      />
    </Layout>
  );
}

/** The "as of" and run pickers, both in the pages' one zone, and saying so. */
function MomentPickers(props: TeamData) {
  const { timeZone } = usePage();
  return (
    <>
      <form class="filters" method="get" action="/team/" aria-label="Choose a moment">
        <label>
          As of (date and time in {timeZone})
          <input type="datetime-local" name="as_of" value={props.asOfInput} />
        </label>
        <button type="submit">Show</button>
      </form>
      <form class="filters" method="get" action="/team/" aria-label="Choose a run">
        <label>
          Or after run (times in {timeZone})
          <select name="run">
            {props.runChoices.map((choice) => (
              <option key={choice.id} value={String(choice.id)} selected={props.run?.id === choice.id}>
                {`run ${choice.id}, ${localClock(choice.finishedAt, timeZone)} (${choice.entries ?? 0} entries)`}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Show</button>
      </form>
    </>
  );
}
