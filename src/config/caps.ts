import { CONTRACT_PAGE_SIZE } from './setting-table.js';

/**
 * Listing bytes budgeted per entry (page envelope included): the simulated upstream's entries take
 * well under 512 B on the wire, a real directory's more; 512 B leaves room for both.
 */
export const LISTING_BYTES_PER_ENTRY = 512;

/**
 * Heap a sync needs: its modules, the pages in flight, one staging batch and one diff chunk (the
 * base), and per byte of listing what the streaming sync still keeps whole: the distinct media URLs
 * when media are mirrored, the unknown fields' names. The listing itself lives in the run's stage
 * (temp tables), never in the heap, so the base covers a first and an unchanged sync of a large
 * listing alike (docs/benchmarks.md), where a sync holding the whole listing needed several bytes
 * of heap per listing byte.
 */
export const SYNC_HEAP_BASE_MB = 48;
export const SYNC_HEAP_PER_LISTING_BYTE = 0.5;

const MIB = 1024 * 1024;

/** The sync caps, as the settings table parses them. */
export interface SyncCaps {
  maxEntries: number;
  maxPages: number;
  maxListingBytes: number;
  maxHeapMb: number;
}

/** Pages a listing of `entries` entries takes in the contract's pages. */
export function pagesFor(entries: number): number {
  return Math.max(1, Math.ceil(entries / CONTRACT_PAGE_SIZE));
}

/** The listing bytes the entry cap implies. */
export function listingBytesFor(entries: number): number {
  return entries * LISTING_BYTES_PER_ENTRY;
}

/** The sync heap (MiB) a listing of `listingBytes` needs. */
export function heapMbFor(listingBytes: number): number {
  return Math.ceil(SYNC_HEAP_BASE_MB + (SYNC_HEAP_PER_LISTING_BYTE * listingBytes) / MIB);
}

/**
 * Why a set of caps contradicts itself, one problem per cap that cannot hold what the cap above it
 * admits (entries → pages, entries → listing bytes → heap), each naming the fix; empty when they
 * agree. A listing within SYNC_MAX_ENTRIES then never fails on another cap, nor crashes its sync.
 */
export function capContradictions(caps: SyncCaps): { name: string; problem: string }[] {
  const problems: { name: string; problem: string }[] = [];
  const pages = pagesFor(caps.maxEntries);
  if (caps.maxPages < pages) {
    problems.push({
      name: 'SYNC_MAX_PAGES',
      problem:
        `${caps.maxPages} pages hold only ${caps.maxPages * CONTRACT_PAGE_SIZE} of the ${caps.maxEntries} ` +
        `entries SYNC_MAX_ENTRIES admits (${CONTRACT_PAGE_SIZE} a page): raise SYNC_MAX_PAGES to ${pages} ` +
        `or lower SYNC_MAX_ENTRIES to ${caps.maxPages * CONTRACT_PAGE_SIZE}`,
    });
  }
  const bytes = listingBytesFor(caps.maxEntries);
  if (caps.maxListingBytes < bytes) {
    const fits = Math.floor(caps.maxListingBytes / LISTING_BYTES_PER_ENTRY);
    problems.push({
      name: 'SYNC_MAX_LISTING_BYTES',
      problem:
        `${caps.maxListingBytes} bytes hold only ${fits} entries of ${LISTING_BYTES_PER_ENTRY} B, fewer than the ` +
        `${caps.maxEntries} SYNC_MAX_ENTRIES admits: raise SYNC_MAX_LISTING_BYTES to ${bytes} ` +
        `or lower SYNC_MAX_ENTRIES to ${fits}`,
    });
  }
  const heap = heapMbFor(caps.maxListingBytes);
  if (caps.maxHeapMb < heap) {
    const fits = Math.max(
      0,
      Math.floor(((caps.maxHeapMb - SYNC_HEAP_BASE_MB) * MIB) / SYNC_HEAP_PER_LISTING_BYTE),
    );
    problems.push({
      name: 'SYNC_MAX_HEAP_MB',
      problem:
        `a sync of a ${caps.maxListingBytes}-byte listing (SYNC_MAX_LISTING_BYTES) needs a ${heap} MiB heap, ` +
        `more than ${caps.maxHeapMb}: raise SYNC_MAX_HEAP_MB to ${heap} or lower SYNC_MAX_LISTING_BYTES to ${fits}`,
    });
  }
  return problems;
}
