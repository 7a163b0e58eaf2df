import { DjangoServerError, MediaType } from './media-type.js';
import { isPythonSpace } from './python-int.js';

/**
 * DRF's DefaultContentNegotiation with the default renderers (JSONRenderer, BrowsableAPIRenderer).
 * `q` values are ignored; only specificity orders the choices.
 */

export interface Renderer {
  format: 'json' | 'api';
  mediaType: 'application/json' | 'text/html';
  /** The Content-Type DRF writes: the renderer's own type, never the requested one. */
  contentType: string;
}

export const JSON_RENDERER: Renderer = {
  format: 'json',
  mediaType: 'application/json',
  contentType: 'application/json',
};
export const BROWSABLE_RENDERER: Renderer = {
  format: 'api',
  mediaType: 'text/html',
  contentType: 'text/html; charset=utf-8',
};
export const RENDERERS: readonly Renderer[] = [JSON_RENDERER, BROWSABLE_RENDERER];

export type Negotiated =
  | { kind: 'ok'; renderer: Renderer; acceptedMediaType: string }
  | { kind: 'not-acceptable' }
  | { kind: 'unknown-format' };

const RENDERER_TYPES = new Map(RENDERERS.map((r) => [r, new MediaType(r.mediaType)]));

/** Python `str.strip()`: Unicode whitespace, not only ASCII. */
export function pyStrip(text: string): string {
  const chars = Array.from(text);
  let start = 0;
  let end = chars.length;
  while (start < end && isPythonSpace(chars[start]?.codePointAt(0) ?? 0)) start += 1;
  while (end > start && isPythonSpace(chars[end - 1]?.codePointAt(0) ?? 0)) end -= 1;
  return chars.slice(start, end).join('');
}

/**
 * `select_renderer`. Throws DjangoServerError where DRF's header parsing raises (a 500). Within one
 * precedence level DRF iterates a Python set, whose order varies per process; the first token in
 * header order is used here, which is one of the orders DRF may pick.
 */
export function negotiate(acceptHeader: string | undefined, format: string | null): Negotiated {
  // Pure in its inputs, and clients repeat the same few Accept headers: memoize, boundedly.
  // JSON keeps "absent" and every string apart, whatever bytes they hold (a query may carry NUL).
  const key = JSON.stringify([format, acceptHeader ?? null]);
  let cached = negotiated.get(key);
  if (cached === undefined) {
    try {
      cached = selectRenderer(acceptHeader, format);
    } catch (error) {
      if (!(error instanceof DjangoServerError)) throw error;
      cached = error;
    }
    if (negotiated.size >= MAX_CACHED) negotiated.clear();
    negotiated.set(key, cached);
  }
  if (cached instanceof DjangoServerError) throw cached;
  return cached;
}

const MAX_CACHED = 512;
const negotiated = new Map<string, Negotiated | DjangoServerError>();

function selectRenderer(acceptHeader: string | undefined, format: string | null): Negotiated {
  let renderers = RENDERERS;
  if (format) {
    renderers = RENDERERS.filter((r) => r.format === format);
    if (renderers.length === 0) return { kind: 'unknown-format' };
  }
  const tokens = (acceptHeader ?? '*/*').split(',').map(pyStrip);
  const levels: MediaType[][] = [[], [], [], []];
  const seen = new Set<string>();
  for (const token of tokens) {
    const type = new MediaType(token);
    if (seen.has(token)) continue;
    seen.add(token);
    levels[3 - type.precedence]?.push(type);
  }
  for (const level of levels) {
    for (const renderer of renderers) {
      const rendererType = RENDERER_TYPES.get(renderer);
      for (const requested of level) {
        if (rendererType?.match(requested)) {
          return { kind: 'ok', renderer, acceptedMediaType: acceptedType(renderer, requested) };
        }
      }
    }
  }
  return { kind: 'not-acceptable' };
}

/** The accepted media type DRF records (it feeds JSONRenderer's `indent`). */
function acceptedType(renderer: Renderer, requested: MediaType): string {
  const rendererType = RENDERER_TYPES.get(renderer);
  if (rendererType && rendererType.precedence > requested.precedence) {
    return [renderer.mediaType, ...[...requested.params].map(([k, v]) => `${k}=${v}`)].join(';');
  }
  return requested.orig;
}
