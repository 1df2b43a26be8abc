/**
 * React's view of the NodeStore: the ids (a new array when a snapshot is loaded, which re-lays the
 * map) and a version that ticks at most every `ms` (for counts and lists, not for the map itself,
 * which the canvas updates on its own).
 */
import { useEffect, useState } from 'react';
import type { NodeStore } from '../map/store.ts';

export function useStoreIds(store: NodeStore): string[] {
  const [ids, setIds] = useState(store.ids);
  useEffect(
    () =>
      store.subscribe((c) => {
        if (c === 'all') setIds(store.ids);
      }),
    [store],
  );
  return ids;
}

/** The store's version, re-read at most every `ms` (0: once per animation frame, in step with the map). */
export function useStoreVersion(store: NodeStore, ms = 500): number {
  const [version, setVersion] = useState(store.version);
  useEffect(() => {
    let pending = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let frame = 0;
    const update = () => {
      pending = false;
      setVersion(store.version);
    };
    const off = store.subscribe(() => {
      if (pending) return;
      pending = true;
      if (ms === 0) frame = requestAnimationFrame(update);
      else timer = setTimeout(update, ms);
    });
    return () => {
      off();
      clearTimeout(timer);
      cancelAnimationFrame(frame);
    };
  }, [store, ms]);
  return version;
}
