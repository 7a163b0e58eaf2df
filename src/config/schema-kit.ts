import { z } from 'zod';
import * as values from './values.js';
import { notifyDigest, notifyEventList, notifyTargetList } from '../notify/targets.js';

/**
 * What a setting's `schema` builds its zod schema with: the value parsers and zod itself, in one
 * object handed to each setting of the table. The table imports it as a type alone, so only the
 * module that builds schemas (settings.ts) loads zod, and a read command never does.
 */
export const schemaKit = { ...values, z, notifyDigest, notifyEventList, notifyTargetList };

export type SchemaKit = typeof schemaKit;
