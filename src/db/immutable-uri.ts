/** `file:` URI of a path, every segment percent-encoded (a `?` or `#` in a folder name stays a name). */
export function immutableUri(file: string): string {
  return `file:${file.split('/').map(encodeURIComponent).join('/')}?immutable=1`;
}
