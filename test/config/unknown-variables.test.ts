import { closest, distance } from 'fastest-levenshtein';
import { describe, expect, it } from 'vitest';
import { unknownVariablesIn } from '../../src/config/load-settings.js';
import { settingList } from '../../src/config/setting-table.js';

const KNOWN = [...settingList.map((s) => s.env), 'NODE_ENV', 'NO_COLOR', 'FORCE_COLOR', 'TZ'];

const OWNED = [...new Set(KNOWN.map((k) => `${k.split('_', 1)[0]}_`))].filter(
  (p) => KNOWN.filter((k) => k.startsWith(p)).length > 1,
);

/** The check before its three-piece filter: every name of about the length, measured whole. */
function reference(name: string): string | undefined {
  const upper = name.toUpperCase();
  const alike = KNOWN.filter((k) => Math.abs(k.length - upper.length) <= 2);
  const nearest = alike.length > 0 ? closest(upper, alike) : undefined;
  if (nearest !== undefined && distance(upper, nearest) <= (nearest.length <= 5 ? 1 : 2)) return nearest;
  return OWNED.some((p) => upper.startsWith(p)) ? closest(upper, KNOWN) : undefined;
}

/** Misspellings of a name: one or two letters dropped, doubled, swapped or replaced. */
function typos(name: string): string[] {
  const out = new Set<string>();
  for (let i = 0; i < name.length; i++) {
    const drop = name.slice(0, i) + name.slice(i + 1);
    out.add(drop);
    out.add(name.slice(0, i) + name[i] + name.slice(i));
    out.add(name.slice(0, i) + 'X' + name.slice(i + 1));
    out.add(name.slice(0, i) + (name[i + 1] ?? '') + name[i] + name.slice(i + 2));
    for (let j = i + 2; j < drop.length; j += 3) out.add(drop.slice(0, j) + 'Q' + drop.slice(j + 1));
  }
  return [...out];
}

describe('the unknown-variable check, filtered by the three pieces of each name', () => {
  const names = [
    ...KNOWN.flatMap(typos),
    ...[
      'PATH',
      'HOME',
      'HOSTNAME',
      'PWD',
      'TERM',
      'SHELL',
      'LANG',
      'USER',
      'npm_config_cache',
      'CI',
      'X',
      'HOTS',
    ],
  ].filter((n) => !KNOWN.includes(n));

  it(`suggests what measuring every name of about the length suggested (${names.length} names)`, () => {
    const env = Object.fromEntries(names.map((n) => [n, 'x']));
    const found = new Map(unknownVariablesIn(env).map((u) => [u.name, u.suggestion]));
    const differing = names.filter((n) => found.get(n) !== reference(n));
    expect(differing).toEqual([]);
  });
});
