import type { ChangeSubject } from '../../db/run-commit.js';
import type { ChangeRow, RunRow } from '../../db/schema.js';
import { adviceFor } from '../error-advice.js';
import { durationWords } from '../format.js';
import type { StatusSource } from '../status-source.js';
import { usePage } from '../page-context.js';
import { ChangeSentence, Notice, Text, Time } from './components.js';
import { Layout } from './layout.js';
import type { DisabledTargetView } from '../../notify/disabled-targets.js';
import { MediaFacts, MediaFailureNotice, type RunMedia } from './run-media.js';

export interface StatusData {
  status: StatusSource | null;
  latestRun: RunRow | undefined;
  served: { runId: number; entries: number; fetchedAt: Date } | null;
  staleAfterMs: number;
  latestChanges: ChangeRow[];
  subjects: Map<number, ChangeSubject>;
  /** Webhook deliveries by status, and endpoints a 410 disabled; null when none were ever queued. */
  deliveries: { pending: number; succeeded: number; failed: number; disabledEndpoints: number } | null;
  /** Notification targets a permanent refusal (404/410) disabled: nothing reaches them until enabled. */
  disabledTargets?: readonly DisabledTargetView[];
  /** What keeps mirrored media files from being served (as /readyz says it), or null. */
  mediaProblem?: string | null;
  /** The media of the latest run that committed (null when it mirrored none). */
  media?: RunMedia | null;
}

function DisabledTargets(props: { targets: readonly DisabledTargetView[] | undefined }) {
  const targets = props.targets ?? [];
  if (targets.length === 0) return null;
  return (
    <>
      <dt>Notifications</dt>
      <dd>
        {targets.length} target{targets.length === 1 ? '' : 's'} disabled: the service refused for good (a
        deleted or revoked webhook). Nothing is sent there until enabled again.
        <ul>
          {targets.map((t) => (
            <li>
              <Text value={t.label} /> since <Time at={t.disabledAt} />
              {t.reason === null ? null : (
                <>
                  : <Text value={t.reason} />
                </>
              )}{' '}
              — <code>{t.enableCommand}</code>
            </li>
          ))}
        </ul>
      </dd>
    </>
  );
}

function Deliveries(props: { deliveries: StatusData['deliveries'] }) {
  const d = props.deliveries;
  if (d === null) return null;
  return (
    <>
      <dt>Webhooks</dt>
      <dd>
        {d.succeeded} delivered, {d.pending} waiting, {d.failed} failed
        {d.disabledEndpoints > 0 ? (
          <>
            ; {d.disabledEndpoints} endpoint{d.disabledEndpoints === 1 ? '' : 's'} disabled by 410 Gone (
            <code>coworker-mirror deliveries enable &lt;id&gt;</code>)
          </>
        ) : null}{' '}
        <a href="/api/mirror/deliveries/">delivery log</a>
      </dd>
    </>
  );
}

export function runDuration(run: RunRow): string | null {
  if (run.finishedAt === null) return null;
  return durationWords(Date.parse(run.finishedAt) - Date.parse(run.startedAt));
}

function Mode(props: { status: StatusSource | null }) {
  if (!props.status) {
    return (
      <>
        <dt>Mode</dt>
        <dd>serving only (this process does not sync; another one does)</dd>
      </>
    );
  }
  const upstream = props.status.upstream();
  return (
    <>
      <dt>Mode</dt>
      <dd>
        {upstream.mode === 'demo' ? (
          <>demo: mirroring the built-in simulated upstream with invented data</>
        ) : (
          <>mirroring the upstream</>
        )}
      </dd>
      <dt>Upstream</dt>
      <dd>
        <code>{upstream.url}</code>
      </dd>
    </>
  );
}

function NextRun(props: { status: StatusSource | null }) {
  const next = props.status?.nextRunAt() ?? null;
  const delay = props.status?.randomDelayMs ?? 0;
  return (
    <>
      <dt>Next scheduled run</dt>
      <dd>
        {props.status?.syncRunning() ? <>a run is in progress now; </> : null}
        {next ? <Time at={next.toISOString()} relative /> : <span class="muted">none scheduled here</span>}
        {next && delay > 0 ? (
          <span class="muted"> (may start up to {durationWords(delay)} later)</span>
        ) : null}
      </dd>
    </>
  );
}

