/** The file name a mirror URL ends with: the last path segment of the upstream URL, as encoded there. */
export function mediaFileName(url: string): string {
  const path = URL.canParse(url) ? new URL(url).pathname : '';
  const name = path.slice(path.lastIndexOf('/') + 1);
  return name === '' ? 'file' : name;
}

/** The mirror's own path of the bytes it holds for an upstream media URL (the /media route's). */
export function mirrorMediaPath(sha256: string, url: string): string {
  return `/media/${sha256}/${mediaFileName(url)}`;
}
