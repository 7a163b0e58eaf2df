import type { MediaRunRow } from '../../db/schema.js';
import type { MediaFailures } from '../../db/store.js';
import { mediaFailureWords, MIRROR_MEDIA_FAILURE } from '../media-failure-words.js';
import { Notice, Text } from './components.js';

/** A run's media: its figures, and why the files it could not mirror failed. */
export interface RunMedia {
  runId: number;
  counts: MediaRunRow;
  failures: MediaFailures;
}

/** How many failed files the status and run pages name; the rest are counted. */
export const FAILED_MEDIA_NAMED = 5;

const files = (n: number) => `${n.toLocaleString('en-US')} media file${n === 1 ? '' : 's'}`;

/** The figures of a run's media, as a `<dt>`/`<dd>` pair of a facts list. */
export function MediaFacts(props: { media: RunMedia | null; named?: boolean }) {
  const { media } = props;
  if (media === null) return null;
  const c = media.counts;
  return (
    <>
      <dt>Media</dt>
      <dd>
        {props.named ? (
          <>
            <a href={`/runs/${media.runId}/`}>run {media.runId}</a>:{' '}
          </>
        ) : null}
        {c.fetched} fetched, {c.revalidated} unchanged (revalidated), {c.failed} failed;{' '}
        {c.bytes.toLocaleString('en-US')} bytes downloaded
      </dd>
    </>
  );
}

/**
 * The files a run could not mirror: how many, why (by code, in words) and the first few, linked
 * to the upstream's URL. A failure of the mirror's own storage is worse news than a host's answer.
 */
export function MediaFailureNotice(props: { media: RunMedia | null; subject: string }) {
  const { media } = props;
  if (media === null || media.counts.failed === 0) return null;
  const { failed } = media.counts;
  const { byCode, first } = media.failures;
  const known = byCode.reduce((sum, c) => sum + c.count, 0);
  const own = byCode.some((c) => c.code === MIRROR_MEDIA_FAILURE);
  return (
    <Notice kind={own ? 'bad' : 'warn'} block>
      <p>
        {files(failed)} of {props.subject} {failed === 1 ? 'was' : 'were'} not mirrored
        {known === 0 ? (
          '; later runs tried each of them again.'
        ) : (
          <>
            <FailureCounts media={media} known={known} /> A file an earlier run mirrored is still served from
            its last good copy; each is tried again next run.
            {known > first.length ? ` The first ${first.length}, by address:` : null}
          </>
        )}
      </p>
      {first.length > 0 ? (
        <ul>
          {first.map((f) => (
            <li key={f.url}>
              <UpstreamLink url={f.url} />: <Text value={f.message} max={300} /> (<code>{f.code}</code>)
            </li>
          ))}
        </ul>
      ) : null}
    </Notice>
  );
}

/** ": 100 did not arrive whole … (MEDIA_TIMEOUT), 4 answered …." and what later runs tried again. */
function FailureCounts(props: { media: RunMedia; known: number }) {
  const { failed } = props.media.counts;
  const { known } = props;
  return (
    <>
      {known < failed ? `; of the ${known} no later run tried again` : null}:{' '}
      {props.media.failures.byCode.map((c, i) => (
        <>
          {i > 0 ? ', ' : null}
          {c.count} {mediaFailureWords(c.code)} (<code>{c.code}</code>)
        </>
      ))}
      .{known < failed ? ` Later runs tried the other ${failed - known} again.` : null}
    </>
  );
}

/** An upstream URL, as a link only when it is a web address (its text is the upstream's data). */
function UpstreamLink(props: { url: string }) {
  const text = <Text value={props.url} max={500} brief />;
  const web = URL.canParse(props.url) && /^https?:$/.test(new URL(props.url).protocol);
  return web ? (
    <a href={props.url} rel="noreferrer nofollow">
      {text}
    </a>
  ) : (
    text
  );
}
