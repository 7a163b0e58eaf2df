import { appearanceLabel } from '../../notify/describe-change.js';
import type { DirectoryEntry } from '../../db/store.js';
import { NameLink, NumberedPager, Text, Time } from './components.js';
import { Layout } from './layout.js';

export interface CoworkersData {
  q: string;
  status: 'present' | 'departed' | 'all';
  rows: DirectoryEntry[];
  /** The run whose listing the directory shows. */
  asOfRun: number | null;
  total: number;
  page: number;
  pageSize: number;
  href: (page: number) => string;
}

export function CoworkersPage(props: CoworkersData) {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize));
  return (
    <Layout title="Coworkers" section="coworkers">
      <SearchForm q={props.q} status={props.status} />
      <MatchCount {...props} pages={pages} />
      {props.rows.length > 0 ? <DirectoryTable rows={props.rows} /> : null}
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

const WHO = [
  ['present', 'on the team now'],
  ['departed', 'departed'],
  ['all', 'everyone'],
] as const;

function SearchForm(props: Pick<CoworkersData, 'q' | 'status'>) {
  return (
    <form class="filters" method="get" action="/coworkers/" role="search" aria-label="Search coworkers">
      <label>
        Name or post
        <input type="search" name="q" value={props.q} maxLength={200} />
      </label>
      <label>
        Who
        <select name="status">
          {WHO.map(([value, label]) => (
            <option key={value} value={value} selected={props.status === value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">Search</button>
    </form>
  );
}

/** "N matches, page P of Q as of run R". */
function MatchCount(props: Pick<CoworkersData, 'total' | 'page' | 'asOfRun'> & { pages: number }) {
  return (
    <p>
      {props.total} {props.total === 1 ? 'match' : 'matches'}
      {props.pages > 1 ? `, page ${props.page} of ${props.pages}` : ''}
      {props.asOfRun !== null ? (
        <>
          {' '}
          as of <a href={`/runs/${props.asOfRun}/`}>run {props.asOfRun}</a>
        </>
      ) : null}
    </p>
  );
}

function DirectoryTable(props: { rows: DirectoryEntry[] }) {
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Post</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <DirectoryRow key={`${row.uuid}-${row.appearance}`} row={row} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DirectoryRow(props: { row: DirectoryEntry }) {
  const { row } = props;
  return (
    <tr>
      <td>
        <NameLink uuid={row.uuid} name={row.name} />
        {row.appearance > 0 ? <span class="muted"> ({appearanceLabel(row.appearance)})</span> : null}
      </td>
      <td>
        <Text value={row.post} max={300} brief />
      </td>
      <td>
        {row.removedAt !== null ? (
          <>
            left <Time at={row.removedAt} />
          </>
        ) : (
          <>
            since <Time at={row.firstSeenAt} />
          </>
        )}
      </td>
    </tr>
  );
}
