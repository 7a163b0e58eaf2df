import type { ChildProcess } from 'node:child_process';
import { request, type Agent } from 'undici';

/** Helpers of the benchmarks that run the built CLI as a server and time its /healthz. */

/**
 * Reads a child's stdout for as long as it runs (an unread pipe would fill up and block the child's
 * log writes, and with them its event loop) and resolves waits for lines matching a pattern.
 */
export function lineReader(child: ChildProcess) {
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  // Both streams: `start` logs on stdout, the sync child it runs logs on stderr.
  for (const stream of [child.stdout, child.stderr]) {
    let partial = '';
    stream?.on('data', (chunk: Buffer) => {
      const parts = (partial + chunk.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) {
        // Only the lines a wait may need are kept: a 100,000-entry sync logs plenty.
        if (!line.includes('"msg":"sync') && !line.includes('"url"') && !line.includes('started"')) continue;
        lines.push(line);
        for (const w of [...waiters]) {
          if (!w.pattern.test(line)) continue;
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    });
  }
  return (pattern: RegExp, timeoutMs: number): Promise<string> =>
    new Promise((resolve, reject) => {
      const found = lines.find((l) => pattern.test(l));
      if (found !== undefined) return resolve(found);
      const timer = setTimeout(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms`)), timeoutMs);
      waiters.push({ pattern, resolve: (line) => (clearTimeout(timer), resolve(line)) });
    });
}

export const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

export async function healthLatencies(agent: Agent, url: string, until: () => boolean): Promise<number[]> {
  const times: number[] = [];
  while (!until()) {
    const t = performance.now();
    const res = await request(`${url}/healthz`, { dispatcher: agent });
    await res.body.arrayBuffer();
    times.push(performance.now() - t);
    if (res.statusCode !== 200) throw new Error(`/healthz answered ${res.statusCode}`);
  }
  return times;
}
