import type { JsonValue } from './python-json.js';

/**
 * DRF SimpleMetadata's OPTIONS body for the upstream's view: a ListAPIView named
 * `TeamBlockCoworkerList(View)` without a docstring, default renderers and parsers. No `actions`:
 * SimpleMetadata only describes PUT/POST, which a ListAPIView does not allow.
 */
export function defaultOptionsBody(): JsonValue {
  return {
    name: 'Team Block Coworker List',
    description: '',
    renders: ['application/json', 'text/html'],
    parses: ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'],
  };
}