function LastRun(props: { run: RunRow | undefined }) {
  const { run } = props;
  if (!run) {
    return (
      <>
        <dt>Last run</dt>
        <dd>none yet</dd>
      </>
    );
  }
  const duration = runDuration(run);
  return (
    <>
      <dt>Last run</dt>
      <dd>
        <a href={`/runs/${run.id}/`}>run {run.id}</a> {run.status}, started{' '}
        <Time at={run.startedAt} relative />
        {duration ? <>, took {duration}</> : null}
      </dd>
      {run.status === 'succeeded' ? (
        <>
          <dt>What it found</dt>
          <dd>
            {run.entries ?? 0} entries on {run.pages ?? 0} pages: {run.added} added, {run.changed} changed,{' '}
            {run.removed} removed, {run.returned} returned
          </dd>
        </>
      ) : null}
    </>
  );
}

export function StatusPage(props: StatusData) {
  return (
    <Layout title="The mirror at a glance" section="status">
      <StatusNotices {...props} />
      <dl class="facts">
        <Mode status={props.status} />
        <LastRun run={props.latestRun} />
        <MediaFacts media={props.media ?? null} named={props.media?.runId !== props.latestRun?.id} />
        <NextRun status={props.status} />
        <Deliveries deliveries={props.deliveries} />
        <DisabledTargets targets={props.disabledTargets} />
        <ServedSnapshot served={props.served} />
      </dl>
      <h2>Latest changes</h2>
      <LatestChanges changes={props.latestChanges} subjects={props.subjects} />
      <p>
        <a href="/changes/">Every change</a> · <a href="/api/mirror/changes.atom">Atom feed</a> ·{' '}
        <a href="/api/mirror/changes.csv">CSV</a>
      </p>
    </Layout>
  );
}

/**
 * What needs a person's attention: nothing served, a stale snapshot, a failed last run, mirrored
 * media that cannot be served.
 */
function StatusNotices(props: StatusData) {
  const { now } = usePage();
  const { latestRun, served } = props;
  const age = served ? now.getTime() - served.fetchedAt.getTime() : null;
  const failing = latestRun && (latestRun.status === 'failed' || latestRun.status === 'aborted');
  return (
    <>
      {served === null ? (
        <Notice kind="bad">
          No snapshot is served yet: no sync has succeeded. The list endpoint answers 503.
        </Notice>
      ) : null}
      {age !== null && age > props.staleAfterMs ? (
        <Notice kind="warn">
          Stale: the served snapshot is {durationWords(age)} old (the limit is{' '}
          {durationWords(props.staleAfterMs)}).
        </Notice>
      ) : null}
      {failing && latestRun ? (
        <Notice kind="bad">
          The last run {latestRun.status}
          {latestRun.errorCode ? (
            <>
              {' '}
              (<code>{latestRun.errorCode}</code>): <Text value={latestRun.errorMessage ?? ''} />.{' '}
              {adviceFor(latestRun.errorCode)}
            </>
          ) : null}{' '}
          The previous snapshot is still served.
        </Notice>
      ) : null}
      {props.mediaProblem ? (
        <Notice kind="bad">
          Mirrored media: <Text value={props.mediaProblem} />. <code>/readyz</code> answers 503 until it is
          fixed.
        </Notice>
      ) : null}
      {props.media ? <MediaFailureNotice media={props.media} subject={`run ${props.media.runId}`} /> : null}
    </>
  );
}

function ServedSnapshot(props: { served: StatusData['served'] }) {
  const { served } = props;
  return (
    <>
      <dt>Served snapshot</dt>
      <dd>
        {served ? (
          <>
            from <a href={`/runs/${served.runId}/`}>run {served.runId}</a>, fetched{' '}
            <Time at={served.fetchedAt.toISOString()} relative />, {served.entries} entries
          </>
        ) : (
          <span class="muted">none</span>
        )}
      </dd>
    </>
  );
}

function LatestChanges(props: { changes: ChangeRow[]; subjects: StatusData['subjects'] }) {
  if (props.changes.length === 0) return <p class="muted">No changes recorded yet.</p>;
  return (
    <ol class="changes">
      {props.changes.map((change) => {
        const subject = props.subjects.get(change.id);
        return (
          <li key={change.id}>
            <ChangeSentence change={change} name={subject?.name ?? ''} post={subject?.post ?? ''} />{' '}
            <span class="muted">
              <Time at={change.at} />
            </span>
          </li>
        );
      })}
    </ol>
  );
}
