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
