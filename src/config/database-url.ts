import type { Parsed } from './text-values.js';
import { parseWholeNumber } from './text-values.js';
import { describeRefused } from './refused-value.js';
import { parseDuration } from '../time/duration.js';

// Where the mirror keeps its history: a SQLite file (the default) or a PostgreSQL database. One
// setting of each kind (DATABASE_PATH, DATABASE_URL) and one flag (--db) that takes either.

/** A PostgreSQL database, by URL. */
export interface PostgresTarget {
  kind: 'postgres';
  /**
   * The connection string handed to `pg`, password included: never log or show it. libpq's
   * `sslmode` meanings are asked for explicitly (`uselibpqcompat=true`): `pg` otherwise treats
   * `require` as `verify-full`, which refuses the self-signed certificates `require` accepts.
   */
  connectionString: string;
  /** The URL with its password masked (`postgres://user:***@host/db`): the only form shown or logged. */
  label: string;
  host: string;
  port: number;
  database: string;
  user: string;
  /** How long one connection attempt may take (`connect_timeout`, libpq's name, in seconds). */
  connectTimeoutMs: number;
}

/** A SQLite file. */
export interface SqliteTarget {
  kind: 'sqlite';
  path: string;
  label: string;
}

export type DatabaseTarget = PostgresTarget | SqliteTarget;

/** The parameters libpq users put in a URL that `pg` honours; any other is refused, not ignored. */
const PASSED_THROUGH = [
  'sslmode',
  'sslrootcert',
  'sslcert',
  'sslkey',
  'application_name',
  'fallback_application_name',
  'options',
  'client_encoding',
  'connect_timeout',
  'keepalives',
  'keepalives_idle',
  'host',
  'port',
  'user',
  'password',
] as const;

const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

/** A connection attempt that hangs (a firewall dropping packets) fails after this instead of never. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

const URL_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
const POSTGRES_SCHEME = /^postgres(ql)?$/i;

/**
 * The text with any password hidden: the user-info password and a `password=` parameter, wherever
 * a URL appears in it (an error message quoting one too). Works on text that is not a valid URL
 * too, since it is used to report exactly those.
 */
