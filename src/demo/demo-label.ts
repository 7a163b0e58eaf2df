/**
 * What the demo's runs record as their upstream. Its simulated upstream listens on a port that may
 * change between starts; this label does not, so a restarted demo stays bound to its own database,
 * and `/readyz` can say it is serving the demo.
 */
export const DEMO_UPSTREAM_LABEL = 'demo: the built-in simulated upstream';

/** Where the demo keeps its history unless told otherwise: never in the real mirror's database. */
export const DEMO_DATABASE_PATH = './data/demo.db';
