import { describe, expect, it } from 'vitest';
import { startMirror } from '../helpers/mirror-server.js';
import { tempDatabase } from '../helpers/temp-db.js';

// Fastify's own unknown-path answer is handed to the DRF handler: whoever asks Fastify directly
// (inject, as tests and tools do) gets the same Django 404 a real socket gets.
describe('an unknown path asked of Fastify itself', () => {
  it('gets the very Django 404 the socket gets', async () => {
    const mirror = await startMirror(tempDatabase());
    const overSocket = await fetch(`${mirror.url}/no/such/page/`);
    const injected = await mirror.app.inject({ method: 'GET', url: '/no/such/page/' });
    expect(overSocket.status).toBe(404);
    expect(injected.statusCode).toBe(404);
    expect(injected.headers['content-type']).toBe(overSocket.headers.get('content-type'));
    expect(injected.body).toBe(await overSocket.text());
    expect(injected.body).toContain('<h1>Not Found</h1>');
  });

  it('a route asked with a method it does not have gets Django’s 404 too', async () => {
    const mirror = await startMirror(tempDatabase());
    const injected = await mirror.app.inject({ method: 'DELETE', url: '/healthz' });
    expect(injected.statusCode).toBe(404);
    expect(injected.body).toContain('<h1>Not Found</h1>');
  });
});
