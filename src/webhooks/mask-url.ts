/**
 * A URL with any user and password replaced by `***`, for payloads, logs and the API: an upstream
 * or endpoint URL may carry credentials that receivers and readers must never see.
 */
export function maskCredentials(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.username === '' && parsed.password === '') return url;
  parsed.username = '***';
  parsed.password = '';
  return parsed.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
}

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
