import type { ChangeSubject } from '../db/run-commit.js';
import { Feed } from 'feed';
import { Fragment, h } from 'preact';
import { renderToString } from 'preact-render-to-string';
import type { ChangeRow } from '../db/schema.js';
import { changeSentence } from './change-text.js';
import type { MediaResolver } from './media-source.js';
import { PageContextValue, type PageContext } from './page-context.js';
import { configuredTimeZone } from './time-zone.js';
import { ChangeSentence } from './pages/components.js';

/** Characters XML 1.0 cannot carry at all, escaped or not (C0 controls, lone surrogates, U+FFFE/F). */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text for inside a CDATA section: no XML-illegal characters, and no `]]>` to end it early. */
function cdataSafe(html: string): string {
  return html.replace(NOT_XML, '\uFFFD').replaceAll(']]>', ']]&gt;');
}

export interface FeedInput {
  /**
   * The mirror's absolute base URL without a trailing slash: PUBLIC_BASE_URL (which may carry a
   * path, https://example.com/mirror) or the request's origin.
   */
  origin: string;
  /** Absolute URL of this feed request. */
  selfUrl: string;
  changes: ChangeRow[];
  subjects: Map<number, ChangeSubject>;
  media: MediaResolver;
  now: Date;
}

/** Atom 1.0: one entry per change, titled by its sentence, the highlighted diff as its content. */
export function changesAtom(input: FeedInput): string {
  const newest = input.changes[0];
  const feed = new Feed({
    id: `${input.origin}/changes/`,
    title: 'Coworker mirror: changes',
    link: `${input.origin}/changes/`,
    feedLinks: { atom: input.selfUrl },
    updated: newest ? new Date(newest.at) : input.now,
    author: { name: 'coworker mirror' },
    generator: false,
  });
  const context: PageContext = {
    now: input.now,
    media: input.media,
    imageOrigins: new Set(),
    demo: false,
    timeZone: configuredTimeZone(),
  };
  for (const change of input.changes) {
    const subject = input.subjects.get(change.id);
    const content = renderToString(
      h(
        PageContextValue.Provider,
        { value: context },
        h(ChangeSentence, { change, name: subject?.name ?? '', post: subject?.post ?? '' }),
      ),
    );
    // Readers show entries away from the mirror (mail digests, chat bots): every link absolute.
    // Only the page's own attributes can hold `="/` — upstream text is escaped (`"` is &quot;).
    const absolute = content.replace(/ (href|src)="\//g, ` $1="${input.origin}/`);
    feed.addItem({
      // The title is declared as HTML by the library: escape the sentence as text.
      title: cdataSafe(renderToString(h(Fragment, null, changeSentence(change, subject)))),
      id: `${input.origin}/coworkers/${change.uuid}/#change-${change.id}`,
      link: `${input.origin}/coworkers/${change.uuid}/`,
      date: new Date(change.at),
      content: cdataSafe(absolute),
    });
  }
  return withXmlBase(feed.atom1(), `${input.origin}/`);
}

const ATOM_ROOT = '<feed xmlns="http://www.w3.org/2005/Atom">';

/**
 * `xml:base` on the root, so a reader resolves any relative reference against the mirror even when
 * the feed travels without its address (a mail digest, a chat bot); every link is absolute as well.
 */
function withXmlBase(atom: string, base: string): string {
  const attribute = base.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');
  return atom.replace(ATOM_ROOT, `<feed xmlns="http://www.w3.org/2005/Atom" xml:base="${attribute}">`);
}
