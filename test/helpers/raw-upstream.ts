import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LIST_PATH } from '../../src/upstream/list-path.js';
import { untilTestEnds } from './scope.js';

export interface RawUpstream {
  url: string;
  /** The listing's one page: these entries' texts, as they are. */
  serve: (entries: readonly string[]) => void;
  /** The OPTIONS answer's body, as it is (the listing's text until set). */
  serveOptions: (body: string) => void;
}

/** A listing of one page whose text is written here as it is, odd as an upstream may write it. */
export async function rawUpstream(): Promise<RawUpstream> {
  let body = '';
  let options: string | undefined;
  const server = createServer((request, response) => {
    if (!request.url?.startsWith(LIST_PATH)) return void response.writeHead(404).end();
    const text = request.method === 'OPTIONS' ? (options ?? body) : body;
    response.writeHead(200, { 'content-type': 'application/json' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  untilTestEnds(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (entries) => {
      body = `{ "count" : ${entries.length}, "next": null, "previous": null, "results": [ ${entries.join(' ,\n ')} ] }`;
    },
    serveOptions: (text) => {
      options = text;
    },
  };
}
