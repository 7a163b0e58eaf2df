import { describe, expectTypeOf, it } from 'vitest';
import type * as pgSchema from '../../../src/db/postgres/schema.js';
import type * as sqliteSchema from '../../../src/db/schema.js';

// Both stores hand the rest of the code the same rows: a PostgreSQL column whose type drifted
// from its SQLite twin fails to compile here, before any query returns the wrong shape.
describe('the PostgreSQL schema', () => {
  it('reads and writes the same row types as the SQLite schema, table by table', () => {
    expectTypeOf<typeof pgSchema.optionsBodies.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.optionsBodies.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.runs.$inferSelect>().toEqualTypeOf<sqliteSchema.RunRow>();
    expectTypeOf<typeof pgSchema.coworkers.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.coworkers.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.versions.$inferSelect>().toEqualTypeOf<sqliteSchema.VersionRow>();
    expectTypeOf<typeof pgSchema.listingPositions.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.listingPositions.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.changes.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.changes.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.mediaBlobs.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.mediaBlobs.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.mediaVersions.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.mediaVersions.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.mediaUrls.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.mediaUrls.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.mediaRuns.$inferSelect>().toEqualTypeOf<sqliteSchema.MediaRunRow>();
    expectTypeOf<typeof pgSchema.webhookEndpoints.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.webhookEndpoints.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.webhookMessages.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.webhookMessages.$inferSelect
    >();
    expectTypeOf<typeof pgSchema.webhookDeliveries.$inferSelect>().toEqualTypeOf<
      typeof sqliteSchema.webhookDeliveries.$inferSelect
    >();
    expectTypeOf<
      typeof pgSchema.webhookAttempts.$inferSelect
    >().toEqualTypeOf<sqliteSchema.WebhookAttemptRow>();
  });

  it('inserts the same values', () => {
    expectTypeOf<typeof pgSchema.runs.$inferInsert>().toEqualTypeOf<typeof sqliteSchema.runs.$inferInsert>();
    expectTypeOf<typeof pgSchema.changes.$inferInsert>().toEqualTypeOf<
      typeof sqliteSchema.changes.$inferInsert
    >();
    expectTypeOf<typeof pgSchema.webhookDeliveries.$inferInsert>().toEqualTypeOf<
      typeof sqliteSchema.webhookDeliveries.$inferInsert
    >();
    expectTypeOf<typeof pgSchema.webhookAttempts.$inferInsert>().toEqualTypeOf<
      typeof sqliteSchema.webhookAttempts.$inferInsert
    >();
  });
});
