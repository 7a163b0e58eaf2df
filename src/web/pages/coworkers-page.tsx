import type { DirectoryEntry } from '../../db/page-queries.js';
import { NameLink, Pager, Text, Time } from './components.js';
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
      <form class="filters" method="get" action="/coworkers/" role="search" aria-label="Search coworkers">
        <label>
          Name or post
          <input type="search" name="q" value={props.q} maxLength={200} />
        </label>
        <label>
          Who
          <select name="status">
            {(
              [
                ['present', 'on the team now'],
                ['departed', 'departed'],
                ['all', 'everyone'],
              ] as const
            ).map(([value, label]) => (
              <option key={value} value={value} selected={props.status === value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <button type="submit">Search</button>
      </form>
      <p>
        {props.total} {props.total === 1 ? 'match' : 'matches'}
        {pages > 1 ? `, page ${props.page} of ${pages}` : ''}
        {props.asOfRun !== null ? (
          <>
            {' '}
            as of <a href={`/runs/${props.asOfRun}/`}>run {props.asOfRun}</a>
          </>
        ) : null}
      </p>
      {props.rows.length > 0 ? (
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
                <tr key={`${row.uuid}-${row.appearance}`}>
                  <td>
                    <NameLink uuid={row.uuid} name={row.name} />
                    {row.appearance > 0 ? <span class="muted"> (listed again)</span> : null}
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
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <Pager
        newer={props.page > 1 ? props.href(props.page - 1) : null}
        older={props.page < pages ? props.href(props.page + 1) : null}
        newerLabel="Previous"
        olderLabel="Next"
      />
    </Layout>
  );
}
