import { plainText, type NotifyMessage } from '../message.js';

export interface EmailContent {
  subject: string;
  text: string;
  html: string;
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

const a = (text: string, url: string | null): string =>
  url === null ? escapeHtml(text) : `<a href="${escapeHtml(url)}">${escapeHtml(text)}</a>`;

/** A plain design: one column, system fonts, names as links, every upstream text escaped and isolated. */
function htmlOf(message: NotifyMessage): string {
  const items = message.lines.map((l) => {
    const image =
      l.imageUrl === null
        ? ''
        : `<img src="${escapeHtml(l.imageUrl)}" alt="" width="32" height="32" style="vertical-align:middle;border-radius:4px;margin-right:6px"> `;
    return `<li style="margin:4px 0">${image}<bdi>${a(l.who, l.whoUrl)}</bdi>${escapeHtml(l.rest)}</li>`;
  });
  const more = message.more === null ? '' : `<p>and ${a(`${message.more.count} more`, message.more.url)}</p>`;
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    `<title>${escapeHtml(message.title)}</title></head>`,
    '<body style="font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2939;max-width:40em;margin:1em auto;padding:0 1em">',
    `<h1 style="font-size:1.25em">${escapeHtml(message.title)}</h1>`,
    message.summary === null ? '' : `<p>${escapeHtml(message.summary)}</p>`,
    items.length === 0 ? '' : `<ul style="padding-left:1.2em">${items.join('')}</ul>`,
    more,
    message.link === null ? '' : `<p>${a(message.link.label, message.link.url)}</p>`,
    `<p style="color:#667085;font-size:.85em">${escapeHtml(message.footer)}</p>`,
    '</body></html>',
  ].join('\n');
}

/** The mail: the subject on one line (a header cannot carry a line break), text and HTML parts. */
export function emailContent(message: NotifyMessage): EmailContent {
  return {
    subject: message.title.replace(/[\r\n\u2028\u2029]+/g, ' ').slice(0, 200),
    text: plainText(message),
    html: htmlOf(message),
  };
}
