import type { PruneHorizon } from '../../db/store.js';
import type { ComponentChildren } from 'preact';
import type { ChangeRow } from '../../db/schema.js';
import { clip, parseStored, relativeWords, valueText } from '../format.js';
import { localClock } from '../time-zone.js';
import { changeWords } from '../change-text.js';
import { fileNameOf, type Phrase } from '../../notify/describe-change.js';
import { balancedBidi } from '../../text/bidi.js';
import { useImageSrc, usePage } from '../page-context.js';

/** A time as `<time datetime>`, in the page's one zone (`TZ`), which the page names. */
export function Time(props: { at: string | null; relative?: boolean }) {
  const { now, timeZone } = usePage();
  if (props.at === null) return <span class="muted">never</span>;
  const time = <time datetime={props.at}>{localClock(props.at, timeZone)}</time>;
  if (!props.relative) return time;
  return (
    <>
      {time} <span class="muted">({relativeWords(new Date(props.at), now)})</span>
    </>
  );
}

/**
 * Upstream text isolated: `<bdi>` keeps a right-to-left name from reordering the sentence around
 * it, and its controls are balanced inside (`balancedBidi`): a browser isolates `<bdi>` as it does
 * FSI…PDI, so a stray PDI in the text would end the isolate and let an override after it out.
 */
export function Isolated(props: { text: string; class?: string }) {
  return <bdi class={props.class}>{balancedBidi(props.text)}</bdi>;
}

/**
 * Upstream text, bounded and isolated (`Isolated`): a megabyte field shows its first 2 KiB with
 * its size.
 */
export function Text(props: { value: string; max?: number; brief?: boolean }) {
  const { text, cutFrom } = clip(props.value, props.max);
  if (props.brief) return <Isolated text={cutFrom !== null ? `${text}…` : text} />;
  return (
    <>
      <Isolated text={text} />
      {cutFrom !== null ? (
        <span class="muted"> … (cut, {cutFrom.toLocaleString('en-US')} bytes in all)</span>
      ) : null}
    </>
  );
}

/** A coworker's name linking to their page; the uuid when the name is empty. */
export function NameLink(props: { uuid: string; name: string }) {
  return (
    <a href={`/coworkers/${props.uuid}/`}>
      {props.name.trim() === '' ? <code>{props.uuid}</code> : <Text value={props.name} max={120} brief />}
    </a>
  );
}

/** Image thumbnails for a list of upstream URLs, each captioned with its file; non-images are named, never loaded. */
function Thumbs(props: { urls: unknown }) {
  const urls: unknown[] = Array.isArray(props.urls) ? props.urls : [props.urls];
  return (
    <span class="thumbs">
      {urls.slice(0, 8).map((url, i) => (typeof url === 'string' ? <NamedThumb key={i} url={url} /> : null))}
    </span>
  );
}

/** The file an upstream URL names, as a caption: "photo 1.png", never the whole URL. */
export function fileCaption(url: string): string {
  return clip(fileNameOf(url) ?? url, 120).text;
}

/**
 * A small thumbnail captioned with its file name, visible whether or not the image loads (a 48 px
 * box cannot show an alt text); `src` overrides the resolver's choice (held bytes of a media change).
 */
export function NamedThumb(props: { url: string; src?: string | null }) {
  const resolved = useImageSrc(props.url);
  const src = props.src === undefined ? resolved : props.src;
  const name = fileCaption(props.url);
  if (src === null) {
    const kind = /\.(mp4|webm|mov)$/i.test(props.url) ? 'video' : IMAGE_NAME.test(name) ? 'image' : 'file';
    return (
      <span class="thumb-missing">
        <Isolated text={name} /> <span class="muted">({kind}, not shown)</span>
      </span>
    );
  }
  return (
    <span class="thumb">
      <img src={src} alt="" width={48} height={48} loading="lazy" decoding="async" />
      <Isolated class="thumb-name" text={name} />
    </span>
  );
}

const IMAGE_NAME = /\.(png|jpe?g|gif|webp|avif|svg)$/i;

/** A card's picture: large, with the person's name as its alt text. */
export function Thumb(props: { url: unknown; alt: string; size?: number }) {
  const src = useImageSrc(props.url);
  if (src === null) {
    if (typeof props.url !== 'string') return null;
    return <NamedThumb url={props.url} src={null} />;
  }
  const size = props.size ?? 48;
  return <img src={src} alt={props.alt} width={size} height={size} loading="lazy" decoding="async" />;
}

const IMAGE_FIELDS = new Set(['images', 'emoji_file', 'emoji_file_webm']);

/** One value of a field as a person reads it: thumbnails for images, text otherwise. */
export function FieldValue(props: { field: string; value: unknown; label: string }) {
  if (IMAGE_FIELDS.has(props.field) && props.value !== null) {
    const list = Array.isArray(props.value) ? props.value : [props.value];
    if (list.length > 0) return <Thumbs urls={list} />;
  }
  return <Text value={valueText(props.value)} />;
}

/** A changed field's value before (struck through) and after (inserted). */
export function FieldDiff(props: { change: ChangeRow }) {
  const field = props.change.field ?? '';
  return (
    <>
      <del>
        <FieldValue field={field} value={parseStored(props.change.oldValue)} label={`${field} before`} />
      </del>{' '}
      →{' '}
      <ins>
        <FieldValue field={field} value={parseStored(props.change.newValue)} label={`${field} after`} />
      </ins>
    </>
  );
}

