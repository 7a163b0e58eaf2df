import { readFileSync } from 'node:fs';

// src/ and dist/ both sit directly under the package root.
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

export const VERSION = pkg.version;
export const USER_AGENT = `coworker-mirror/${VERSION}`;
