import { describe, expect, it } from 'vitest';
import { checkPageLinks, listLocation, pageUrl } from '../../src/upstream/page-links.js';
import { catchMirrorError } from './harness.js';

const LIST = 'http://up.test:8765/mount/api/model/team-block-coworker/list/';
const location = listLocation('http://up.test:8765/mount/');

describe('listLocation and pageUrl', () => {
  it.each([
    ['http://up.test:8765', 'http://up.test:8765/api/model/team-block-coworker/list/'],
    ['http://up.test:8765/', 'http://up.test:8765/api/model/team-block-coworker/list/'],
    ['http://up.test:8765/mount', LIST],
    ['http://up.test:8765/mount//', LIST],
  ])('keeps the path prefix of %s', (base, expected) => {
    expect(listLocation(base).listUrl).toBe(expected);
  });

  it('page 1 is the bare list URL; later pages carry ?page=N', () => {
    expect(pageUrl(location, 1)).toBe(LIST);
    expect(pageUrl(location, 12)).toBe(`${LIST}?page=12`);
  });
});

describe('checkPageLinks', () => {
  // [page, lastPage, next, previous]
  const valid: [number, number, string | null, string | null][] = [
    [1, 1, null, null],
    [1, 3, `${LIST}?page=2`, null],
    [2, 3, `${LIST}?page=3`, LIST],
    [3, 3, null, `${LIST}?page=2`],
    [3, 5, `${LIST}?page=4`, `${LIST}?page=2`],
    [2, 2, null, 'http://UP.test:8765/mount/api/model/team-block-coworker/list/'],
  ];
  it.each(valid)('accepts DRF links on page %i of %i', (page, last, next, previous) => {
    expect(() => checkPageLinks(location, { next, previous }, page, last)).not.toThrow();
  });

  // [label, page, lastPage, next, previous, code, message part]
  const invalid: [string, number, number, string | null, string | null, string, string][] = [
    [
      'next on another host',
      1,
      3,
      'http://evil.test:8765/mount/api/model/team-block-coworker/list/?page=2',
      null,
      'UPSTREAM_FOREIGN_NEXT',
      'points outside',
    ],
    [
      'next on another port',
      1,
      3,
      'http://up.test:9999/mount/api/model/team-block-coworker/list/?page=2',
      null,
      'UPSTREAM_FOREIGN_NEXT',
      '"next"',
    ],
    [
      'next over https',
      1,
      3,
      'https://up.test:8765/mount/api/model/team-block-coworker/list/?page=2',
      null,
      'UPSTREAM_FOREIGN_NEXT',
      '"next"',
    ],
    [
      'next on another path',
      1,
      3,
      'http://up.test:8765/api/model/team-block-coworker/list/?page=2',
      null,
      'UPSTREAM_FOREIGN_NEXT',
      '"next"',
    ],
    [
      'previous on another host',
      2,
      3,
      `${LIST}?page=3`,
      'http://evil.test/x',
      'UPSTREAM_FOREIGN_NEXT',
      '"previous"',
    ],
    ['next to itself', 2, 3, `${LIST}?page=2`, LIST, 'UPSTREAM_PAGE_LOOP', 'goes back to page 2'],
    ['next back to page 1', 2, 3, LIST, LIST, 'UPSTREAM_PAGE_LOOP', 'goes back to page 1'],
    [
      'next skips a page',
      1,
      3,
      `${LIST}?page=3`,
      null,
      'UPSTREAM_PAGINATION',
      'should be page 2, got page 3',
    ],
    [
      'next missing before the last page',
      2,
      3,
      null,
      LIST,
      'UPSTREAM_PAGINATION',
      'should be page 3, got null',
    ],
    [
      'next present on the last page',
      3,
      3,
      `${LIST}?page=4`,
      `${LIST}?page=2`,
      'UPSTREAM_PAGINATION',
      'should be null, got page 4',
    ],
    ['previous on page 1', 1, 3, `${LIST}?page=2`, LIST, 'UPSTREAM_PAGINATION', '"previous" should be null'],
    [
      'extra query parameter',
      1,
      3,
      `${LIST}?page=2&format=json`,
      null,
      'UPSTREAM_PAGINATION',
      'unexpected query',
    ],
    ['page not a number', 1, 3, `${LIST}?page=last`, null, 'UPSTREAM_PAGINATION', 'unexpected query'],
  ];
  it.each(invalid)('rejects %s', async (_label, page, last, next, previous, code, part) => {
    const error = await catchMirrorError(() =>
      Promise.resolve().then(() => checkPageLinks(location, { next, previous }, page, last)),
    );
    expect(error.code).toBe(code);
    expect(error.message).toContain(part);
  });
});
