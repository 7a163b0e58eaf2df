import type { RunRow } from '../../db/schema.js';
import { adviceFor } from '../error-advice.js';
import { Fragment } from 'preact';
import { Isolated, Notice, NumberedPager, Text, Time } from './components.js';
import { Layout } from './layout.js';
import { runDuration } from './status-page.js';

function counts(run: RunRow): string {
  if (run.status !== 'succeeded') return '';
  return `${run.entries ?? 0} entries: +${run.added} ~${run.changed} −${run.removed} ↩${run.returned}`;
}

export function RunsPage(props: {
  runs: RunRow[];
  total: number;
  page: number;
  pageSize: number;
  href: (page: number) => string;
}) {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize));
  return (
    <Layout title="Runs" section="runs">
      <p>{props.total} runs, newest first. + added, ~ changed, − removed, ↩ returned.</p>
      <div class="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Started</th>
              <th scope="col">Took</th>
              <th scope="col">Found</th>
            </tr>
          </thead>
          <tbody>
            {props.runs.map((run) => (
              <tr key={run.id}>
                <td>
                  <a href={`/runs/${run.id}/`}>{run.id}</a>
                </td>
                <td>{run.errorCode ? `${run.status} (${run.errorCode})` : run.status}</td>
                <td>
                  <Time at={run.startedAt} />
                </td>
                <td>{runDuration(run) ?? '—'}</td>
                <td>{counts(run)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <NumberedPager page={props.page} pages={pages} href={props.href} olderLabel="Older" />
    </Layout>
  );
}

export function RunPage(props: { run: RunRow; unknownFields: string[] }) {
  const { run } = props;
  return (
    <Layout title={`Run ${run.id}`} section="runs">
      {run.errorCode ? (
        <Notice kind="bad">
          {run.status} (<code>{run.errorCode}</code>): <Text value={run.errorMessage ?? ''} />.{' '}
          {adviceFor(run.errorCode)}
        </Notice>
      ) : null}
      <dl class="facts">
        <dt>Status</dt>
        <dd>{run.status}</dd>
        <dt>Started</dt>
        <dd>
          <Time at={run.startedAt} relative />
        </dd>
        <dt>Finished</dt>
        <dd>
          <Time at={run.finishedAt} />
        </dd>
        <dt>Took</dt>
        <dd>{runDuration(run) ?? 'still running'}</dd>
        <dt>Pages read</dt>
        <dd>{run.pages ?? '—'}</dd>
        <dt>Entries</dt>
        <dd>{run.entries ?? '—'}</dd>
        <dt>Added</dt>
        <dd>{run.added}</dd>
        <dt>Changed</dt>
        <dd>{run.changed}</dd>
        <dt>Removed</dt>
        <dd>{run.removed}</dd>
        <dt>Returned</dt>
        <dd>{run.returned}</dd>
        <dt>Unchanged</dt>
        <dd>{run.unchanged}</dd>
        <UnknownFields fields={props.unknownFields} />
      </dl>
      {run.status === 'succeeded' ? (
        <p>
          <a href={`/team/?run=${run.id}`}>The team as served after this run</a> ·{' '}
          <a href={`/changes/?to=${encodeURIComponent(run.finishedAt ?? run.startedAt)}`}>
            Changes up to this run
          </a>
        </p>
      ) : null}
    </Layout>
  );
}

/** The fields the contract does not name that a run saw: the upstream's names, each isolated. */
function UnknownFields(props: { fields: string[] }) {
  if (props.fields.length === 0) return null;
  return (
    <>
      <dt>Unknown fields seen</dt>
      <dd>
        {props.fields.map((field, i) => (
          <Fragment key={field}>
            {i > 0 ? ', ' : ''}
            <Isolated text={field} />
          </Fragment>
        ))}
      </dd>
    </>
  );
}
