import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER_PY = fileURLToPath(new URL('../../drf-reference/server.py', import.meta.url));

/**
 * The first Python that can run the reference (Debian's DRF lives in /usr/bin/python3's
 * dist-packages, which a pyenv `python3` earlier on PATH does not see), or null.
 */
export function findReferencePython(): string | null {
  const forced = process.env.DRF_REFERENCE_PYTHON;
  for (const candidate of forced ? [forced] : ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(candidate, ['-c', 'import rest_framework, django, gunicorn'], {
      stdio: 'ignore',
    });
    if (probe.status === 0) return candidate;
  }
  return null;
}

export interface ReferenceServer {
  port: number;
  /** Serves these entry texts from now on (the server re-reads its file; `reload` only). */
  replace(entryTexts: readonly string[]): void;
  stop(): Promise<void>;
}

/** The entries file: entry texts written as they are, so numbers keep the digits a test gave. */
function writeEntries(file: string, entries: readonly unknown[] | { texts: readonly string[] }): void {
  const text = Array.isArray(entries)
    ? JSON.stringify(entries)
    : `[${(entries as { texts: readonly string[] }).texts.join(',')}]`;
  // By rename, so the server never reads a half-written file.
  writeFileSync(`${file}.new`, text);
  renameSync(`${file}.new`, file);
}

/**
 * Starts test/drf-reference/server.py over `entries` (values, or `{ texts }` kept byte for byte)
 * and resolves once it prints its port. With `reload`, `replace` changes what it serves.
 */
export async function startReferenceServer(
  python: string,
  entries: readonly unknown[] | { texts: readonly string[] },
  pageSize: number,
  trustProxy = false,
  reload = false,
): Promise<ReferenceServer> {
  const dir = mkdtempSync(join(tmpdir(), 'drf-ref-'));
  const file = join(dir, 'entries.json');
  writeEntries(file, entries);
  const args = [SERVER_PY, '--entries', file, '--port', '0', '--page-size', String(pageSize)];
  if (trustProxy) args.push('--trust-proxy');
  if (reload) args.push('--reload');
  const child = spawn(python, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const port = await new Promise<number>((resolve, reject) => {
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /PORT (\d+)/.exec(stdout);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', (code) => reject(new Error(`reference server exited with ${code}: ${stderr}`)));
  });
  return {
    port,
    replace: (texts) => writeEntries(file, { texts }),
    stop: () => stopChild(child).finally(() => rmSync(dir, { recursive: true, force: true })),
  };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
