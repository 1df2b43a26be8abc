/**
 * React's view of the NodeStore: the ids (a new array when a snapshot is loaded, which re-lays the
 * map) and a version that ticks at most every `ms` (for counts and lists, not for the map itself,
 * which the canvas updates on its own).
 */
import { useEffect, useState } from 'react';
import type { NodeStore } from '../map/store.ts';

export function useStoreIds(store: NodeStore): string[] {
  const [ids, setIds] = useState(store.ids);
  useEffect(() => store.subscribe((c) => { if (c === 'all') setIds(store.ids); }), [store]);
  return ids;
}

export function useStoreVersion(store: NodeStore, ms = 500): number {
  const [version, setVersion] = useState(store.version);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = store.subscribe(() => {
      timer ??= setTimeout(() => { timer = undefined; setVersion(store.version); }, ms);
    });
    return () => { off(); clearTimeout(timer); };
  }, [store, ms]);
  return version;
}
