import { capContradictions } from './caps.js';
import { listenerContradictions } from './listeners.js';
import { chooseDatabase, type DatabaseTarget } from './database-url.js';
import type { Issue } from './raw-settings.js';
import { parseHeaderLine, type UpstreamTarget } from './upstream-target.js';
import { settings, type SettingKey } from './setting-table.js';
import type { SettingValues } from './setting-values.js';
import { mediaFolderOf } from './media-dir.js';

/** The database group's values as the settings table parses them. */
export type DatabaseValues = SettingValues['database'];

const PLACEHOLDER_TARGET: DatabaseTarget = { kind: 'sqlite', path: '', label: '' };

/** The chosen store (`chooseDatabase`): `--db` (a path or a URL), else DATABASE_URL or DATABASE_PATH. */
export function databaseOf(
  values: DatabaseValues,
  issues: Issue[],
  fromFlag: boolean,
  explicit: ReadonlySet<SettingKey>,
) {
  const choice = chooseDatabase({
    flag: fromFlag ? values.path : undefined,
    DATABASE_URL: values.url ?? undefined,
    DATABASE_PATH: !fromFlag && explicit.has('database.path') ? values.path : undefined,
    defaultPath: settings.database.path.default,
  });
  if (!choice.ok) issues.push(...choice.issues);
  const target = choice.ok ? choice.target : PLACEHOLDER_TARGET;
  // `path` stays the SQLite file's path (what SQLite-only features read); with PostgreSQL, its label.
  return { ...values, path: target.kind === 'sqlite' ? target.path : target.label, target };
}

/** The chosen store with the database group's values: `Config['database']` of every command. */
export type DatabaseConfig = ReturnType<typeof databaseOf>;

/**
 * What the settings imply together, worked out once so no caller re-derives it: the upstream target
 * (its URL, masked label and auth headers, in place of the URL, token and header it comes from; null
 * when none is named: the demo) and the media folder (MEDIA_DIR, else the database's own: media-dir.ts).
 */
export function derive(
  values: SettingValues,
  issues: Issue[],
  dbFromFlag: boolean,
  explicit: ReadonlySet<SettingKey>,
) {
  const { url, token, header, ...upstream } = values.upstream;
  const database = databaseOf(values.database, issues, dbFromFlag, explicit);
  const target = url ? upstreamTarget(url, token, header, issues) : null;
  issues.push(...capContradictions(values.sync));
  issues.push(...listenerContradictions(values.server));
  if (values.demo.enabled && target) {
    issues.push({
      name: 'DEMO',
      problem: 'DEMO=1 runs the built-in simulated upstream, but UPSTREAM_URL is set too: unset one of them',
    });
  }
  return {
    ...values,
    upstream: { ...upstream, target },
    database,
    media: { ...values.media, ...mediaFolderOf(database.target, values.media.dir) },
  };
}

/** Gathers the URL's credentials, the token and the header; two sources of Authorization is an error. */
function upstreamTarget(
  url: NonNullable<SettingValues['upstream']['url']>,
  token: string | null,
  headerText: string | null,
  issues: Issue[],
): UpstreamTarget {
  const headers: Record<string, string> = {};
  const sources: string[] = [];
  if (url.basicAuth) {
    headers.authorization = url.basicAuth;
    sources.push('the user:password in UPSTREAM_URL');
  }
  if (token) {
    headers.authorization = `Bearer ${token}`;
    sources.push('UPSTREAM_TOKEN');
  }
  const header = headerText ? parseHeaderLine(headerText) : null;
  if (header) {
    if (header[0] === 'authorization') sources.push('UPSTREAM_HEADER');
    headers[header[0]] = header[1];
  }
  if (sources.length > 1) {
    issues.push({
      name: 'UPSTREAM_TOKEN / UPSTREAM_HEADER',
      problem: `only one Authorization can be sent, but ${sources.join(' and ')} each set one: keep one`,
    });
  }
  return {
    url: url.url,
    label: url.label,
    headers,
    ...(url.basicAuth !== null ? { credentialsInUrl: true } : {}),
  };
}
