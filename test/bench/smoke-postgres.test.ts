import { BENCHES, needsPostgres, smokeBenches } from './smoke.js';

smokeBenches('every bench that starts a PostgreSQL, once at a tiny size', BENCHES.filter(needsPostgres));
