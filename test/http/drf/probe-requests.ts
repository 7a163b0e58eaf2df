/**
 * Hand-picked raw requests a hostile client sends, by class: methods, versions, hosts, targets,
 * page values, formats, Accept, bodies and framing, limits, odd header syntax.
 */

export interface ProbeCase {
  name: string;
  raw: Buffer;
}

const LIST = '/api/model/team-block-coworker/list/';
const HOST = 'Host: 127.0.0.1:8765';

function req(name: string, lines: string[], body = ''): ProbeCase {
  return { name, raw: Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`, 'latin1') };
}

export function probeCases(): ProbeCase[] {
  const cases: ProbeCase[] = [];
  const add = (name: string, lines: string[], body = ''): void => {
    cases.push(req(name, [...lines, 'Connection: close'], body));
  };
  // Methods
  for (const m of [
    'GET',
    'HEAD',
    'OPTIONS',
    'POST',
    'PUT',
    'PATCH',
    'DELETE',
    'TRACE',
    'CONNECT',
    'FOO',
    'get',
    'post',
    'options',
    'Delete',
    'M-SEARCH',
    'LINK',
    'PURGE',
    'QUERY',
    'G\xc9T',
    'GE/T',
    'GET\t',
  ])
    add(`method ${m}`, [`${m} ${LIST}?page=2 HTTP/1.1`, HOST]);
  for (const m of ['POST', 'PUT', 'PATCH', 'DELETE'])
    add(
      `method ${m} with body`,
      [`${m} ${LIST} HTTP/1.1`, HOST, 'Content-Type: application/json', 'Content-Length: 7'],
      '{"a":1}',
    );
  // Versions
  for (const v of [
    'HTTP/1.0',
    'HTTP/1.1',
    'HTTP/2.0',
    'HTTP/0.9',
    'HTTP/1.2',
    'HTTP/3',
    'http/1.1',
    'HTTP/1.01',
    'HTTP/10.1',
  ])
    add(`version ${v}`, [`GET ${LIST}?page=2 ${v}`, HOST]);
  cases.push(req('HTTP/0.9 simple request', [`GET ${LIST}`]));
  add('HTTP/1.0 HEAD', [`HEAD ${LIST} HTTP/1.0`, HOST]);
  add('HTTP/1.0 OPTIONS', [`OPTIONS ${LIST} HTTP/1.0`]);
  add('HTTP/1.0 bad host', [`GET ${LIST} HTTP/1.0`, 'Host: bad_host']);
  add('HTTP/1.0 404', [`GET /nope HTTP/1.0`, HOST]);
  add('HTTP/1.0 redirect', [`GET ${LIST.slice(0, -1)} HTTP/1.0`, HOST]);
  // Hosts
  for (const h of [
    'example.com',
    'EXAMPLE.COM',
    'example.com:80',
    'example.com:443',
    '127.0.0.1',
    'localhost:8000',
    '[::1]',
    '[::1]:80',
    '[::1',
    '::1',
    'bad_host',
    'a b',
    'a,b',
    'a/b',
    'a@b',
    'user@host',
    '',
    ' ',
    'h\xe9',
    'xn--e1afmkfd.xn--p1ai',
    '1.2.3.4:99999',
    'host:abc',
    'host:',
    ':80',
    '-host',
    'host-',
    '..',
    'a..b',
    'a.-b',
    '0',
    '256.256.256.256',
    '[fe80::1%eth0]',
    '[v1.x]',
    'example.com:+80',
    'a'.repeat(300),
    'HOST.example.',
  ]) {
    add(`host ${JSON.stringify(h).slice(0, 40)}`, [`GET ${LIST}?page=2 HTTP/1.1`, `Host: ${h}`]);
  }
  add('two Host headers', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'Host: other.example']);
  add('two Host headers same', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, HOST]);
  add('host bad on 404', ['GET /nope HTTP/1.1', 'Host: bad_host']);
  add('host bad on redirect', [`GET ${LIST.slice(0, -1)} HTTP/1.1`, 'Host: bad_host']);
  add('host bad on OPTIONS', [`OPTIONS ${LIST} HTTP/1.1`, 'Host: bad_host']);
  add('host bad on POST', [`POST ${LIST} HTTP/1.1`, 'Host: bad_host', 'Content-Length: 0']);
  add('host bad on HEAD', [`HEAD ${LIST} HTTP/1.1`, 'Host: bad_host']);
  add('host bad on FOO', [`FOO ${LIST} HTTP/1.1`, 'Host: bad_host']);
  // Targets
  const targets = [
    `http://127.0.0.1:8765${LIST}?page=2`,
    `http://other.example${LIST}?page=2`,
    `https://other.example${LIST}?page=2`,
    `HTTP://other.example${LIST}?page=2`,
    `http://other.example:81${LIST.slice(0, -1)}?page=2`,
    `ftp://x${LIST}`,
    `//${LIST}`,
    `//127.0.0.1${LIST}?page=2`,
    `/${LIST}`,
    `${LIST}/`,
    `${LIST}?`,
    `${LIST}??page=2`,
    `${LIST}?page=2?`,
    `${LIST}#`,
    `${LIST}?page=2#x`,
    `${LIST}#?page=2`,
    `${LIST}?page=2&`,
    `${LIST}?&page=2`,
    `${LIST}?page=2;page=3`,
    `${LIST}?page=2&page=3`,
    `${LIST}?page=3&page=2`,
    `${LIST}?PAGE=2`,
    `${LIST}?Page=2`,
    `${LIST}?page`,
    `${LIST}?page=`,
    `${LIST}?page=%32`,
    `${LIST}?pag%65=2`,
    `${LIST}?page=2&format=json`,
    `${LIST}?format=json`,
    `${LIST}?format=api`,
    `${LIST}?format=api&page=2`,
    `${LIST}?format=xml`,
    `${LIST}?format=`,
    `${LIST}?format=json&format=api`,
    `${LIST}?format=api&format=json`,
    `${LIST}?format=JSON`,
    `${LIST}?page=last`,
    `${LIST}?page=0`,
    `${LIST}?page=-1`,
    `${LIST}?page=1.0`,
    `${LIST}?page=%201`,
    `${LIST}?page=+1`,
    `${LIST}?page=${'9'.repeat(5000)}`,
    `${LIST}?page=${'9'.repeat(4300)}`,
    `${LIST}?page=${'0'.repeat(3000)}2`,
    `${LIST}?page=4`,
    `${LIST}?page=3`,
    `${LIST}?page=2&a=%`,
    `${LIST}?page=2&b=%E9`,
    `${LIST}?page=2&c=\xe9`,
    `${LIST}?page=2&d=a b`,
    `${LIST}?page=2&e="<>`,
    `${LIST}?page=2&f=\\`,
    `${LIST}?page=2&g={}|^\``,
    `${LIST}?page=2&h=%0d%0a`,
    `${LIST}?page=2&i=+`,
    `${LIST}?page=2&j=%2B`,
    `${LIST}?page=2&as_of=x`,
    `${LIST}?page=2&as_of=2026-01-01T00:00:00Z`,
    `${LIST}?as_of=`,
    `${LIST}?page=2&page_size=100`,
    `${LIST}?page=2&ordering=name`,
    `${LIST}?page=2&search=a`,
    `${LIST}?page=2&limit=1&offset=1`,
    `${LIST}?page=2&callback=x`,
    `${LIST}?page=2&_=1`,
    '/api/model/team-block-coworker/list/index.html',
    '/api/model/team-block-coworker/list/.json',
    '/api/model/team-block-coworker/list.json',
    '/api/model/team-block-coworker/list/?page=2/',
    '/API/model/team-block-coworker/list/',
    '/api/model/team-block-coworker/list%2f',
    '/api/model/team-block-coworker/list%2F?page=2',
    '/api/model/team-block-coworker/list%252F',
    '/api/model/team-block-coworker/./list/',
    '/api/model/team-block-coworker/x/../list/',
    '/api/model/team-block-coworker/list/.',
    '/api/model/team-block-coworker/list/..',
    '/api/model//team-block-coworker/list/',
    '/api/model/team-block-coworker//list/',
    '/api/model/team-block-coworker/list',
    '/api/model/team-block-coworker/list?page=2&x=%E9',
    '/api/model/team-block-coworker/list?x=\xe9',
    '/api/model/team-block-coworker/list?x=a b',
    '/api/model/team-block-coworker/lis%74?page=2',
    '/api/model/team-block-coworker/list%00',
    '/api/model/team-block-coworker/list%00/',
    '/api/model/team-block-coworker/list/%00',
    '/api/model/team-block-coworker/list%20',
    '/api/model/team-block-coworker/list%C3%A9',
    '/api/model/team-block-coworker/list\xe9',
    '/api/model/team-block-coworker/list%E9',
    '/api/model/team-block-coworker/list/\xe9',
    '/api/model/team-block-coworker/list;x',
    '/api/model/team-block-coworker/list/;x',
    '/api/model/team-block-coworker/list;x/',
    '/\\api/model/team-block-coworker/list',
    '//api/model/team-block-coworker/list',
    '//evil.example/',
    '///evil.example/%2e%2e',
    '/api/model/team-block-coworker/list/*',
    '*',
    '/favicon.ico',
    '/robots.txt',
    '/admin/',
    '/api/',
    '/api',
    '/static/rest_framework/css/bootstrap.min.css',
    '/api/model/team-block-coworker/list/?page=2 HTTP/1.1 x',
    '',
    'api/model/team-block-coworker/list/',
    '?page=2',
    '/%',
    '/%2',
    '/%%32',
    '/a%2',
    `/api/model/team-block-coworker/list${'/'.repeat(2)}`,
    `/${'a'.repeat(4000)}`,
    `/${'a'.repeat(4090)}`,
  ];
  for (const t of targets) add(`target ${JSON.stringify(t).slice(0, 80)}`, [`GET ${t} HTTP/1.1`, HOST]);
  for (const t of targets.slice(0, 12))
    add(`HEAD target ${JSON.stringify(t).slice(0, 80)}`, [`HEAD ${t} HTTP/1.1`, HOST]);
  // Request line shape
  add('two spaces after method', [`GET  ${LIST} HTTP/1.1`, HOST]);
  add('two spaces before version', [`GET ${LIST}  HTTP/1.1`, HOST]);
  add('tab separator', [`GET\t${LIST}\tHTTP/1.1`, HOST]);
  add('leading space', [` GET ${LIST} HTTP/1.1`, HOST]);
  add('trailing space', [`GET ${LIST} HTTP/1.1 `, HOST]);
  cases.push(req('leading CRLF', ['', `GET ${LIST} HTTP/1.1`, HOST, 'Connection: close']));
  // LF-only line ends are left out: gunicorn and Node both wait for a CRLF until the client gives up.
  cases.push({
    name: 'mixed LF',
    raw: Buffer.from(`GET ${LIST}?page=2 HTTP/1.1\r\n${HOST}\nConnection: close\r\n\r\n`, 'latin1'),
  });
  cases.push({
    name: 'bare CR',
    raw: Buffer.from(`GET ${LIST}?page=2 HTTP/1.1\r${HOST}\r\nConnection: close\r\n\r\n`, 'latin1'),
  });
  // Accept
  const accepts = [
    'text/html',
    'text/html;q=0.9',
    'application/json; indent=4',
    'application/json; version=2',
    '*/*;q=0',
    'application/*',
    'application/json;q=0',
    'application/xml',
    'text/plain',
    '*/*',
    ';',
    'application/json;',
    'application/json; indent',
    'application/json; indent=',
    'application/json; charset=latin1',
    'application/json; indent=4, text/html',
    'text/html, application/json; indent=2',
    'application/vnd.api+json',
    'application/json+x',
    'text/*;indent=4',
    '*/*; indent=3',
    'application/json; indent=100',
    'application/json; indent=-1',
    'application/json; indent=4 ',
    'application/json; indent="4"',
    'application/json;indent=4;indent=2',
    '\xff',
    'application/json\x00',
    'x/y, */*',
    'text/html; q=1.0, */*; q=0.1',
    'application/json, application/json; indent=2',
    // Django 3.2 counts escaped quotes when it looks for the `;` ending a parameter.
    'application/json; x="a\\"b"; indent=2',
    'application/json; x="a\\\\"; indent=2',
    'application/json; x="a;b"; indent=2',
    'application/json; indent="2\\"; x=1',
    'text/html; q="\\";x=1", application/json',
    // RFC 2231 values: Python's codec names, and unquote leaving non-ASCII characters as they came.
    "application/json; indent*=latin''%34",
    "application/json; indent*=UTF 8''%32",
    "application/json; indent*=utf-8''%33\xd9\xa3",
  ];
  for (const a of accepts)
    add(`accept ${JSON.stringify(a)}`, [`GET ${LIST}?page=2 HTTP/1.1`, HOST, `Accept: ${a}`]);
  for (const a of accepts.slice(0, 8))
    add(`OPTIONS accept ${JSON.stringify(a)}`, [`OPTIONS ${LIST} HTTP/1.1`, HOST, `Accept: ${a}`]);
  for (const a of accepts.slice(0, 8))
    add(`404 page accept ${JSON.stringify(a)}`, [`GET ${LIST}?page=9 HTTP/1.1`, HOST, `Accept: ${a}`]);
  for (const a of ['application/xml', 'text/html'])
    add(`POST accept ${a}`, [`POST ${LIST} HTTP/1.1`, HOST, `Accept: ${a}`, 'Content-Length: 0']);
  add('two Accept headers', [
    `GET ${LIST}?page=2 HTTP/1.1`,
    HOST,
    'Accept: application/xml',
    'Accept: application/json; indent=2',
  ]);
  add('format=json with Accept xml', [`GET ${LIST}?format=json HTTP/1.1`, HOST, 'Accept: application/xml']);
  add('format=api with Accept json', [`GET ${LIST}?format=api HTTP/1.1`, HOST, 'Accept: application/json']);
  add('format=json with indent accept', [
    `GET ${LIST}?format=json HTTP/1.1`,
    HOST,
    'Accept: application/json; indent=2',
  ]);
  add('format=xml 404 on POST', [`POST ${LIST}?format=xml HTTP/1.1`, HOST, 'Content-Length: 0']);
  // Misc headers
  const misc = [
    'Accept-Language: de',
    'Accept-Language: fr-CH, fr;q=0.9',
    'Accept-Encoding: gzip',
    'Accept-Encoding: br, gzip, deflate',
    'Accept-Charset: latin1',
    'If-Modified-Since: Sat, 21 Nov 2026 15:49:35 GMT',
    'If-None-Match: "abc"',
    'If-Match: "abc"',
    'If-Unmodified-Since: Sat, 21 Nov 2000 15:49:35 GMT',
    'Range: bytes=0-10',
    'Range: bytes=5-',
    'If-Range: "x"',
    'Origin: http://evil.example',
    'Cookie: sessionid=abc; csrftoken=def',
    'Cookie: \xff',
    'X-Forwarded-For: 1.2.3.4',
    'X-Forwarded-Host: other.example',
    'X-Forwarded-Proto: https',
    'X-Forwarded-Port: 443',
    'Forwarded: for=1.2.3.4;proto=https;host=x',
    'X-Real-IP: 1.2.3.4',
    'X-Requested-With: XMLHttpRequest',
    'X-HTTP-Method-Override: DELETE',
    'X-Method-Override: POST',
    'Cache-Control: no-cache',
    'Pragma: no-cache',
    'Content-Type: application/json',
    'Content-Type: text/plain',
    'Content-Length: 0',
    'Transfer-Encoding: chunked',
    'TE: trailers',
    'Upgrade: h2c',
    'Connection: Upgrade, HTTP2-Settings',
    'Expect: 100-continue',
    'Via: 1.1 proxy',
    'Max-Forwards: 0',
    'DNT: 1',
    'Referer: http://x/',
    'User-Agent: curl/8.0',
    'User-Agent: \xe9',
    'Authorization: Token abc',
    'Proxy-Authorization: Basic abc',
    'X-CSRFToken: abc',
    'Host2: x',
    'X_Forwarded_Proto: https',
    'X-Forwarded-Proto : https',
    'Content-Length: abc',
  ];
  for (const h of misc)
    add(
      `header ${JSON.stringify(h).slice(0, 60)}`,
      [`GET ${LIST}?page=2 HTTP/1.1`, HOST, h],
      h.startsWith('Transfer-Encoding') ? '0\r\n\r\n' : '',
    );
  // Header syntax
  add('space before colon', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-A : 1']);
  add('no colon', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-A']);
  add('empty name', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, ': v']);
  add('name with @', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X@A: 1']);
  add('name with (', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X(A: 1']);
  add('name with high byte', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X\xe9: 1']);
  add('underscore name', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X_A: 1']);
  add('obs-fold', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-A: 1', ' continued']);
  add('obs-fold tab', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-A: 1', '\tcontinued']);
  add('obs-fold first', [`GET ${LIST}?page=2 HTTP/1.1`, ' folded', HOST]);
  add('value NUL', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-A: a\x00b']);
  add('value CTL', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-A: a\x01b']);
  add('value DEL', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-A: a\x7fb']);
  add('value high', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-A: \xe9\xff']);
  add('Host with tab', [`GET ${LIST}?page=2 HTTP/1.1`, 'Host:\t127.0.0.1:8765\t']);
  add('Host no space', [`GET ${LIST}?page=2 HTTP/1.1`, 'Host:127.0.0.1:8765']);
  add('lower host', [`GET ${LIST}?page=2 HTTP/1.1`, 'host: 127.0.0.1:8765']);
  add('HOST upper', [`GET ${LIST}?page=2 HTTP/1.1`, 'HOST: Example.COM']);
  // Bodies and framing
  add('GET with body CL', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'Content-Length: 5'], 'hello');
  add(
    'GET chunked body',
    [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'Transfer-Encoding: chunked'],
    '5\r\nhello\r\n0\r\n\r\n',
  );
  add(
    'POST chunked JSON',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Type: application/json', 'Transfer-Encoding: chunked'],
    '2\r\n{}\r\n0\r\n\r\n',
  );
  add(
    'POST bad JSON',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Type: application/json', 'Content-Length: 5'],
    '{bad}',
  );
  add(
    'POST form',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Type: application/x-www-form-urlencoded', 'Content-Length: 7'],
    'a=1&b=2',
  );
  add(
    'POST multipart',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Type: multipart/form-data; boundary=xx', 'Content-Length: 44'],
    '--xx\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--xx--\r\n',
  );
  add(
    'POST bad multipart',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Type: multipart/form-data', 'Content-Length: 3'],
    'abc',
  );
  add('POST no CL', [`POST ${LIST} HTTP/1.1`, HOST]);
  add('POST CL short', [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length: 2'], '{}extra');
  add('POST CL negative', [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length: -1']);
  add('POST CL plus', [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length: +2'], '{}');
  add('POST two CL same', [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length: 2', 'Content-Length: 2'], '{}');
  add('POST two CL differ', [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length: 2', 'Content-Length: 3'], '{}x');
  add(
    'POST CL and TE',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length: 2', 'Transfer-Encoding: chunked'],
    '0\r\n\r\n',
  );
  add('POST TE gzip', [`POST ${LIST} HTTP/1.1`, HOST, 'Transfer-Encoding: gzip'], '');
  add(
    'POST TE chunked,chunked',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Transfer-Encoding: chunked, chunked'],
    '0\r\n\r\n',
  );
  add(
    'POST TE identity',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Transfer-Encoding: identity', 'Content-Length: 2'],
    '{}',
  );
  add(
    'POST bad chunk size',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Transfer-Encoding: chunked'],
    'zz\r\nhello\r\n0\r\n\r\n',
  );
  add(
    'POST chunk ext',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Transfer-Encoding: chunked'],
    '2;x=y\r\n{}\r\n0\r\n\r\n',
  );
  add(
    'PUT JSON',
    [`PUT ${LIST} HTTP/1.1`, HOST, 'Content-Type: application/json', 'Content-Length: 2'],
    '{}',
  );
  add('DELETE with CSRF cookie', [`DELETE ${LIST} HTTP/1.1`, HOST, 'Cookie: csrftoken=abc']);
  add(
    'OPTIONS with body',
    [`OPTIONS ${LIST} HTTP/1.1`, HOST, 'Content-Type: application/json', 'Content-Length: 5'],
    '{bad}',
  );
  add('OPTIONS *', ['OPTIONS * HTTP/1.1', HOST]);
  add('OPTIONS page 9', [`OPTIONS ${LIST}?page=9 HTTP/1.1`, HOST]);
  add('OPTIONS format=api', [`OPTIONS ${LIST}?format=api HTTP/1.1`, HOST]);
  add('OPTIONS format=xml', [`OPTIONS ${LIST}?format=xml HTTP/1.1`, HOST]);
  add('OPTIONS 404', ['OPTIONS /nope HTTP/1.1', HOST]);
  add('OPTIONS redirect', [`OPTIONS ${LIST.slice(0, -1)} HTTP/1.1`, HOST]);
  add('POST redirect', [`POST ${LIST.slice(0, -1)} HTTP/1.1`, HOST, 'Content-Length: 0']);
  add('PUT redirect', [`PUT ${LIST.slice(0, -1)}?a=1 HTTP/1.1`, HOST, 'Content-Length: 0']);
  add('HEAD redirect', [`HEAD ${LIST.slice(0, -1)} HTTP/1.1`, HOST]);
  add('HEAD 404', ['HEAD /nope HTTP/1.1', HOST]);
  add('HEAD page 9', [`HEAD ${LIST}?page=9 HTTP/1.1`, HOST]);
  add('HEAD xml', [`HEAD ${LIST} HTTP/1.1`, HOST, 'Accept: application/xml']);
  add('TRACE 404', ['TRACE /nope HTTP/1.1', HOST]);
  add('POST 404', ['POST /nope HTTP/1.1', HOST, 'Content-Length: 2'], '{}');
  // Limits
  add('request line 4094', [
    `GET ${LIST}?x=${'a'.repeat(4094 - `GET ${LIST}?x= HTTP/1.1`.length)} HTTP/1.1`,
    HOST,
  ]);
  add('request line 4095', [
    `GET ${LIST}?x=${'a'.repeat(4095 - `GET ${LIST}?x= HTTP/1.1`.length)} HTTP/1.1`,
    HOST,
  ]);
  add('request line 8200', [`GET ${LIST}?x=${'a'.repeat(8200)} HTTP/1.1`, HOST]);
  add('request line 70000', [`GET ${LIST}?x=${'a'.repeat(70000)} HTTP/1.1`, HOST]);
  add('header 8190', [`GET ${LIST} HTTP/1.1`, HOST, `X-A: ${'a'.repeat(8190 - 7)}`]);
  add('header 8191', [`GET ${LIST} HTTP/1.1`, HOST, `X-A: ${'a'.repeat(8191 - 7)}`]);
  add('header 8189', [`GET ${LIST} HTTP/1.1`, HOST, `X-A: ${'a'.repeat(8189 - 7)}`]);
  add('header 8190 two spaces', [`GET ${LIST} HTTP/1.1`, HOST, `X-A:  ${'a'.repeat(8190 - 8)}`]);
  add('header 8190 no space', [`GET ${LIST} HTTP/1.1`, HOST, `X-A:${'a'.repeat(8190 - 6)}`]);
  add('header 8190 trailing spaces', [`GET ${LIST} HTTP/1.1`, HOST, `X-A: ${'a'.repeat(8190 - 9)}  `]);
  add('100 headers incl Connection', [
    `GET ${LIST} HTTP/1.1`,
    HOST,
    ...Array.from({ length: 98 }, (_, i) => `X-H${i}: ${i}`),
  ]);
  add('101 headers incl Connection', [
    `GET ${LIST} HTTP/1.1`,
    HOST,
    ...Array.from({ length: 99 }, (_, i) => `X-H${i}: ${i}`),
  ]);
  add('header total 90000', [
    `GET ${LIST} HTTP/1.1`,
    HOST,
    ...Array.from({ length: 12 }, (_, i) => `X-H${i}: ${'v'.repeat(8000)}`),
  ]);
  add('query 1001 fields on HEAD', [`HEAD ${LIST}?${'a=1&'.repeat(1001)} HTTP/1.1`, HOST]);
  add('query 1001 fields on POST', [`POST ${LIST}?${'&a'.repeat(1001)} HTTP/1.1`, HOST, 'Content-Length: 0']);
  add('query 1001 fields on OPTIONS', [`OPTIONS ${LIST}?${'&a'.repeat(1001)} HTTP/1.1`, HOST]);
  add('query 1001 fields format=xml', [`GET ${LIST}?format=xml${'&a'.repeat(1001)} HTTP/1.1`, HOST]);
  add('query 1001 fields on redirect', [`GET ${LIST.slice(0, -1)}?${'&a'.repeat(1001)} HTTP/1.1`, HOST]);
  add('query 1001 ; fields', [`GET ${LIST}?${';a'.repeat(1001)} HTTP/1.1`, HOST]);
  // Batch 2: methods × paths, odd bytes Node takes, page values, more hosts
  const paths = [
    LIST,
    `${LIST}?page=9`,
    LIST.slice(0, -1),
    '/nope',
    `${LIST}?format=xml`,
    `${LIST}?page=2&format=api`,
  ];
  for (const m of ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'FOO', 'CONNECT'])
    for (const p of paths) add(`matrix ${m} ${p}`, [`${m} ${p} HTTP/1.1`, HOST, 'Content-Length: 0']);
  for (const m of ['GET', 'HEAD', 'OPTIONS', 'POST', 'DELETE'])
    for (const p of paths) add(`matrix1.0 ${m} ${p}`, [`${m} ${p} HTTP/1.0`]);
  const pages = [
    '1',
    '2',
    '3',
    '4',
    '0',
    '-1',
    '-0',
    '+3',
    '03',
    '3.0',
    '3e0',
    '0x3',
    '1_0',
    '_1',
    '1__0',
    '１',
    '%EF%BC%93',
    '%D9%A3',
    '%203',
    '3%20',
    '%09%0A3',
    '%0C3',
    '3%00',
    'last',
    'LAST',
    'Last',
    'last%20',
    'first',
    'null',
    'None',
    'true',
    '[]',
    '{}',
    '%',
    '%2',
    '%%',
    '%E9',
    '%C3',
    '%FF',
    'é',
    '２',
    '99999999999999999999',
    '-99999999999999999999',
    `${'1'.repeat(4300)}`,
    `${'1'.repeat(4301)}`,
    `%2B${'0'.repeat(10)}2`,
    '2&page=',
    '&page=2',
    '2&page=last',
    'last&page=2',
    '2;page=3',
    '2%26page=3',
    '2%3Dx',
  ];
  for (const pg of pages) add(`page ${pg.slice(0, 40)}`, [`GET ${LIST}?page=${pg} HTTP/1.1`, HOST]);
  for (const pg of pages.slice(0, 20))
    add(`HEAD page ${pg.slice(0, 40)}`, [`HEAD ${LIST}?page=${pg} HTTP/1.1`, HOST]);
  for (const pg of pages.slice(0, 10))
    add(`indent page ${pg}`, [`GET ${LIST}?page=${pg} HTTP/1.1`, HOST, 'Accept: application/json; indent=2']);
  const queries = [
    'a=1&page=2&a=2',
    'page=2&page=',
    'page=&page=2',
    'page=2&Page=3',
    'x=%E2%82%AC&page=2',
    'x=%80&page=2',
    'page=2&x=1+2',
    'page=2&x=%20',
    'page=2&x=a%2Fb',
    'page=2&x=a/b?c',
    'page=2&x=a:b@c',
    "page=2&x=!$'()*,;",
    'page=2&%7E=1',
    'page=2&~=1',
    'page=2&x=%7e',
    'page=2&&&',
    '&&&page=2',
    'page=2&=',
    'page=2&=&=',
    'page=2&x==',
    'page=2&x=a=b',
    '%70age=2',
    'page%3D2',
    'page=2#frag',
    'page=2&format=json&format=',
    'format=json&page=2&format=json',
    'format=api&format=xml',
    'format=',
    'format=%6Ason',
    'page=2&x=%u00e9',
    'page=2&x=%GG',
    'page=2&q=a+b%2Bc',
  ];
  for (const q of queries) add(`query ${q}`, [`GET ${LIST}?${q} HTTP/1.1`, HOST]);
  for (const q of queries.slice(0, 12))
    add(`redirect query ${q}`, [`GET ${LIST.slice(0, -1)}?${q} HTTP/1.1`, HOST]);
  const hosts2 = [
    '127.0.0.1:8765',
    'localhost',
    'LOCALHOST:80',
    'a.b.c.d.e.f',
    'a-b.c',
    '1.2.3.4.5',
    'foo.bar:0',
    'foo.bar:65536',
    'foo.bar:00080',
    '[::]',
    '[::1]:',
    '[::1]x',
    '[::g]',
    '[1::2::3]',
    '[::ffff:127.0.0.1]:80',
    'xn--80ak6aa92e.com',
    '_dmarc.example',
    'a_b.example',
    'münchen.de',
    'foo%20bar',
    'foo\\bar',
    'foo;bar',
    'example.com.:80',
    'example.com..',
    '*.example.com',
    '*',
  ];
  for (const h of hosts2) {
    add(`host2 ${h}`, [`GET ${LIST}?page=2 HTTP/1.1`, `Host: ${h}`]);
    add(`host2 404 ${h}`, ['GET /x HTTP/1.1', `Host: ${h}`]);
  }
  add('absolute-form different host port', [
    `GET http://a.example:9/api/model/team-block-coworker/list/?page=2 HTTP/1.1`,
    HOST,
  ]);
  add('absolute-form no path', ['GET http://a.example HTTP/1.1', HOST]);
  add('absolute-form only query', ['GET http://a.example?page=2 HTTP/1.1', HOST]);
  add('absolute-form userinfo', [`GET http://u:p@a.example${LIST} HTTP/1.1`, HOST]);
  add('absolute-form no host header', [`GET http://a.example${LIST}?page=2 HTTP/1.1`]);
  add('authority-form', ['GET 127.0.0.1:8765 HTTP/1.1', HOST]);
  add('mailto', ['GET mailto:x HTTP/1.1', HOST]);
  add('scheme-relative list', [`GET //a.example${LIST}?page=2 HTTP/1.1`, HOST]);
  add('accept-language', [`GET ${LIST}?page=9 HTTP/1.1`, HOST, 'Accept-Language: de-DE']);
  add('accept-language html 404', [
    'GET /nope HTTP/1.1',
    HOST,
    'Accept-Language: de-DE',
    'Accept: text/html',
  ]);
  add('X-Forwarded-Host untrusted', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-Forwarded-Host: evil.example']);
  add('X-Forwarded-Proto https bad host', [
    `GET ${LIST}?page=2 HTTP/1.1`,
    'Host: bad_host',
    'X-Forwarded-Proto: https',
  ]);
  add('X-Forwarded-Proto https no host 1.0', [`GET ${LIST}?page=2 HTTP/1.0`, 'X-Forwarded-Proto: https']);
  add('X-Forwarded-Proto lower', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'x-forwarded-proto: https']);
  add('X-Forwarded-Proto twice', [
    `GET ${LIST}?page=2 HTTP/1.1`,
    HOST,
    'X-Forwarded-Proto: https',
    'X-Forwarded-Proto: https',
  ]);
  add('X-Forwarded-Proto HTTPS', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X-Forwarded-Proto: HTTPS']);
  add('X-Forwarded-Proto https trailing space', [
    `GET ${LIST}?page=2 HTTP/1.1`,
    HOST,
    'X-Forwarded-Proto: https ',
  ]);
  add('X-Forwarded-Ssl on with proto http', [
    `GET ${LIST}?page=2 HTTP/1.1`,
    HOST,
    'X-Forwarded-Ssl: on',
    'X-Forwarded-Proto: http',
  ]);
  add('Host trailing space', [`GET ${LIST}?page=2 HTTP/1.1`, 'Host: 127.0.0.1:8765 ']);
  add('Host empty + second', [`GET ${LIST}?page=2 HTTP/1.1`, 'Host:', HOST]);
  add('Host 1.0 empty', [`GET ${LIST}?page=2 HTTP/1.0`, 'Host:']);
  add('Content-Length on GET big no body', [`GET ${LIST} HTTP/1.1`, HOST, 'Content-Length: 100'], 'abc');
  add('chunked 1.0', [`POST ${LIST} HTTP/1.0`, 'Transfer-Encoding: chunked'], '0\r\n\r\n');
  add('GET chunked 1.0', [`GET ${LIST} HTTP/1.0`, 'Transfer-Encoding: chunked'], '0\r\n\r\n');
  add('TE empty', [`GET ${LIST} HTTP/1.1`, HOST, 'Transfer-Encoding:']);
  add('TE Chunked', [`POST ${LIST} HTTP/1.1`, HOST, 'Transfer-Encoding: Chunked'], '0\r\n\r\n');
  add(
    'TE chunked twice lines',
    [`POST ${LIST} HTTP/1.1`, HOST, 'Transfer-Encoding: chunked', 'Transfer-Encoding: chunked'],
    '0\r\n\r\n',
  );
  add('CL 0 twice', [`GET ${LIST} HTTP/1.1`, HOST, 'Content-Length: 0', 'Content-Length: 0']);
  add('CL with spaces', [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length:  2 '], '{}');
  add('CL 1_0', [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length: 0_2'], '{}');
  add('CL hex', [`POST ${LIST} HTTP/1.1`, HOST, 'Content-Length: 0x2'], '{}');
  add('header colon only value', [`GET ${LIST} HTTP/1.1`, HOST, 'X-A:']);
  add('header name with dot', [`GET ${LIST} HTTP/1.1`, HOST, 'X.A: 1']);
  add('header name with space inside', [`GET ${LIST} HTTP/1.1`, HOST, 'X A: 1']);
  add('header line only spaces', [`GET ${LIST} HTTP/1.1`, HOST, '   ']);
  add('Accept with obs-fold', [`GET ${LIST} HTTP/1.1`, HOST, 'Accept: application/json;', ' indent=4']);
  add('Host obs-fold', [`GET ${LIST}?page=2 HTTP/1.1`, 'Host: 127.0.0.1', ' :8765']);
  add('URL with tab', [`GET ${LIST}?page=2\tx HTTP/1.1`, HOST]);
  add('URL with NUL', [`GET ${LIST}?page=2\x00 HTTP/1.1`, HOST]);
  add('URL with DEL', [`GET ${LIST}?x=\x7f&page=2 HTTP/1.1`, HOST]);
  add('URL with quote', [`GET ${LIST}?x="&page=2 HTTP/1.1`, HOST]);
  add('URL with <>', [`GET ${LIST}?x=<>&page=2 HTTP/1.1`, HOST]);
  add('URL with {}', [`GET ${LIST}?x={}&page=2 HTTP/1.1`, HOST]);
  add('URL with backslash path', [`GET /api\\model/team-block-coworker/list/ HTTP/1.1`, HOST]);
  add('URL utf8 raw', [`GET ${LIST}?n=\xc3\xa9&page=2 HTTP/1.1`, HOST]);
  add('URL raw high path', [`GET /\xc3\xa9 HTTP/1.1`, HOST]);
  add('URL raw high list-noslash', [`GET ${LIST.slice(0, -1)}?n=\xc3\xa9 HTTP/1.1`, HOST]);
  add('URL raw bad utf8 path', [`GET /\xff HTTP/1.1`, HOST]);
  add('fragment only', [`GET ${LIST}#page=2 HTTP/1.1`, HOST]);
  add('fragment with ?', [`GET ${LIST}#a?page=2 HTTP/1.1`, HOST]);
  add('redirect with fragment', [`GET ${LIST.slice(0, -1)}?page=2#f HTTP/1.1`, HOST]);
  // Batch 3: negotiation on every answer DRF renders, HEAD and HTTP/1.0 through gunicorn's own refusals
  const accepts3 = [
    'application/json; indent=4',
    'application/json; indent=0',
    '*/*; indent=2',
    'application/*; indent=1',
    'text/html',
    'application/xml',
    'application/json;q=0.5, text/html;q=0.1',
  ];
  for (const a of accepts3) {
    add(`405 accept ${a}`, [`DELETE ${LIST} HTTP/1.1`, HOST, `Accept: ${a}`]);
    add(`OPTIONS indent accept ${a}`, [`OPTIONS ${LIST}?page=2 HTTP/1.1`, HOST, `Accept: ${a}`]);
    add(`invalid page accept ${a}`, [`GET ${LIST}?page=abc HTTP/1.1`, HOST, `Accept: ${a}`]);
    add(`format=xml accept ${a}`, [`GET ${LIST}?format=xml HTTP/1.1`, HOST, `Accept: ${a}`]);
    add(`redirect accept ${a}`, [`GET ${LIST.slice(0, -1)} HTTP/1.1`, HOST, `Accept: ${a}`]);
  }
  add('HEAD odd method byte', [`HE\xc1D ${LIST} HTTP/1.1`, HOST]);
  add('HEAD 101 headers', [
    `HEAD ${LIST} HTTP/1.1`,
    HOST,
    ...Array.from({ length: 100 }, (_, i) => `X-H${i}: ${i}`),
  ]);
  add('HEAD raw high byte target', [`HEAD ${LIST}?x=\xe9 HTTP/1.1`, HOST]);
  add('HTTP/1.0 raw high byte target', [`GET ${LIST}?x=\xe9&page=2 HTTP/1.0`]);
  add('HTTP/1.0 raw high byte bad host', [`GET ${LIST}?x=\xe9 HTTP/1.0`, 'Host: a_b']);
  add('HTTP/1.1 raw high byte bad host', [`GET ${LIST}?x=\xe9 HTTP/1.1`, 'Host: a_b']);
  add('raw high byte no host 1.1', [`GET ${LIST}?x=\xe9&page=2 HTTP/1.1`]);
  add('raw high byte two hosts', [`GET ${LIST}?x=\xe9 HTTP/1.1`, HOST, HOST]);
  add('raw high byte redirect', [`GET ${LIST.slice(0, -1)}?x=\xe9&y=%E9 HTTP/1.1`, HOST]);
  add('raw high byte OPTIONS', [`OPTIONS ${LIST}?x=\xe9 HTTP/1.1`, HOST]);
  add('raw high byte POST', [`POST ${LIST}?x=\xe9 HTTP/1.1`, HOST, 'Content-Length: 2'], '{}');
  add('raw high byte 404', [`GET /x\xe9 HTTP/1.1`, HOST]);
  add('raw high byte accept indent', [
    `GET ${LIST}?x=\xe9&page=2 HTTP/1.1`,
    HOST,
    'Accept: application/json; indent=3',
  ]);
  add('raw high byte proto https', [`GET ${LIST}?x=\xe9&page=2 HTTP/1.1`, HOST, 'X-Forwarded-Proto: https']);
  add('raw high byte X_Forwarded_Proto', [
    `GET ${LIST}?x=\xe9&page=2 HTTP/1.1`,
    HOST,
    'X_Forwarded_Proto: https',
  ]);
  add('raw high byte contradictory', [
    `GET ${LIST}?x=\xe9&page=2 HTTP/1.1`,
    HOST,
    'X-Forwarded-Proto: https',
    'X-Forwarded-Ssl: off',
  ]);
  add('raw high byte 4095 line', [
    `GET ${LIST}?x=\xe9${'a'.repeat(4095 - `GET ${LIST}?x=\xe9 HTTP/1.1`.length)} HTTP/1.1`,
    HOST,
  ]);
  add('raw high byte 8191 header', [`GET ${LIST}?x=\xe9 HTTP/1.1`, HOST, `X-A: ${'a'.repeat(8191 - 7)}`]);
  add('raw high byte If-None-Match', [`GET ${LIST}?x=\xe9 HTTP/1.1`, HOST, 'If-None-Match: *']);
  add('X_Forwarded_Host', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'X_Forwarded_Host: other.example']);
  add('X-Forwarded-Host and X_Forwarded_Host', [
    `GET ${LIST}?page=2 HTTP/1.1`,
    HOST,
    'X-Forwarded-Host: a.example',
    'X_Forwarded_Host: b.example',
  ]);
  add('X-Forwarded-Proto and X_Forwarded_Proto', [
    `GET ${LIST}?page=2 HTTP/1.1`,
    HOST,
    'X-Forwarded-Proto: https',
    'X_Forwarded_Proto: https',
  ]);
  add('Host and HOST', [`GET ${LIST}?page=2 HTTP/1.1`, HOST, 'HOST: 127.0.0.1:8765']);
  add('Host twice on 404', ['GET /nope HTTP/1.1', HOST, HOST]);
  add('Host twice 1.0', [`GET ${LIST} HTTP/1.0`, HOST, HOST]);
  return cases;
}
