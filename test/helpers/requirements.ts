import { existsSync } from 'node:fs';
import { it } from 'vitest';
import { findReferencePython } from '../http/drf/reference-server.js';

/**
 * Something from the machine that some tests need and npm does not install: the reference DRF
 * site (Debian's DRF, Django and gunicorn) and Debian's headless Chromium.
 */
export interface Requirement<T> {
  what: string;
  /** What the tests use (a path, a command), or null when the machine lacks it. */
  found: T | null;
  install: string;
}

/** CI installs every requirement and sets this (`.ci/run`): there a missing one is a failure. */
export const REQUIRE_REFERENCE = process.env.REQUIRE_REFERENCE === '1';

/** The Python that runs test/drf-reference/server.py under gunicorn. */
export function referenceDrf(): Requirement<string> {
  return {
    what: 'the reference DRF site (a python3 that can `import rest_framework, django, gunicorn`)',
    found: findReferencePython(),
    install: 'apt-get install -y python3-djangorestframework python3-django gunicorn',
  };
}

const CHROMIUM = '/usr/bin/chromium';

/** Debian's headless Chromium, driven by playwright-core. */
export function chromiumBrowser(): Requirement<string> {
  return {
    what: `Debian's Chromium at ${CHROMIUM}`,
    found: existsSync(CHROMIUM) ? CHROMIUM : null,
    install: 'apt-get install -y chromium fonts-dejavu-core',
  };
}

/**
 * For `describe.skipIf(missing(r))` and `it.skipIf(missing(r))`: true when `r` is missing, and then
 * one test beside the skipped ones says what is missing and how to install it. That test is
 * skipped, with the reason as its note, unless REQUIRE_REFERENCE=1, where it fails: one rule for
 * every test that needs the machine's DRF or Chromium, so CI cannot pass on skipped tests.
 */
export function missing(requirement: Requirement<unknown>): boolean {
  if (requirement.found !== null) return false;
  const reason = `missing ${requirement.what}; install it with: ${requirement.install}`;
  // The default reporter shows no skip notes; this line is what a person running `npm test` sees.
  if (!REQUIRE_REFERENCE) console.warn(`skipping tests: ${reason}`);
  it(`needs ${requirement.what}`, (context) => {
    if (!REQUIRE_REFERENCE) context.skip(reason);
    throw new Error(`${reason} (REQUIRE_REFERENCE=1: required here)`);
  });
  return true;
}

/** A command from one of Debian's packages, looked up at its Debian path. */
function debianCommand(path: string, what: string, pkg: string): Requirement<string> {
  return {
    what: `${what} at ${path}`,
    found: existsSync(path) ? path : null,
    install: `apt-get install -y ${pkg}`,
  };
}

/** The load generator of the serving benchmarks, GNU time and the sqlite3 shell of the export's baseline. */
export const benchTools = {
  wrk: () => debianCommand('/usr/bin/wrk', 'wrk', 'wrk'),
  time: () => debianCommand('/usr/bin/time', 'GNU time', 'time'),
  sqlite3: () => debianCommand('/usr/bin/sqlite3', 'the sqlite3 shell', 'sqlite3'),
} as const;
