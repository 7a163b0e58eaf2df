import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { generatedPages } from '../../scripts/docs-pages.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

function markdownFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const pages = ['README.md', ...markdownFiles('docs')];
const text = new Map(pages.map((page) => [page, readFileSync(join(root, page), 'utf8')]));

/** The text a reader sees as prose: fenced blocks and inline code cannot hold links. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^]*?^\1/gm, '').replace(/`[^`\n]*`/g, '');
}

/** Relative link targets of a page (images included), as written. */
function relativeLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target));
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces to dashes. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const m of markdown.replace(/^(```|~~~)[^]*?^\1/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = (m[1] ?? '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    result.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return result;
}

describe('the docs hold together', () => {
  it('links every page of docs/ from the README', () => {
    const linked = new Set(relativeLinks(text.get('README.md') ?? '').map((t) => t.split('#')[0]));
    const unlinked = pages.filter((page) => page !== 'README.md' && !linked.has(page));
    expect(unlinked, 'pages the README does not link').toEqual([]);
  });

  it.each(pages)('%s: every relative link names a file that exists, and a heading it has', (page) => {
    const broken = relativeLinks(text.get(page) ?? '').filter((target) => {
      const [path = '', anchor] = target.split('#');
      const file = path === '' ? page : relative(root, join(root, dirname(page), decodeURI(path)));
      const exists = statSync(join(root, file), { throwIfNoEntry: false }) !== undefined;
      if (!exists) return true;
      if (anchor === undefined) return false;
      const headings = text.get(file) ?? readFileSync(join(root, file), 'utf8');
      return !anchors(headings).has(anchor);
    });
    expect(broken, `broken links in ${page}`).toEqual([]);
  });

  // The same comparison as `npm run docs:check` (CI), so a stale page also fails `npm test` locally.
  it.each(['docs/configuration.md', 'docs/cli.md'])(
    '%s matches the code it is generated from (else: npm run docs:generate)',
    async (path) => {
      const page = (await generatedPages()).find((p) => p.path === path);
      expect(page?.text).toBe(text.get(path));
    },
  );
});
