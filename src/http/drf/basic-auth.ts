/**
 * DRF's default BasicAuthentication, which runs on every request of the upstream view. The mirror
 * has no users, like a site nobody can log in to: any credentials fail, malformed ones with DRF's
 * specific message. Returns the 403 detail, or null when the header does not ask for Basic auth.
 */
export function basicAuthFailure(header: string | undefined): string | null {
  // bytes.split(): ASCII whitespace only
  const parts = (header ?? '').split(/[ \t\n\r\v\f]+/).filter((p) => p !== '');
  if (parts.length === 0 || parts[0]?.replace(/[A-Z]/g, (c) => c.toLowerCase()) !== 'basic') return null;
  if (parts.length === 1) return 'Invalid basic header. No credentials provided.';
  if (parts.length > 2) return 'Invalid basic header. Credentials string should not contain spaces.';
  if (!isPythonBase64(parts[1] ?? ''))
    return 'Invalid basic header. Credentials not correctly base64 encoded.';
  return 'Invalid username/password.';
}

/** Whether CPython 3.11's non-strict `binascii.a2b_base64` accepts `text` (it skips junk chars). */
export function isPythonBase64(text: string): boolean {
  let quad = 0;
  let pads = 0;
  for (const ch of text) {
    if (ch === '=') {
      if (quad >= 2) {
        pads += 1;
        if (quad + pads >= 4) return true;
      }
      continue;
    }
    if (!/^[A-Za-z0-9+/]$/.test(ch)) continue;
    pads = 0;
    quad = (quad + 1) % 4;
  }
  return quad === 0;
}
