import type { PruneHorizon } from '../../db/store.js';
import { Fragment } from 'preact';
import type { ChangeRow, CoworkerRow, VersionRow } from '../../db/schema.js';
import {
  FieldDiff,
  FieldName,
  FieldValue,
  MediaChangeThumbs,
  MediaChangedWords,
  Time,
  PrunedNote,
} from './components.js';
import { Card, entryOf } from './card.js';
import { Layout } from './layout.js';
import { appearanceLabel } from '../../notify/describe-change.js';
import { ByteBudget, jsonBytes, PAGE_DATA_BYTES } from '../byte-budget.js';

export interface CoworkerData {
  coworker: CoworkerRow;
  current: VersionRow[];
  /** Newest first, at most MAX_VERSIONS. */
  versions: VersionRow[];
  totalVersions: number;
  changes: ChangeRow[];
  runTimes: Map<number, string>;
  title: string;
  /** What prunes took from this coworker's history (forgetting others takes nothing from it). */
  pruned: PruneHorizon;
}

/** A coworker page lists this many versions, newest first; the API has them all. */
export const MAX_VERSIONS = 200;

function changesOf(version: VersionRow, changes: readonly ChangeRow[]): ChangeRow[] {
  return changes.filter((c) => c.runId === version.validFromRun && c.slot === version.slot);
}

/** One change of a version, as a line of its list. */
function VersionChange(props: { change: ChangeRow }) {
  const { change } = props;
  switch (change.kind) {
    case 'changed':
      return (
        <>
          <FieldName field={change.field ?? ''} />: <FieldDiff change={change} />
        </>
      );
    case 'media_changed':
      return (
        <>
          <MediaChangedWords change={change} /> <MediaChangeThumbs change={change} />
        </>
      );
    case 'added':
      return <>first listed</>;
    case 'removed':
    case 'returned':
      return <>{change.kind}</>;
  }
}

function changeBytes(change: ChangeRow): number {
  return (change.field?.length ?? 0) + (change.oldValue?.length ?? 0) + (change.newValue?.length ?? 0);
}

function VersionChanges(props: { changes: ChangeRow[]; budget: ByteBudget }) {
  if (props.changes.length === 0) return null;
  const shown = props.changes.filter((change) => props.budget.take(changeBytes(change)));
  return (
    <ul class="diff">
      {shown.map((change) => (
        <li key={change.id}>
          <VersionChange change={change} />
        </li>
      ))}
      <NotShown count={props.changes.length - shown.length} what="changes" />
    </ul>
  );
}

/** Where the page's budget ran out: what was left out, and where it is in full. */
function NotShown(props: { count: number; what: string }) {
  if (props.count === 0) return null;
  return (
    <li class="muted">
      … {props.count.toLocaleString('en-US')} more {props.what} not shown (a page shows at most{' '}
      {PAGE_DATA_BYTES / 1024} KiB of them); the history API has them all.
    </li>
  );
}

export function CoworkerPage(props: CoworkerData) {
  const { coworker } = props;
  return (
    <Layout title={props.title} titleFromUpstream section="coworkers">
      <CoworkerFacts coworker={coworker} listedTimes={props.current.length} />
      <h2>As listed now</h2>
      <ListedNow coworker={coworker} current={props.current} />
      <h2>Every version</h2>
      <PrunedNote horizon={props.pruned} />
      <VersionHistory {...props} />
      <p>
        <a href={`/changes/?uuid=${coworker.uuid}`}>Changes</a> ·{' '}
        <a href={`/api/mirror/coworkers/${coworker.uuid}/history/`}>History as JSON</a>
      </p>
    </Layout>
  );
}

/** uuid, first seen, and whether the coworker is on the team now. */
function CoworkerFacts(props: { coworker: CoworkerRow; listedTimes: number }) {
  const { coworker } = props;
  return (
    <dl class="facts">
      <dt>uuid</dt>
      <dd>
        <code>{coworker.uuid}</code>
      </dd>
      <dt>First seen</dt>
      <dd>
        <Time at={coworker.firstSeenAt} />
      </dd>
      <dt>Status</dt>
      <dd>
        {coworker.removedAt !== null ? (
          <>
            departed <Time at={coworker.removedAt} relative />
          </>
        ) : (
          <>on the team{props.listedTimes > 1 ? `, listed ${props.listedTimes} times` : ''}</>
        )}
        {coworker.returnedCount > 0 ? `; returned ${coworker.returnedCount} time(s)` : ''}
      </dd>
    </dl>
  );
}

