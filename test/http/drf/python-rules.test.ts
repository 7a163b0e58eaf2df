import { describe, expect, it } from 'vitest';
import { parsePythonInt } from '../../../src/drf/python-int.js';
import { pyJsonDumps, pyNumber } from '../../../src/drf/python-json.js';
import { decodePathInfo, pyParseQsl, rewriteQuery } from '../../../src/drf/python-url.js';
import { isIPv6, isValidDjangoHost, splitTarget } from '../../../src/drf/request-target.js';

// Every expected value below was printed by Python 3.11.2 (Debian bookworm), DRF 3.14, Django 3.2.
describe('parsePythonInt is Python int(str)', () => {
  it.each([
    ['1', 1n],
    ['  7\t', 7n],
    ['+3', 3n],
    ['-2', -2n],
    ['1_000', 1000n],
    ['1__0', null],
    ['_1', null],
    ['1_', null],
    ['٣', 3n],
    ['２', 2n],
    ['𝟑', 3n],
    ['1e1', null],
    ['1.0', null],
    ['0x10', null],
    ['', null],
    [' ', null],
    ['\u3000 2 \u2003', 2n],
    ['\x1c1', null],
    ['\ufeff1', null],
    ['007', 7n],
    ['+', null],
    ['-', null],
    ['- 1', null],
    ['\xa0\x85 5', 5n],
    ['²', null],
    ['9'.repeat(4301), null],
  ] as const)('int(%j) → %s', (text, expected) => {
    expect(parsePythonInt(text)).toBe(expected);
  });
});

describe('rewriteQuery is DRF replace_query_param / remove_query_param', () => {
  it.each([
    ['page=2', 'page=7', ''],
    ['a=1&page=2&a=2', 'a=1&a=2&page=7', 'a=1&a=2'],
    ['z&page=3', 'page=7&z=', 'z='],
    ['b=%zz+y&page=1', 'b=%25zz+y&page=7', 'b=%25zz+y'],
    ['%C3%A9=1&page=5', 'page=7&%C3%A9=1', '%C3%A9=1'],
    ['%FF=1', 'page=7&%EF%BF%BD=1', '%EF%BF%BD=1'],
    ['k=%ED%A0%80', 'k=%EF%BF%BD%EF%BF%BD%EF%BF%BD&page=7', 'k=%EF%BF%BD%EF%BF%BD%EF%BF%BD'],
    [';a=1&x=1;y=2', '%3Ba=1&page=7&x=1%3By%3D2', '%3Ba=1&x=1%3By%3D2'],
    ['u={|}&v=^`', 'page=7&u=%7B%7C%7D&v=%5E%60', 'u=%7B%7C%7D&v=%5E%60'],
    ['s=a+b&t=a%2Bb', 'page=7&s=a+b&t=a%2Bb', 's=a+b&t=a%2Bb'],
    ['=x&&e=', '=x&e=&page=7', '=x&e='],
    // Python sorts by code point: U+FFFD before U+1F600 (JS's default sort says the opposite).
    ['%EF%BF%BD=r&%F0%9F%98%80=e', 'page=7&%EF%BF%BD=r&%F0%9F%98%80=e', '%EF%BF%BD=r&%F0%9F%98%80=e'],
    ['AB=1&ab=2&_=3&~=4', 'AB=1&_=3&ab=2&page=7&~=4', 'AB=1&_=3&ab=2&~=4'],
  ])('%s → replace: %s, remove: %s', (query, replaced, removed) => {
    expect(rewriteQuery(query, 'page', '7')).toBe(replaced);
    expect(rewriteQuery(query, 'page', null)).toBe(removed);
  });

  it('parses like parse_qsl(keep_blank_values=True): last value of a repeated key is QueryDict.get()', () => {
    expect(pyParseQsl('page=1&page=+2&&x&%70age=%33')).toEqual([
      ['page', '1'],
      ['page', ' 2'],
      ['x', ''],
      ['page', '3'],
    ]);
  });
});

describe('pyJsonDumps is DRF JSONRenderer', () => {
  it.each([
    [1.5, '1.5'],
    [1e-7, '1e-07'],
    [1e21, '1e+21'],
    [-0.00001, '-1e-05'],
    [0.0001, '0.0001'],
    [123.456, '123.456'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [0.1 + 0.2, '0.30000000000000004'],
    [2.5e-5, '2.5e-05'],
    [1e22, '1e+22'],
    [100, '100'],
    [1e16, '10000000000000000'],
    [-0, '0'],
  ])('%d → %s', (value, text) => {
    expect(pyNumber(value)).toBe(text);
  });

  it('escapes like ensure_ascii=False plus DRF U+2028/U+2029 escaping, and indents like Python', () => {
    const value = { a: '\u2028\u2029\x01\x7f"\\/é😀', b: [], c: {}, d: [1, { e: null }] };
    expect(pyJsonDumps(value)).toBe(
      '{"a":"\\u2028\\u2029\\u0001\x7f\\"\\\\/é😀","b":[],"c":{},"d":[1,{"e":null}]}',
    );
    expect(pyJsonDumps(value, 3)).toBe(
      '{\n   "a": "\\u2028\\u2029\\u0001\x7f\\"\\\\/é😀",\n   "b": [],\n   "c": {},\n   "d": [\n      1,\n      {\n         "e": null\n      }\n   ]\n}',
    );
  });

  it('writes a lone surrogate as an escape (DRF would fail with a 500 on it)', () => {
    expect(pyJsonDumps(['\ud800x', 'y\udc00', '\ud83d\ude00'])).toBe('["\\ud800x","y\\udc00","😀"]');
  });
});

describe('request target and host, as gunicorn and Django read them', () => {
  it.each([
    ['/api/x/?page=2#frag', '/api/x/', 'page=2'],
    ['/api/%6Cist/?a', '/api/list/', 'a'],
    ['http://other.example/api/?q=1', '/api/', 'q=1'],
    ['/caf%C3%A9/%FF', '/café/%FF', ''],
    ['/a%2Fb?', '/a/b', ''],
  ])('%s → path_info %s, query %s', (url, pathInfo, query) => {
    expect(splitTarget(url)).toMatchObject({ pathInfo, query });
    expect(decodePathInfo(splitTarget(url).rawPath)).toBe(pathInfo);
  });

  it.each([
    ['example.com', true],
    ['EXAMPLE.com:8080', true],
    ['[::1]:8000', true],
    ['[1:2]', true],
    ['bad_host', false],
    ['example.com.', true],
    ['.', false],
    ['localhost:', false],
    ['a:b', false],
    ['h:80:90', false],
    ['exa mple', false],
  ])('Host %s valid for Django: %s', (host, valid) => {
    expect(isValidDjangoHost(host)).toBe(valid);
  });

  it.each([
    ['::1', true],
    ['1:2', false],
    ['::ffff:1.2.3.4', true],
    ['::1.2.3.04', false],
    ['1:2:3:4:5:6:7:8', true],
    ['1:2:3:4:5:6:7:8:9', false],
    ['1::2::3', false],
    [':1::', false],
    ['::', true],
    ['12345::', false],
  ])('ipaddress.ip_address(%s) accepted: %s', (text, valid) => {
    expect(isIPv6(text)).toBe(valid);
  });
});
