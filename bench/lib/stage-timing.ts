import type { Store } from '../../src/db/store.js';

/**
 * The store with its stages' operations timed: each method's awaited wall time is added to
 * `spent` under its name (an async iterator's by the time to its end).
 */
export function timeStages(store: Store, spent: Record<string, number>): Store {
  const started = performance.now();
  const add = (name: string, since: number): void => {
    spent[name] = (spent[name] ?? 0) + performance.now() - since;
  };
  const openStage = store.openStage.bind(store);
  store.openStage = async (runId) => {
    const stage = await openStage(runId);
    return new Proxy(stage, {
      get(target, name, receiver) {
        const value: unknown = Reflect.get(target, name, receiver);
        if (typeof value !== 'function' || typeof name !== 'string') return value;
        return (...args: unknown[]): unknown => {
          const since = performance.now();
          if (name === 'holdCurrent') spent.crawled ??= since - started;
          const out: unknown = Reflect.apply(value, target, args);
          if (out instanceof Promise) return out.finally(() => add(name, since));
          add(name, since);
          return out;
        };
      },
    });
  };
  return store;
}