/** A card per current appearance in the listing. */
function ListedNow(props: { coworker: CoworkerRow; current: VersionRow[] }) {
  if (props.current.length === 0) return <p class="muted">Not listed any more.</p>;
  return (
    <ul class="cards">
      {props.current.map((version) => (
        <li key={version.id}>
          {props.current.length > 1 ? (
            <p class="muted">{capitalised(appearanceLabel(version.slot))}</p>
          ) : null}
          <Card entry={entryOf(version.body)} uuid={props.coworker.uuid} headingLevel={3} />
        </li>
      ))}
    </ul>
  );
}

/** A uuid's versions by appearance (slot), each appearance's newest first, appearances in order. */
function byAppearance(versions: readonly VersionRow[]): [slot: number, versions: VersionRow[]][] {
  const groups = new Map<number, VersionRow[]>();
  for (const version of versions) {
    const group = groups.get(version.slot);
    if (group) group.push(version);
    else groups.set(version.slot, [version]);
  }
  return [...groups].sort(([a], [b]) => a - b);
}

type RunTime = (run: number | null) => string | null;

function VersionHistory(props: CoworkerData) {
  const at: RunTime = (run) => (run === null ? null : (props.runTimes.get(run) ?? null));
  const budget = new ByteBudget(PAGE_DATA_BYTES);
  const groups = byAppearance(props.versions);
  return (
    <>
      {props.totalVersions > props.versions.length ? (
        <p class="muted">
          The newest {props.versions.length} of {props.totalVersions} versions; the history API has them all.
        </p>
      ) : null}
      {groups.map(([slot, versions]) => (
        <section key={slot} aria-label={groups.length > 1 ? capitalised(appearanceLabel(slot)) : 'Versions'}>
          {groups.length > 1 ? <h3>{capitalised(appearanceLabel(slot))}</h3> : null}
          <AppearanceEnd newest={versions[0]} at={at} />
          <ol class="changes">
            {versions.map((version) => (
              <li key={version.id}>
                <VersionSpan version={version} at={at} />
                <VersionChanges changes={changesOf(version, props.changes)} budget={budget} />
                <EntryAsServed version={version} budget={budget} />
              </li>
            ))}
          </ol>
        </section>
      ))}
    </>
  );
}

const capitalised = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/** An appearance whose newest version was closed is no longer listed: it says so, when and in which run. */
function AppearanceEnd(props: { newest: VersionRow | undefined; at: RunTime }) {
  const run = props.newest?.validToRun ?? null;
  if (run === null) return null;
  return (
    <p class="removed">
      Removed in <a href={`/runs/${run}/`}>run {run}</a> (<Time at={props.at(run)} />
      ).
    </p>
  );
}

/** The runs a version was listed from and until, with their times. */
function VersionSpan(props: { version: VersionRow; at: RunTime }) {
  const { version, at } = props;
  return (
    <p class="run-head">
      From <a href={`/runs/${version.validFromRun}/`}>run {version.validFromRun}</a> (
      <Time at={at(version.validFromRun)} />)
      {version.validToRun !== null ? (
        <>
          {' '}
          until <a href={`/runs/${version.validToRun}/`}>run {version.validToRun}</a> (
          <Time at={at(version.validToRun)} />)
        </>
      ) : (
        ' until now'
      )}
    </p>
  );
}

function EntryAsServed(props: { version: VersionRow; budget: ByteBudget }) {
  const fields = Object.entries(entryOf(props.version.body));
  const shown = fields.filter(([field, value]) => props.budget.take(field.length + jsonBytes(value)));
  const left = fields.length - shown.length;
  return (
    <details>
      <summary>The entry as served</summary>
      <dl class="facts">
        {shown.map(([field, value]) => (
          <Fragment key={field}>
            <dt>
              <FieldName field={field} />
            </dt>
            <dd>
              <FieldValue field={field} value={value} label={field} />
            </dd>
          </Fragment>
        ))}
      </dl>
      {left > 0 ? (
        <p class="muted">
          … {left.toLocaleString('en-US')} more fields not shown (a page shows at most{' '}
          {PAGE_DATA_BYTES / 1024} KiB of them); the history API has them all.
        </p>
      ) : null}
    </details>
  );
}
