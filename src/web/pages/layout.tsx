import type { ComponentChildren } from 'preact';
import { iconAsset, scriptAsset, styleAsset } from '../assets.js';
import { usePage } from '../page-context.js';
import { isolatedText } from '../../text/bidi.js';
import { Isolated } from './components.js';

export type Section = 'status' | 'changes' | 'coworkers' | 'team' | 'runs';

const NAV: [Section, string, string][] = [
  ['status', '/', 'Status'],
  ['changes', '/changes/', 'Changes'],
  ['coworkers', '/coworkers/', 'Coworkers'],
  ['team', '/team/', 'Team as it was'],
  ['runs', '/runs/', 'Runs'],
];

export function Layout(props: {
  title: string;
  /** The title is upstream text (a coworker's name): isolated in the tab's title and the heading. */
  titleFromUpstream?: boolean;
  section: Section | null;
  children: ComponentChildren;
}) {
  const { demo, timeZone } = usePage();
  const upstream = props.titleFromUpstream === true;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${upstream ? isolatedText(props.title) : props.title} · coworker mirror`}</title>
        <link rel="stylesheet" href={styleAsset.path} />
        <link rel="icon" href={iconAsset.path} type="image/svg+xml" />
        <link rel="alternate" type="application/atom+xml" title="Changes" href="/api/mirror/changes.atom" />
        <script src={scriptAsset.path} defer />
      </head>
      <body>
        <header class="site">
          <a class="brand" href="/">
            coworker mirror
          </a>
          <nav aria-label="Main">
            <ul>
              {NAV.map(([section, href, label]) => (
                <li key={section}>
                  <a href={href} aria-current={props.section === section ? 'page' : undefined}>
                    {label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        </header>
        <main>
          {demo ? (
            <p class="notice warn" role="note">
              Demo: this mirror copies the built-in simulated upstream; its coworkers and their changes are
              invented.
            </p>
          ) : null}
          <h1>{upstream ? <Isolated text={props.title} /> : props.title}</h1>
          {props.children}
        </main>
        <footer class="site muted">Times are in {timeZone}.</footer>
      </body>
    </html>
  );
}
