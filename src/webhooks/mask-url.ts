/**
 * How an endpoint is shown in the API, the CLI and logs: its origin only. Deploy hooks carry their
 * token in the path (`/build_hooks/<token>`), and the delivery log is readable without a token.
 */
export function endpointLabel(url: string): string {
  if (!URL.canParse(url)) return '(invalid URL)';
  const parsed = new URL(url);
  const hidden = parsed.pathname !== '/' || parsed.search !== '' ? '/…' : '';
  return `${parsed.origin}${hidden}`;
}

/**
 * Text that may quote an endpoint's URL (a library's error message, kept in the delivery log) with
 * the URL shown as its label and its path and query, where a token lives, hidden.
 */
export function withoutUrl(text: string, url: string): string {
  const label = endpointLabel(url);
  let shown = text.split(url).join(label);
  if (URL.canParse(url)) {
    const { pathname, search } = new URL(url);
    const secret = `${pathname}${search}`;
    if (secret.length > 1) shown = shown.split(secret).join('/…');
  }
  return shown;
}
