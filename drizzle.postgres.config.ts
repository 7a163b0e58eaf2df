import { defineConfig } from 'drizzle-kit';

// The PostgreSQL store: the same tables as src/db/schema.ts, in PostgreSQL's types.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/postgres/schema.ts',
  out: './migrations/postgres',
});
