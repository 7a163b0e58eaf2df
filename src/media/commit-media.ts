import type { MediaCommit } from '../db/run-commit.js';
import { mediaRefs } from './media-refs.js';
import type { MediaOutcome } from './mirror-media.js';

/**
 * The media phase's outcome as the run's commit writes it, in the run's own transaction: the
 * listing and the media it references appear together or not at all.
 */
export function mediaCommit(media: MediaOutcome | null): MediaCommit | null {
  return media && { items: media.items, listed: media.listed, counts: media.counts, refsOf: mediaRefs };
}
