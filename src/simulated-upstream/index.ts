export {
  startSimulatedUpstream,
  type RecordedRequest,
  type SimulatedUpstream,
  type SimulatedUpstreamOptions,
} from './server.js';
export {
  SimulatedData,
  type AddPosition,
  type FieldEdit,
  type MutationDescription,
  type PlacedEntry,
  type SimulatedEntry,
} from './data.js';
export {
  faultSettingsSchema,
  type FaultEvent,
  type FaultName,
  type FaultSettings,
  type FaultSettingsInput,
  type FaultSwitches,
} from './faults.js';
export {
  DEFAULT_DUP_RATE,
  DEFAULT_MEDIA_BASE_URL,
  EDITABLE_FIELDS,
  generateCoworkers,
  type EditableField,
  type GenerateOptions,
} from './generate.js';
export { Rng } from './prng.js';
export {
  startSimulatedMediaHost,
  type MediaHostRequest,
  type SimulatedMediaHost,
  type SimulatedMediaHostOptions,
} from './media-host.js';
export { mediaFileFor, paddedMp4, type MediaFile } from './media-bytes.js';
export { startSimulatedSite, type SimulatedSite, type SimulatedSiteOptions } from './simulated-site.js';