/** Words of `describeChange`, each piece of upstream text isolated. */
export function PhraseWords(props: { phrase: Phrase }) {
  return (
    <>
      {props.phrase.map((part, i) =>
        typeof part === 'string' ? part : <Isolated key={i} text={part.upstream} />,
      )}
    </>
  );
}

/** What a media_changed change says: the URL stayed, the bytes behind it did not, and which file. */
export function MediaChangedWords(props: { change: ChangeRow }) {
  return <PhraseWords phrase={changeWords(props.change, undefined).what} />;
}

/** One side of a media_changed change: `{ url, sha256 }`, or null when the stored value is not that. */
function mediaSide(stored: string | null): { url: string; sha256: string } | null {
  const value = parseStored(stored);
  if (value === null || typeof value !== 'object' || !('url' in value) || !('sha256' in value)) return null;
  return typeof value.url === 'string' && typeof value.sha256 === 'string'
    ? { url: value.url, sha256: value.sha256 }
    : null;
}

/**
 * The old and new bytes of a media_changed change, each from the mirror when it holds them: the URL
 * is the same on both sides, so only the mirror can still show what was there before.
 */
export function MediaChangeThumbs(props: { change: ChangeRow }) {
  const { media } = usePage();
  const before = mediaSide(props.change.oldValue);
  const after = mediaSide(props.change.newValue);
  if (before === null || after === null) return null;
  return (
    <span class="diff">
      <del>
        <NamedThumb url={before.url} src={media.heldImageSrc(before.url, before.sha256)} />
      </del>{' '}
      →{' '}
      <ins>
        <NamedThumb url={after.url} src={media.heldImageSrc(after.url, after.sha256) ?? undefined} />
      </ins>
    </span>
  );
}

/**
 * "Zoë joined as QA engineer", "José: post 'qa engineer' → 'QA lead'", "Kate left", "Seán
 * returned": the words of `describeChange`, the name a link, a field change with its values shown.
 */
export function ChangeSentence(props: { change: ChangeRow; name: string; post: string }) {
  const { change } = props;
  const words = changeWords(change, { name: props.name, post: props.post });
  const who = <NameLink uuid={change.uuid} name={props.name} />;
  const appearance = words.appearance ? <span class="muted">{words.appearance}</span> : null;
  if (change.kind === 'changed') {
    return (
      <span class="diff">
        {who}
        {appearance}: <FieldName field={change.field ?? ''} /> <FieldDiff change={change} />
      </span>
    );
  }
  return (
    <>
      {who}
      {appearance}
      {words.joint}
      <PhraseWords phrase={words.what} />
      {change.kind === 'media_changed' ? (
        <>
          {' '}
          <MediaChangeThumbs change={change} />
        </>
      ) : null}
    </>
  );
}

export function fieldLabel(field: string): string {
  return field.replaceAll('_', ' ');
}

/** A field's name as a label: the upstream's (a field the contract does not name may be called anything), isolated. */
export function FieldName(props: { field: string }) {
  return <Isolated text={fieldLabel(props.field)} />;
}

export function Notice(props: { kind: 'warn' | 'bad'; children: ComponentChildren; block?: boolean }) {
  const attributes = {
    class: `notice ${props.kind}`,
    role: props.kind === 'bad' ? ('alert' as const) : ('status' as const),
  };
  // A list inside a <p> would end the paragraph where the list begins, outside the notice's box.
  return props.block ? <div {...attributes}>{props.children}</div> : <p {...attributes}>{props.children}</p>;
}

/**
 * Which history a prune took (`coworker-mirror prune`), said where it is missing instead of a silent
 * gap; the sentences of `prunedWords`, with times in the page's zone. Nothing when none was pruned.
 */
export function PrunedNote(props: { horizon: PruneHorizon }) {
  const { historyBefore, removedBefore } = props.horizon;
  if (historyBefore === null && removedBefore === null) return null;
  return (
    <Notice kind="warn">
      {historyBefore !== null ? (
        <>
          History before <Time at={historyBefore} /> was pruned.{' '}
        </>
      ) : null}
      {removedBefore !== null ? (
        <>
          Coworkers removed by <Time at={removedBefore} /> were pruned.
        </>
      ) : null}
    </Notice>
  );
}

/** Older/newer links of a list; `href` builds a link from the page's current query. */
export function Pager(props: {
  newer: string | null;
  older: string | null;
  newerLabel?: string;
  olderLabel?: string;
}) {
  if (props.newer === null && props.older === null) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {props.newer !== null ? <a href={props.newer}>← {props.newerLabel ?? 'Newer'}</a> : null}
      {props.older !== null ? <a href={props.older}>{props.olderLabel ?? 'Older'} →</a> : null}
    </nav>
  );
}

/** The pager of a numbered list: page `page` of `pages`, each page's link built by `href`. */
export function NumberedPager(props: {
  page: number;
  pages: number;
  href: (page: number) => string;
  newerLabel?: string;
  olderLabel?: string;
}) {
  return (
    <Pager
      newer={props.page > 1 ? props.href(props.page - 1) : null}
      older={props.page < props.pages ? props.href(props.page + 1) : null}
      {...(props.newerLabel !== undefined ? { newerLabel: props.newerLabel } : {})}
      {...(props.olderLabel !== undefined ? { olderLabel: props.olderLabel } : {})}
    />
  );
}
