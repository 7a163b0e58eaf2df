import { describe, expect, it } from 'vitest';
import { isDatabaseAway } from '../../src/db/database-away.js';
import { ConfigError, MirrorError } from '../../src/errors.js';

const dbError = (code: string | null, message = 'cannot connect to PostgreSQL') =>
  new MirrorError('DB_ERROR', message, { database: 'postgres://u:***@h/db', code });

describe('which failures of an open a server waits out with its local snapshot', () => {
  it('waits for a database that cannot be reached, never for a setting to fix', () => {
    const cases: [string, unknown, boolean][] = [
      ['nothing listening', dbError('ECONNREFUSED'), true],
      ['no answer (errno)', dbError('ETIMEDOUT'), true],
      ['no route', dbError('EHOSTUNREACH'), true],
      ['a name the resolver cannot answer now', dbError('EAI_AGAIN'), true],
      ['no socket yet', dbError('ENOENT'), true],
      ['shutting down', dbError('57P01'), true],
      ['starting up', dbError('57P03'), true],
      ['out of slots', dbError('53300'), true],
      ['a connection failure class', dbError('08006'), true],
      ['a connect timeout without a code', dbError(null, 'timeout exceeded when trying to connect'), true],
      ['a bound passed', new MirrorError('DATABASE_TIMEOUT', 'no answer within 2 s'), true],
      ['a refused password', dbError('28P01'), false],
      ['a refused user', dbError('28000'), false],
      ['a missing database', dbError('3D000'), false],
      ['an unknown host', dbError('ENOTFOUND'), false],
      ['a refused certificate', dbError('SELF_SIGNED_CERT_IN_CHAIN'), false],
      ['another failure without a code', dbError(null, 'check DATABASE_URL'), false],
      ['a bad setting', new ConfigError([{ name: 'DATABASE_URL', problem: 'not a URL' }]), false],
      ['another error', new MirrorError('MEDIA_DIR_FOREIGN', 'not ours'), false],
      ['not a mirror error', new Error('ECONNREFUSED'), false],
    ];
    expect(cases.map(([name, error]) => [name, isDatabaseAway(error)])).toEqual(
      cases.map(([name, , away]) => [name, away]),
    );
  });
});
