import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';

/** The issues loadConfig refuses `env` with, or none. */
function issuesOf(env: Record<string, string>): readonly { name: string; problem: string }[] {
  try {
    loadConfig(env);
    return [];
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
}

const clash = (internal: string, pub: string) => [
  {
    name: 'INTERNAL_PORT',
    problem:
      `${internal} is where PORT listens already (${pub}): the internal listener needs a port of its own; ` +
      'choose another INTERNAL_PORT',
  },
];

describe('INTERNAL_PORT and INTERNAL_HOST', () => {
  it('are unset and 127.0.0.1 by default: one port serves everything', () => {
    expect(loadConfig({}).server).toMatchObject({
      port: 8000,
      internalPort: null,
      internalHost: '127.0.0.1',
    });
  });

  it('parse a port of its own on an address of its own', () => {
    const config = loadConfig({ PORT: '8000', INTERNAL_PORT: '9000', INTERNAL_HOST: '10.0.0.5' });
    expect(config.server).toMatchObject({ port: 8000, internalPort: 9000, internalHost: '10.0.0.5' });
  });

  it.each([
    // [HOST, PORT, INTERNAL_HOST, INTERNAL_PORT, refused with]
    ['127.0.0.1', '8000', '127.0.0.1', '8000', clash('127.0.0.1:8000', '127.0.0.1:8000')],
    ['0.0.0.0', '8000', '127.0.0.1', '8000', clash('127.0.0.1:8000', '0.0.0.0:8000')],
    ['127.0.0.1', '8000', '0.0.0.0', '8000', clash('0.0.0.0:8000', '127.0.0.1:8000')],
    ['::', '8000', '127.0.0.1', '8000', clash('127.0.0.1:8000', '[::]:8000')],
    ['localhost', '8000', '0.0.0.0', '8000', clash('0.0.0.0:8000', 'localhost:8000')],
    ['127.0.0.1', '8000', '127.0.0.1', '8001', []],
    ['10.0.0.5', '8000', '127.0.0.1', '8000', []],
    ['0.0.0.0', '8000', '::1', '8000', []],
    // Port 0 is any free port, for each listener its own.
    ['127.0.0.1', '0', '127.0.0.1', '0', []],
  ])(
    'HOST=%s PORT=%s INTERNAL_HOST=%s INTERNAL_PORT=%s',
    (host, port, internalHost, internalPort, issues) => {
      const env = { HOST: host, PORT: port, INTERNAL_HOST: internalHost, INTERNAL_PORT: internalPort };
      expect(issuesOf(env)).toEqual(issues);
    },
  );

  it('takes INTERNAL_HOST at its default without INTERNAL_PORT (a template of every variable)', () => {
    expect(issuesOf({ INTERNAL_HOST: '127.0.0.1' })).toEqual([]);
  });

  it('refuses an INTERNAL_HOST of its own without INTERNAL_PORT: the pages would still be on PORT', () => {
    expect(issuesOf({ INTERNAL_HOST: '10.0.0.5' })).toEqual([
      {
        name: 'INTERNAL_HOST',
        problem:
          'is 10.0.0.5 but INTERNAL_PORT is not set, so everything is served on PORT: set INTERNAL_PORT too, or unset INTERNAL_HOST',
      },
    ]);
  });

  it('refuses a port out of range by name', () => {
    expect(issuesOf({ INTERNAL_PORT: '70000' })).toEqual([
      { name: 'INTERNAL_PORT', problem: 'expected at most 65535 (got "70000")' },
    ]);
  });
});
