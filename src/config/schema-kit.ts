import { z } from 'zod';
import * as values from './values.js';
import { notifyDigest, notifyEventList, notifyTargetList } from '../notify/targets.js';

/**
 * What a setting's `schema` builds its zod schema with: the value parsers and zod itself, in one
 * object handed to each setting of the table. The table and the loader import it as a type alone: a
 * command loads zod only by importing this module (load-config.ts does) to hand it to the loader.
 */
export const schemaKit = { ...values, z, notifyDigest, notifyEventList, notifyTargetList };

export type SchemaKit = typeof schemaKit;
