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
