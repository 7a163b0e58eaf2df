import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load-config.js';
import { ConfigError } from '../../src/errors.js';

function issuesOf(env: Record<string, string | undefined>): { name: string; problem: string }[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.issues];
    throw error;
  }
  return [];
}

describe('the sync caps agree', () => {
  it('regression: the defaults admit a 1,000,000-entry listing on every cap (50,000 pages held only 400,000)', () => {
    const { sync } = loadConfig({});
    expect(sync).toMatchObject({
      maxEntries: 1_000_000,
      maxPages: 125_000,
      maxListingBytes: 512_000_000,
      maxHeapMb: 512,
    });
    // The simulated upstream's 1,000,000-entry listing passed 256 MiB at page 116,463.
    expect(sync.maxListingBytes).toBeGreaterThan(Math.ceil((256 * 1024 * 1024 * 125_000) / 116_463));
  });

  it.each([
    {
      set: { SYNC_MAX_PAGES: '50000' },
      name: 'SYNC_MAX_PAGES',
      fix: 'raise SYNC_MAX_PAGES to 125000 or lower SYNC_MAX_ENTRIES to 400000',
    },
    {
      set: { SYNC_MAX_LISTING_BYTES: String(256 * 1024 * 1024) },
      name: 'SYNC_MAX_LISTING_BYTES',
      fix: 'raise SYNC_MAX_LISTING_BYTES to 512000000 or lower SYNC_MAX_ENTRIES to 524288',
    },
    {
      set: { SYNC_MAX_HEAP_MB: '256' },
      name: 'SYNC_MAX_HEAP_MB',
      fix: 'raise SYNC_MAX_HEAP_MB to 293 or lower SYNC_MAX_LISTING_BYTES to 436207616',
    },
  ])('refuses $name below what the caps above it admit, naming the fix', ({ set, name, fix }) => {
    const issues = issuesOf(set);
    expect(issues.map((i) => i.name)).toEqual([name]);
    expect(issues[0]?.problem).toContain(fix);
  });

  it('lowering the entry cap lets every other cap go down with it', () => {
    const env = {
      SYNC_MAX_ENTRIES: '1000',
      SYNC_MAX_PAGES: '125',
      SYNC_MAX_LISTING_BYTES: '512000',
      SYNC_MAX_HEAP_MB: '64',
    };
    expect(issuesOf(env)).toEqual([]);
    expect(issuesOf({ ...env, SYNC_MAX_PAGES: '124' }).map((i) => i.name)).toEqual(['SYNC_MAX_PAGES']);
  });

  it('names every contradiction at once', () => {
    const issues = issuesOf({
      SYNC_MAX_PAGES: '10',
      SYNC_MAX_LISTING_BYTES: '600000000',
      SYNC_MAX_HEAP_MB: '64',
    });
    expect(issues.map((i) => i.name)).toEqual(['SYNC_MAX_PAGES', 'SYNC_MAX_HEAP_MB']);
  });
});
