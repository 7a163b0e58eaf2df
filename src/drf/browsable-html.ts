import { isJsonObject, pyJsonDumps, type JsonValue } from './python-json.js';

/**
 * A small readable page for browsers (DRF's BrowsableAPIRenderer would render its full template
 * here; only its status and headers are reproduced exactly, the HTML is ours).
 */

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#x27;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch] ?? ch);
}

function cell(value: JsonValue | undefined): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return escapeHtml(value);
  return `<code>${escapeHtml(pyJsonDumps(value))}</code>`;
}

function page(title: string, body: string): Buffer {
  return Buffer.from(
    `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${escapeHtml(title)}</title>\n` +
      `<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}` +
      `td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}</style>\n` +
      `</head>\n<body>\n${body}\n</body>\n</html>\n`,
  );
}

function link(label: string, url: string | null): string {
  return url === null ? `<span>${label}</span>` : `<a href="${escapeHtml(url)}">${label}</a>`;
}

export interface HtmlListPage {
  count: number;
  page: number;
  numPages: number;
  next: string | null;
  previous: string | null;
  entries: readonly JsonValue[];
}

export function renderListHtml(data: HtmlListPage): Buffer {
  const columns: string[] = [];
  for (const entry of data.entries) {
    if (isJsonObject(entry)) {
      for (const key of Object.keys(entry)) if (!columns.includes(key)) columns.push(key);
    }
  }
  const head = columns.map((c) => `<th>${escapeHtml(c)}</th>`).join('');
  const rows = data.entries.map((entry) => {
    const record = isJsonObject(entry) ? entry : {};
    return `<tr>${columns.map((c) => `<td>${cell(record[c])}</td>`).join('')}</tr>`;
  });
  const nav = `<p>${link('&laquo; previous', data.previous)} | page ${data.page} of ${data.numPages} | ${link('next &raquo;', data.next)}</p>`;
  return page(
    'Team Block Coworker List',
    `<h1>Team Block Coworker List</h1>\n<p>${data.count} coworkers</p>\n${nav}\n` +
      `<table>\n<thead><tr>${head}</tr></thead>\n<tbody>\n${rows.join('\n')}\n</tbody>\n</table>\n${nav}`,
  );
}

/** Any other DRF answer (an error detail, the OPTIONS metadata) shown as its JSON. */
export function renderDataHtml(status: number, data: JsonValue): Buffer {
  return page(
    'Team Block Coworker List',
    `<h1>Team Block Coworker List</h1>\n<p>HTTP ${status}</p>\n<pre>${escapeHtml(pyJsonDumps(data, 4))}</pre>`,
  );
}
