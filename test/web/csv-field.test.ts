import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvField } from '../../src/web/change-csv.js';

/** What csv-stringify wrote for one field with the options the CSV exports used before csvField. */
const byLibrary = (text: string): string =>
  stringify([[text, 'x']], { record_delimiter: 'windows', quoted_match: /[\r\n]/ }).slice(
    0,
    -'",x\r\n'.length + 1,
  );

const ALPHABET = ['a', 'Z', ' ', ',', '"', '\r', '\n', "'", '=', 'é', '😀', '\t', ';', '\\'];

describe('csvField writes each field as csv-stringify did (exports byte-identical, issue 21)', () => {
  it.each([
    '',
    'plain',
    'with, comma',
    'with "quotes"',
    'line\nbreak',
    'carriage\rreturn',
    'crlf\r\n',
    '"',
    '""',
    ',',
    "'=SUM(A1)",
    'Zoë "Test" 1',
  ])('%j', (text) => {
    expect(csvField(text)).toBe(byLibrary(text));
  });

  it('agrees on every string of up to three characters from a hostile alphabet', () => {
    const differing: string[] = [];
    const visit = (text: string, depth: number): void => {
      if (csvField(text) !== byLibrary(text)) differing.push(text);
      if (depth < 3) for (const c of ALPHABET) visit(text + c, depth + 1);
    };
    visit('', 0);
    expect(differing).toEqual([]);
  });
});
