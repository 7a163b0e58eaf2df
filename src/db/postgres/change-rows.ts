import { changeRowSelectionOf } from '../change-columns.js';
import { changes } from './schema.js';

/** drizzle's selection of `ChangeRow` on PostgreSQL (see change-columns.ts). */
export const changeRowSelection = changeRowSelectionOf(changes);
