/** SYNC_MAX_HEAP_MB's default and bounds: the heap limit of every sync process. */
export const SYNC_HEAP_DEFAULT_MB = 512;
export const SYNC_HEAP_MIN_MB = 64;
export const SYNC_HEAP_MAX_MB = 65_536;
