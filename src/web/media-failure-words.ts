/**
 * Why a media file was not mirrored, in words, by the failure code recorded on its URL. Each says
 * what happened to so many files, one or several ("3 answered with an error status"). Partial: a code a newer or
 * older version stored still shows, as itself.
 */
const failureWords: Partial<Record<string, string>> = {
  MEDIA_HTTP_STATUS: 'answered with an error status',
  MEDIA_NETWORK: 'could not be reached',
  MEDIA_TIMEOUT: 'did not arrive whole within MEDIA_TIMEOUT',
  MEDIA_TOO_LARGE: 'exceeded MEDIA_MAX_BYTES',
  MEDIA_RUN_BUDGET: 'came after the run had downloaded MEDIA_RUN_MAX_BYTES',
  MEDIA_TYPE_MISMATCH: 'did not match the type of file the host declared',
  MEDIA_REDIRECT_REFUSED: 'redirected to a host MEDIA_ORIGINS does not list',
  MEDIA_STORE_FAILED: 'could not be stored by the mirror (its disk or database)',
};

/** The codes the words above know; a test holds them to the media fetcher's own list. */
export const describedMediaFailures: readonly string[] = Object.keys(failureWords);

export function mediaFailureWords(code: string): string {
  return failureWords[code] ?? 'failed';
}

/** The failure that is the mirror's own, not the media host's: worth more than a warning. */
export const MIRROR_MEDIA_FAILURE = 'MEDIA_STORE_FAILED';
