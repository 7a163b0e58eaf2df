import { describe, expect, it } from 'vitest';
import { DjangoServerError } from '../../../src/drf/media-type.js';
import { negotiate } from '../../../src/drf/negotiation.js';
import { indentOf } from '../../../src/drf/respond.js';

describe('DRF DefaultContentNegotiation with JSONRenderer + BrowsableAPIRenderer', () => {
  it.each([
    [undefined, null, 'json', 'application/json', null],
    ['*/*', null, 'json', 'application/json', null],
    ['*/*; q=0.8', null, 'json', 'application/json;q=0.8', null],
    ['*/*;indent=2', null, 'json', 'application/json;indent=2', 2],
    ['application/json; indent=4', null, 'json', 'application/json; indent=4', 4],
    ['application/json; indent=12', null, 'json', 'application/json; indent=12', 8],
    ['application/json; indent=-3', null, 'json', 'application/json; indent=-3', null],
    ['application/json; indent=0', null, 'json', 'application/json; indent=0', null],
    ['application/json; indent="3"', null, 'json', 'application/json; indent="3"', 3],
    ['application/json;indent=1_0', null, 'json', 'application/json;indent=1_0', 8],
    ['application/json; INDENT=5', null, 'json', 'application/json; INDENT=5', 5],
    ["application/json; indent*=utf-8''%33", null, 'json', "application/json; indent*=utf-8''%33", 3],
    ['Application/JSON', null, 'json', 'Application/JSON', null],
    ['text/html', null, 'api', 'text/html', null],
    ['text/*', null, 'api', 'text/html', null],
    ['text/html;q=0.1, application/json;q=0.9', null, 'json', 'application/json;q=0.9', null],
    ['application/xml, */*', null, 'json', 'application/json', null],
    ['application/json', 'api', null, null, null],
    ['text/html', 'json', null, null, null],
    [undefined, 'api', 'api', 'text/html', null],
    ['application/xml', null, null, null, null],
    ['', null, null, null, null],
    ['*', null, null, null, null],
    // Only the renderer's own parameters must match, so extra requested ones are fine.
    ['application/json;charset=utf-8', null, 'json', 'application/json;charset=utf-8', null],
    // Django 3.2 ends a parameter at a `;` after an even count of `"`, escaped ones included.
    [
      'application/json; x="a\\"b;c"; indent=2',
      null,
      'json',
      'application/json; x="a\\"b;c"; indent=2',
      null,
    ],
    ['application/json; x="a\\"b"; indent=2', null, 'json', 'application/json; x="a\\"b"; indent=2', null],
    ['application/json; x="a\\\\"; indent=2', null, 'json', 'application/json; x="a\\\\"; indent=2', 2],
    ['application/json; x="a;b"; indent=2', null, 'json', 'application/json; x="a;b"; indent=2', 2],
    // There `x=1"` is a second parameter, which puts text/html above the bare application/json.
    ['text/html; q="\\";x=1", application/json', null, 'api', 'text/html; q="\\";x=1"', null],
    // RFC 2231: Python's codec names; unquote leaves "٣" (as its UTF-8 bytes) undecoded: no int.
    ["application/json; indent*=latin''%34", null, 'json', "application/json; indent*=latin''%34", 4],
    [
      "application/json; indent*=utf-8''%33\xd9\xa3",
      null,
      'json',
      "application/json; indent*=utf-8''%33\xd9\xa3",
      null,
    ],
  ] as const)('Accept %j, format %j → %s %s (indent %s)', (accept, format, renderer, accepted, indent) => {
    const result = negotiate(accept, format);
    if (renderer === null) {
      expect(result.kind).toBe('not-acceptable');
      return;
    }
    expect(result).toMatchObject({ kind: 'ok', renderer: { format: renderer }, acceptedMediaType: accepted });
    if (result.kind === 'ok') expect(indentOf(result.acceptedMediaType)).toBe(indent);
  });

  it('answers an unknown ?format= with Http404 before looking at Accept', () => {
    expect(negotiate('text/html', 'xml')).toEqual({ kind: 'unknown-format' });
  });

  it.each(['appl\xe9cation/json', 'application/json; \xe9=1', "application/json; indent*=bogus''%33"])(
    'fails like DRF (a 500) on %j',
    (accept) => {
      expect(() => negotiate(accept, null)).toThrow(DjangoServerError);
    },
  );
});