export function maskPassword(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/[^/?#@:\s]*):[^@/?#\s]*@/gi, '$1:***@')
    .replace(/([?&]password=)[^&#]*/gi, '$1***');
}

function checkParameters(url: URL): string | null {
  const unknown = [...url.searchParams.keys()].filter(
    (k) => !(PASSED_THROUGH as readonly string[]).includes(k),
  );
  if (unknown.length > 0) {
    return `unsupported parameter ${unknown.join(', ')}; accepted: ${PASSED_THROUGH.join(', ')}`;
  }
  const sslmode = url.searchParams.get('sslmode');
  if (sslmode !== null && !(SSL_MODES as readonly string[]).includes(sslmode)) {
    return `sslmode must be one of ${SSL_MODES.join(', ')}`;
  }
  if (sslmode === 'verify-ca' && !url.searchParams.has('sslrootcert')) {
    return 'sslmode=verify-ca needs sslrootcert=<CA file>: without it any certificate a public CA signed is trusted';
  }
  const timeout = url.searchParams.get('connect_timeout');
  if (timeout !== null && !/^\d{1,6}$/.test(timeout)) return 'connect_timeout is a whole number of seconds';
  return null;
}

function decoded(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

const PLACEHOLDER_HOST = 'placeholder.invalid';

/**
 * libpq accepts an empty host after credentials (`postgres://user@/db?host=/run/postgresql`), the
 * WHATWG URL parser does not: such a URL is parsed with a placeholder host, taken out again after.
 */
function toUrl(text: string): { url: URL; hostname: string } | null {
  if (URL.canParse(text)) {
    const url = new URL(text);
    return { url, hostname: url.hostname };
  }
  const placeholder = text.replace('@/', `@${PLACEHOLDER_HOST}/`);
  return URL.canParse(placeholder) ? { url: new URL(placeholder), hostname: '' } : null;
}

/** Parses a postgres:// or postgresql:// URL; the problem, when it is not one, names no password. */
export function parsePostgresUrl(text: string): Parsed<PostgresTarget> {
  const scheme = URL_SCHEME.exec(text)?.[1];
  const parsed = scheme !== undefined && POSTGRES_SCHEME.test(scheme) ? toUrl(text) : null;
  if (parsed === null) {
    return { ok: false, problem: 'expected a URL like postgres://user:password@host:5432/database' };
  }
  const { url, hostname } = parsed;
  const problem = checkParameters(url);
  if (problem !== null) return { ok: false, problem };
  const [user, password, path] = [url.username, url.password, url.pathname.slice(1)].map(decoded);
  if (user === null || password === null || path === null) {
    return { ok: false, problem: 'the user, password or database name is not valid percent-encoding' };
  }
  const socketDir = url.searchParams.get('host');
  const database = path || user || 'postgres';
  if (hostname === '' && socketDir === null) {
    return { ok: false, problem: 'expected a host (postgres://user@host/db) or ?host=/socket/folder' };
  }
  if (url.searchParams.has('sslmode') && !url.searchParams.has('uselibpqcompat')) {
    url.searchParams.set('uselibpqcompat', 'true');
  }
  const timeout = url.searchParams.get('connect_timeout');
  return {
    ok: true,
    value: {
      kind: 'postgres',
      connectionString: hostname === '' ? url.href.replace(`@${PLACEHOLDER_HOST}/`, '@/') : url.href,
      label: maskPassword(text),
      host: socketDir ?? hostname.replace(/^\[(.+)\]$/, '$1'),
      port: Number(url.searchParams.get('port') ?? (url.port || 5432)),
      database,
      user: url.searchParams.get('user') ?? (user || 'postgres'),
      // libpq: 0 means wait forever, and below 2 s is raised to 2 s.
      connectTimeoutMs:
        timeout === null
          ? DEFAULT_CONNECT_TIMEOUT_MS
          : Number(timeout) === 0
            ? 0
            : Math.max(2, Number(timeout)) * 1000,
    },
  };
}

/** What `--db` was given: a postgres:// URL, or else the path of a SQLite file. */
export function parseDbArgument(text: string): Parsed<DatabaseTarget> {
  const scheme = URL_SCHEME.exec(text)?.[1];
  if (scheme === undefined) {
    return text.trim() === ''
      ? { ok: false, problem: 'expected a SQLite file path or a postgres:// URL' }
      : { ok: true, value: { kind: 'sqlite', path: text, label: text } };
  }
  if (!POSTGRES_SCHEME.test(scheme)) {
    return {
      ok: false,
      problem: `${scheme}:// is not a database this mirror uses: give a SQLite file path or a postgres:// URL`,
    };
  }
  return parsePostgresUrl(text);
}

/**
 * The database settings' parsers, by setting name: the settings table's schemas wrap them without zod
 * (`textSchema`), so a command that only reads the store never loads it.
 */
export const databaseSettingParsers = {
  /** DATABASE_PATH (or `--db`): any text but none. */
  path: (text: string): Parsed<string> =>
    text === ''
      ? { ok: false, problem: 'expected a SQLite file path or a postgres:// URL' }
      : { ok: true, value: text },
  /** DATABASE_URL: the text, refused with the URL parser's problem. */
  url: (text: string): Parsed<string> => {
    const parsed = parsePostgresUrl(text);
    return parsed.ok ? { ok: true, value: text } : parsed;
  },
  /** DATABASE_POOL_MAX: connections one process opens to PostgreSQL at most. */
  poolMax: (text: string): Parsed<number> => parseWholeNumber(text, 1, 100),
  /** A database deadline (DATABASE_PROBE_TIMEOUT, …): a duration PostgreSQL can hold as its milliseconds. */
  timeout: (text: string): Parsed<number> => {
    const ms = parseDuration(text);
    if (ms === null) return { ok: false, problem: 'expected a duration like 500ms, 2s, 1m or milliseconds' };
    if (ms < MIN_DEADLINE_MS) return { ok: false, problem: `expected at least ${MIN_DEADLINE_MS}ms` };
    if (ms > MAX_DEADLINE_MS) return { ok: false, problem: 'expected at most 24h' };
    return { ok: true, value: ms };
  },
};

const MIN_DEADLINE_MS = 10;
const MAX_DEADLINE_MS = 24 * 3_600_000;

export const DEFAULT_POOL_MAX = 10;

export interface DatabaseInputs {
  /** `--db`, when given. */
  flag?: string | undefined;
  DATABASE_URL?: string | undefined;
  DATABASE_PATH?: string | undefined;
  /** The SQLite file used when nothing is set. */
  defaultPath: string;
}

export type DatabaseChoice =
  { ok: true; target: DatabaseTarget } | { ok: false; issues: { name: string; problem: string }[] };

const given = (value: string | undefined): value is string => value !== undefined && value !== '';

/**
 * Which database a command uses: `--db` (a URL or a path) over the environment; DATABASE_URL or
 * DATABASE_PATH, never both (which one was meant cannot be guessed); else the default SQLite file.
 * Issues are in ConfigError's shape, naming the variable or flag.
 */
export function chooseDatabase(inputs: DatabaseInputs): DatabaseChoice {
  if (given(inputs.flag)) {
    const parsed = parseDbArgument(inputs.flag);
    return parsed.ok
      ? { ok: true, target: parsed.value }
      : {
          ok: false,
          issues: [{ name: '--db', problem: describeRefused('url', inputs.flag, parsed.problem) }],
        };
  }
  if (given(inputs.DATABASE_URL) && given(inputs.DATABASE_PATH)) {
    const problem =
      'DATABASE_URL and DATABASE_PATH are both set; set DATABASE_URL for PostgreSQL or DATABASE_PATH for SQLite, not both';
    return {
      ok: false,
      issues: [
        { name: 'DATABASE_URL', problem },
        { name: 'DATABASE_PATH', problem },
      ],
    };
  }
  if (given(inputs.DATABASE_URL)) {
    const text = inputs.DATABASE_URL;
    const parsed = parsePostgresUrl(text);
    return parsed.ok
      ? { ok: true, target: parsed.value }
      : {
          ok: false,
          issues: [{ name: 'DATABASE_URL', problem: describeRefused('url', text, parsed.problem) }],
        };
  }
  if (given(inputs.DATABASE_PATH) && URL_SCHEME.test(inputs.DATABASE_PATH)) {
    // Taken as a file name, a URL would become folders named after its user and password.
    const problem = 'DATABASE_PATH is a SQLite file path: set a postgres:// URL as DATABASE_URL';
    return {
      ok: false,
      issues: [{ name: 'DATABASE_PATH', problem: describeRefused('url', inputs.DATABASE_PATH, problem) }],
    };
  }
  const path = given(inputs.DATABASE_PATH) ? inputs.DATABASE_PATH : inputs.defaultPath;
  return { ok: true, target: { kind: 'sqlite', path, label: path } };
}
