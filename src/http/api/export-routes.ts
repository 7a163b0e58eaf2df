import type { ChangeStreamFilter, Store } from '../../db/store.js';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { changesQuery, parseParams } from '../../request/params.js';
import { changeExportTexts, type ExportFormat } from '../../export/change-export.js';

/** The feeds' filters and start (`before`); no page size: an export is the whole history. */
const exportQuery = changesQuery.omit({ page_size: true });

/** Rows read and written per chunk: about 0.3 MB of text, the most one export holds at a time. */
const EXPORT_BATCH = 1000;

const FORMATS = {
  csv: { type: 'text/csv; charset=utf-8; header=present', file: 'changes.csv' },
  jsonl: { type: 'application/jsonl; charset=utf-8', file: 'changes.jsonl' },
} as const satisfies Record<ExportFormat, unknown>;

/**
 * `/api/mirror/changes/export.csv` and `.jsonl`: every change the filters match, newest first, in
 * one streamed answer (the CSV's columns are the feed's, the JSON Lines rows the API's). Rows are
 * read in keyset batches as the client takes them, so memory stays flat whatever the history's
 * length and a client that stops reading stops the reads.
 */
export function registerExportRoutes(app: FastifyInstance, store: Store): void {
  for (const format of Object.keys(FORMATS) as ExportFormat[]) {
    app.get(`/api/mirror/changes/export.${format}`, async (request, reply) => {
      const query = parseParams(exportQuery, request.query, reply);
      if (!query) return reply;
      const { before, ...filters } = query;
      const filter: ChangeStreamFilter = {
        ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)),
        ...(before !== undefined ? { beforeId: before } : {}),
      };
      const chunks = changeExportTexts(store, filter, format, { batchSize: EXPORT_BATCH, parallel: true });
      const body = Readable.from(chunks, { highWaterMark: 1 });
      return reply
        .type(FORMATS[format].type)
        .header('Content-Disposition', `attachment; filename="${FORMATS[format].file}"`)
        .header('X-Content-Type-Options', 'nosniff')
        .send(body);
    });
  }
}
