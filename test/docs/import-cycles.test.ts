import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';

/** Every .ts/.tsx file under `dir`, as absolute paths. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The files of the tree `file` imports or re-exports, type-only imports included. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, false);
  return importedFiles.flatMap(({ fileName }) => {
    if (!fileName.startsWith('.')) return [];
    const base = resolve(dirname(file), fileName).replace(/\.js$/, '');
    return ['.ts', '.tsx'].map((ext) => base + ext).filter((path) => existsSync(path));
  });
}

/** The strongly connected components of more than one file (Tarjan): each is an import cycle. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) ?? 0);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('imports in src/', () => {
  const graph = new Map(sources(join(ROOT, 'src')).map((file) => [file, importsOf(file)]));
  const named = (files: string[]) => files.map((file) => relative(ROOT, file));

  it('run one way: no cycle, type-only imports counted', () => {
    expect(cycles(graph).map(named)).toEqual([]);
  });

  it('are read whole: a cycle made of type imports alone is found', () => {
    const a = join(ROOT, 'src/a.ts');
    const b = join(ROOT, 'src/b.ts');
    const c = join(ROOT, 'src/c.ts');
    expect(
      cycles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, [a]],
        ]),
      ).map(named),
    ).toEqual([['src/a.ts', 'src/b.ts', 'src/c.ts']]);
    expect(importsOf(join(ROOT, 'src/db/port-store.ts'))).toContain(join(ROOT, 'src/db/store.ts'));
  });
});
