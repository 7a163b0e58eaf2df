import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LIST_PATH } from '../../src/upstream/list-path.js';
import { untilTestEnds } from './scope.js';

/** A listing of one page whose text is written here as it is, odd as an upstream may write it. */
export async function rawUpstream(): Promise<{ url: string; serve: (entries: readonly string[]) => void }> {
  let body = '';
  const server = createServer((request, response) => {
    if (!request.url?.startsWith(LIST_PATH)) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  untilTestEnds(() => new Promise((resolve) => server.close(resolve)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (entries) => {
      body = `{ "count" : ${entries.length}, "next": null, "previous": null, "results": [ ${entries.join(' ,\n ')} ] }`;
    },
  };
}
