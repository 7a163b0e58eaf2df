import { defineConfig } from 'drizzle-kit';

// The default store's drizzle-kit config, found with no flag: SQLite. PostgreSQL's is
// drizzle.postgres.config.ts beside it. Its journal predates the PostgreSQL store and is kept as it was, so
// databases created before the move keep their migration history.
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/schema.ts',
  out: './migrations/sqlite',
});
