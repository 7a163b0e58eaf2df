import { STATUS_CODES } from 'node:http';
import { isLosslessNumber } from '../json/lossless.js';
import { pyJsonDumps, type JsonValue } from './python-json.js';

/**
 * The page a browser gets (DRF's BrowsableAPIRenderer): what DRF's shows, in the mirror's own
 * markup: the request line, the status and headers, the JSON indented as DRF indents it with its
 * URLs as links, and the pager. Its status and headers are DRF's exactly; the HTML is ours.
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

/** The request as DRF's browsable API heads its page: method and target as sent. */
export interface BrowsableRequest {
  method: string;
  url: string;
}

// What JSON leaves raw and a page must not: DEL, C1, the line and paragraph separators. Inside a
// string literal (the only place they can be) their \u escape is the same JSON.
const RAW_CONTROLS = /[\u007f-\u009f\u2028\u2029]/g;
const STRING_LITERAL = /"(?:[^"\\]|\\.)*"/g;

/**
 * JSON indented as DRF's browsable API shows it (4 spaces), every character visible (JSON escapes
 * C0 itself), and string values that are http(s) URLs as links, as DRF's `urlize` makes them.
 */
/** Deepest nesting of arrays and objects, counted without recursion (rows may nest 50,000 deep). */
function depthOf(data: JsonValue): number {
  let deepest = 0;
  const stack: [JsonValue, number][] = [[data, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() ?? [null, 0];
    if (node === null || typeof node !== 'object' || isLosslessNumber(node)) continue;
    deepest = Math.max(deepest, depth + 1);
    const children: JsonValue[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Indenting costs its depth in spaces on every line: past this, the page shows compact JSON. */
const MAX_INDENTED_DEPTH = 40;

function jsonHtml(data: JsonValue): string {
  const indent = depthOf(data) <= MAX_INDENTED_DEPTH ? 4 : null;
  const text = pyJsonDumps(data, indent).replace(
    RAW_CONTROLS,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  let out = '';
  let last = 0;
  for (const match of text.matchAll(STRING_LITERAL)) {
    const literal = match[0];
    out += escapeHtml(text.slice(last, match.index));
    last = match.index + literal.length;
    const value = JSON.parse(literal) as string;
    out += /^https?:\/\/[^\s]+$/.test(value)
      ? `&quot;<a href="${escapeHtml(value)}" rel="nofollow">${escapeHtml(literal.slice(1, -1))}</a>&quot;`
      : escapeHtml(literal);
  }
  return out + escapeHtml(text.slice(last));
}

/** Status, then the headers of the JSON answer, as DRF's browsable API lists them. */
function responseInfo(status: number): string {
  const headers: [string, string][] = [
    ['Allow', 'GET, HEAD, OPTIONS'],
    ['Content-Type', 'application/json'],
    ['Vary', 'Accept'],
  ];
  const lines = headers.map(([name, value]) => `<b>${name}:</b> <span class="lit">${value}</span>`);
  return `<b>HTTP ${status} ${escapeHtml(STATUS_CODES[status] ?? '')}</b>\n${lines.join('\n')}`;
}

const STYLE =
  'body{font-family:sans-serif;margin:1.5em auto;max-width:72em;padding:0 1em}' +
  'pre{background:#f7f7f9;border:1px solid #e1e1e8;padding:.8em;white-space:pre-wrap;overflow-wrap:anywhere}' +
  '.request pre{background:#fff}nav{margin:.8em 0}';

function page(title: string, body: string): Buffer {
  return Buffer.from(
    `<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n` +
      `<meta name="viewport" content="width=device-width, initial-scale=1">\n<title>${escapeHtml(title)}</title>\n` +
      `<style>${STYLE}</style>\n</head>\n<body>\n${body}\n</body>\n</html>\n`,
  );
}

function link(label: string, url: string | null): string {
  return url === null ? `<span>${label}</span>` : `<a href="${escapeHtml(url)}">${label}</a>`;
}

/** The page of one answer: title, pager (lists), request line, status and headers, the JSON. */
function browsable(request: BrowsableRequest, status: number, data: JsonValue, pager: string): Buffer {
  const title = 'Team Block Coworker List';
  return page(
    title,
    `<h1>${title}</h1>\n${pager}` +
      `<div class="request"><pre><b>${escapeHtml(request.method)}</b> ${escapeHtml(request.url)}</pre></div>\n` +
      `<div class="response"><pre>${responseInfo(status)}\n\n${jsonHtml(data)}</pre></div>`,
  );
}

export interface HtmlListPage {
  count: number;
  page: number;
  numPages: number;
  next: string | null;
  previous: string | null;
  entries: readonly JsonValue[];
  request: BrowsableRequest;
}

export function renderListHtml(data: HtmlListPage): Buffer {
  const pager =
    `<nav>${link('&laquo; previous', data.previous)} | page ${data.page} of ${data.numPages} | ` +
    `${link('next &raquo;', data.next)}</nav>\n`;
  const body = { count: data.count, next: data.next, previous: data.previous, results: [...data.entries] };
  return browsable(data.request, 200, body, pager);
}

/** Any other DRF answer (an error detail, the OPTIONS metadata), as the same page without a pager. */
export function renderDataHtml(status: number, data: JsonValue, request: BrowsableRequest): Buffer {
  return browsable(request, status, data, '');
}
