import type { DisabledNotifyTarget } from '../db/store.js';
import { keyedTargets, type NotifyTarget, type TargetKeys } from './targets.js';

/** A disabled target as people are shown it: never its URL, and the command that enables it again. */
export interface DisabledTargetView {
  targetId: string;
  /** The configured target's masked label, or a word that it is no longer configured. */
  label: string;
  disabledAt: string;
  reason: string | null;
  /** `coworker-mirror notify enable <id>` */
  enableCommand: string;
}

export const ENABLE_COMMAND = 'coworker-mirror notify enable';

/**
 * The disabled targets the store names, labelled by NOTIFY_URLS where it still names them (each
 * configured target by its id in that store: `keys` are the store's).
 */
export function disabledTargetViews(
  disabled: readonly DisabledNotifyTarget[],
  configured: readonly NotifyTarget[] | null,
  keys: TargetKeys,
): DisabledTargetView[] {
  const labels = new Map(keyedTargets(configured, keys).map((t) => [t.id, t.label]));
  return disabled.map((d) => ({
    ...d,
    label: labels.get(d.targetId) ?? `target ${d.targetId} (no longer in NOTIFY_URLS)`,
    enableCommand: `${ENABLE_COMMAND} ${d.targetId}`,
  }));
}

/** One line per disabled target, for `deliveries`: what, since when, why, and how to undo it. */
export function disabledTargetLine(view: DisabledTargetView): string {
  const reason = view.reason === null ? '' : `: ${view.reason}`;
  return (
    `notification target ${view.label} (id ${view.targetId}) disabled since ${view.disabledAt}${reason};` +
    ` enable it again: ${view.enableCommand}`
  );
}
