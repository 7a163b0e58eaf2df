import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { imageOrigin, type MediaResolver } from './media-source.js';

/** Per request: what components need beyond their props, and what they report back (image origins). */
export interface PageContext {
  now: Date;
  media: MediaResolver;
  /** Origins of the images the page shows; the CSP's `img-src` allows exactly these. */
  imageOrigins: Set<string>;
  /** True when the mirror copies the built-in simulated upstream: every page says so. */
  demo: boolean;
  /** The one zone every time on the page is shown in (`TZ`), and named. */
  timeZone: string;
}

export const PageContextValue = createContext<PageContext | null>(null);

export function usePage(): PageContext {
  const page = useContext(PageContextValue);
  if (!page) throw new Error('page components render inside a PageContextValue provider');
  return page;
}

/** The `src` for an upstream image URL, recording its origin for the CSP; null when not shown. */
export function useImageSrc(url: unknown): string | null {
  const page = usePage();
  if (typeof url !== 'string') return null;
  const src = page.media.imageSrc(url);
  if (src === null) return null;
  const origin = imageOrigin(src);
  if (origin !== null) page.imageOrigins.add(origin);
  return src;
}
