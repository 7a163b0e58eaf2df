import { describe, expect, it } from 'vitest';
import { parseGunicornHead, pyRepr, wsgiHeaders } from '../../../src/http/raw-request.js';

/** gunicorn 20.1's request parsing as the raw fallback reproduces it (the differential probes hold the rest). */

const parse = (text: string): ReturnType<typeof parseGunicornHead> =>
  parseGunicornHead(Buffer.from(text, 'latin1'));

function refusal(text: string): string {
  const parsed = parse(text);
  if (parsed === null || !('refused' in parsed)) throw new Error(`not refused: ${text}`);
  const body = Buffer.concat(parsed.refused.body).toString('latin1');
  return `${parsed.refused.status} ${/<\/h1>\n {4}(.*)\n/.exec(body)?.[1] ?? ''}`;
}

describe('parseGunicornHead', () => {
  it('reads what Node refuses and gunicorn takes: raw bytes, versions, folded headers', () => {
    const parsed = parse('get /l?x=\xe9 HTTP/2.0\r\nHost: a\r\nX-A: 1\r\n\t2 \r\nHost: b\r\n\r\n');
    expect(parsed).toMatchObject({
      head: { method: 'GET', url: '/l?x=\xe9', version: [2, 0], headers: { host: 'a,b', 'x-a': '1 2' } },
    });
  });

  it('refuses as gunicorn words it, repr() and HTML escaping included', () => {
    expect(refusal('G\xc9T / HTTP/1.1\r\n\r\n')).toBe(
      '400 Invalid Method &#x27;Invalid HTTP method: &#x27;G\xc9T&#x27;&#x27;',
    );
    expect(refusal('GET /a b HTTP/1.1\r\n\r\n')).toBe(
      '400 Invalid HTTP Version &#x27;Invalid HTTP Version: &#x27;b HTTP/1.1&#x27;&#x27;',
    );
    expect(refusal('GET / HTTP/1.1\r\nX@A: 1\r\n\r\n')).toBe('400 Invalid HTTP header name: &#x27;X@A&#x27;');
    expect(refusal('POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n')).toBe(
      '400 Invalid HTTP Header: &#x27;CONTENT-LENGTH&#x27;',
    );
    expect(refusal('POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n')).toBe(
      '400 Invalid HTTP Header: &#x27;TRANSFER-ENCODING&#x27;',
    );
    expect(refusal('POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n')).toBe('500 ');
    expect(refusal(`GET /${'a'.repeat(9000)} HTTP/1.1\r\n\r\n`)).toBe(
      '400 Request Line is too large (8192 &gt; 4094)',
    );
  });

  it('accepts what Python reads as a length: a sign, spaces, underscores', () => {
    expect(parse('POST / HTTP/1.1\r\nContent-Length: +1_0 \r\n\r\n')).toHaveProperty('head');
  });

  it('waits for the rest of a head', () => {
    expect(parse('GET / HTTP/1.1\r\nHost: a\r\n')).toBeNull();
  });
});

describe('pyRepr', () => {
  it('quotes and escapes as Python 3 does for latin-1 text', () => {
    expect(pyRepr("a'b")).toBe('"a\'b"');
    expect(pyRepr('a\'"b')).toBe("'a\\'\"b'");
    expect(pyRepr('\t\r\n\x00\x7f\x85\xa0\xad\xe9\\')).toBe("'\\t\\r\\n\\x00\\x7f\\x85\\xa0\\xad\xe9\\\\'");
  });
});

describe('wsgiHeaders', () => {
  it('joins repeated Hosts and reads underscore spellings of the forwarded headers', () => {
    const headers = { host: 'a', x_forwarded_proto: 'https' };
    const raw = ['Host', 'a', 'host', 'b', 'X_Forwarded_Proto', 'https'];
    expect(wsgiHeaders(headers, raw)).toMatchObject({ host: 'a,b', 'x-forwarded-proto': 'https' });
  });

  it('hands back the same object when nothing folds', () => {
    const headers = { host: 'a' };
    expect(wsgiHeaders(headers, ['Host', 'a', 'Accept', '*/*'])).toBe(headers);
  });
});
