/**
 * The machine map on one <canvas>: each node is one pixel of an offscreen image at layout size
 * (web/src/map/layout.ts), drawn scaled with smoothing off, so a frame costs one drawImage whatever
 * the node count, and a live change rewrites only its own pixel. Wheel zooms around the pointer, drag
 * pans, hover names the node, click opens it. Frame timings go to `mapStats` (read by the browser
 * bench, test/browser/map-bench.test.ts).
 */
import { useEffect, useMemo, useRef } from 'react';
import { layoutNodes } from './layout.ts';
import { PIXEL, PIXEL_DIM, STATUSES, STATUS_COLOR } from './colors.ts';

const FAILED = STATUSES.indexOf('FAILED');
import type { NodeStore } from './store.ts';
import { mapStats } from './stats.ts';

interface Props {
  store: NodeStore;
  /** Ids of the snapshot the layout is made for (a new array when nodes come or go). */
  ids: string[];
  /** Whether the filters keep node i (read at paint time, so live changes are filtered too); null keeps all. */
  keep: ((i: number) => boolean) | null;
  onHover(index: number | null, clientX: number, clientY: number): void;
  onOpen(id: string): void;
  /** A node to mark (the search found it): ringed and brought into view. */
  focus?: string | null;
  /** The map in words (its text alternative). */
  label: string;
}

export function MapCanvas({ store, ids, keep, onHover, onOpen, focus = null, label }: Props) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const layout = useMemo(() => {
    const l = layoutNodes(ids);
    if (ids.length) mapStats.step('laid out');
    return l;
  }, [ids]);
  const cellIndex = useMemo(() => {
    const m = new Map<number, number>();
    for (let i = 0; i < ids.length; i++) m.set(layout.y[i]! * layout.width + layout.x[i]!, i);
    return m;
  }, [ids, layout]);
  const keepRef = useRef(keep);
  const focusRef = useRef<number | null>(null);
  const handlers = useRef({ onHover, onOpen });
  handlers.current = { onHover, onOpen };

  useEffect(() => {
    const el = canvas.current!;
    const ctx = el.getContext('2d')!;
    const off = document.createElement('canvas');
    off.width = Math.max(1, layout.width);
    off.height = Math.max(1, layout.height);
    const offCtx = off.getContext('2d')!;
    const image = offCtx.createImageData(off.width, off.height);
    const pixels = new Uint32Array(image.data.buffer);
    const view = { scale: 1, ox: 0, oy: 0, fitted: false };
    let hover: number | null = null;
    let frame = 0;
    let imageDirty = true;
    let firstDrawn = false;

    // Failed nodes (the filters keep) are also drawn as marks of at least 3 screen pixels, so that
    // zoomed out, where a node is less than a pixel, a failure is never lost to scaling.
    const failed = new Set<number>();
    const paint = (i: number) => {
      const s = store.status[i]!;
      const kept = !keepRef.current || keepRef.current(i);
      if (s === FAILED && kept) failed.add(i);
      else failed.delete(i);
      pixels[layout.y[i]! * off.width + layout.x[i]!] = kept ? PIXEL[s]! : PIXEL_DIM[s]!;
    };
    const paintAll = () => {
      pixels.fill(0);
      failed.clear();
      for (let i = 0; i < ids.length; i++) paint(i);
      imageDirty = true;
    };

    const fit = () => {
      const r = el.getBoundingClientRect();
      el.width = Math.round(r.width * devicePixelRatio);
      el.height = Math.round(r.height * devicePixelRatio);
      if (!view.fitted && layout.width) {
        view.scale = Math.min(el.width / (layout.width + 2), el.height / (layout.height + 2));
        view.ox = (el.width - layout.width * view.scale) / 2;
        view.oy = 4 * devicePixelRatio;
        view.fitted = true;
      }
    };

    const draw = () => {
      frame = 0;
      const t0 = performance.now();
      if (imageDirty) {
        offCtx.putImageData(image, 0, 0);
        imageDirty = false;
      }
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, el.width, el.height);
      ctx.imageSmoothingEnabled = false;
      ctx.setTransform(view.scale, 0, 0, view.scale, view.ox, view.oy);
      ctx.drawImage(off, 0, 0);
      if (view.scale < 3 && failed.size) {
        const size = 3 / view.scale;
        ctx.fillStyle = STATUS_COLOR.FAILED;
        for (const i of failed) ctx.fillRect(layout.x[i]! + 0.5 - size / 2, layout.y[i]! + 0.5 - size / 2, size, size);
      }
      if (view.scale >= 6) {
        // Zoomed in: a white line between neighbouring cells, so each node reads as its own square.
        ctx.beginPath();
        for (let gx = 1; gx < layout.width; gx++) {
          ctx.moveTo(gx, 0);
          ctx.lineTo(gx, layout.height);
        }
        for (let gy = 1; gy < layout.height; gy++) {
          ctx.moveTo(0, gy);
          ctx.lineTo(layout.width, gy);
        }
        ctx.strokeStyle = '#fff';
        ctx.lineWidth = Math.min(0.15, 1.5 / view.scale);
        ctx.stroke();
      }
      if (view.scale >= 4) {
        ctx.fillStyle = '#495057';
        ctx.font = `${Math.min(1.6, (13 * devicePixelRatio) / view.scale)}px system-ui, sans-serif`;
        for (const l of layout.labels) ctx.fillText(l.text, l.x, l.y + 1.5);
      }
      if (hover !== null) {
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 2 / view.scale;
        ctx.strokeRect(layout.x[hover]! - 0.5, layout.y[hover]! - 0.5, 2, 2);
      }
      const f = focusRef.current;
      if (f !== null) {
        // A ring at least 14 screen pixels wide: found however far the map is zoomed out.
        const r = Math.max(1.5, 7 / view.scale);
        ctx.strokeStyle = '#000';
        ctx.lineWidth = 2.5 / view.scale;
        ctx.beginPath();
        ctx.arc(layout.x[f]! + 0.5, layout.y[f]! + 0.5, r, 0, Math.PI * 2);
        ctx.stroke();
      }
      mapStats.frame(performance.now() - t0);
      mapStats.drawn();
      if (!firstDrawn && ids.length) {
        firstDrawn = true;
        mapStats.fullMap(ids.length);
      }
      el.dataset.counts = JSON.stringify(
        Object.fromEntries(
          store
            .counts()
            .slice(0, STATUSES.length)
            .map((n, k) => [STATUSES[k], n])
            .filter(([, n]) => n),
        ),
      );
    };
    const schedule = () => {
      if (!frame) frame = requestAnimationFrame(draw);
    };

    fit();
    paintAll();
    schedule();
    const unsubscribe = store.subscribe((changed) => {
      if (changed === 'all') paintAll();
      else {
        for (const i of changed) paint(i);
        imageDirty = true;
      }
      schedule();
    });
    const repaint = () => {
      paintAll();
      schedule();
    };
    el.addEventListener('bootorch:mask', repaint);

    const at = (e: MouseEvent): number | null => {
      const r = el.getBoundingClientRect();
      const px = ((e.clientX - r.left) * devicePixelRatio - view.ox) / view.scale;
      const py = ((e.clientY - r.top) * devicePixelRatio - view.oy) / view.scale;
      return cellIndex.get(Math.floor(py) * layout.width + Math.floor(px)) ?? null;
    };
    let drag: { x: number; y: number; moved: boolean } | null = null;
    const onMove = (e: MouseEvent) => {
      if (drag && e.buttons & 1) {
        const dx = e.clientX - drag.x;
        const dy = e.clientY - drag.y;
        if (Math.abs(dx) + Math.abs(dy) > 2) drag.moved = true;
        view.ox += dx * devicePixelRatio;
        view.oy += dy * devicePixelRatio;
        drag.x = e.clientX;
        drag.y = e.clientY;
        schedule();
        return;
      }
      const i = at(e);
      if (i !== hover) {
        hover = i;
        schedule();
      }
      handlers.current.onHover(i, e.clientX, e.clientY);
    };
    const onDown = (e: MouseEvent) => {
      drag = { x: e.clientX, y: e.clientY, moved: false };
    };
    const onUp = (e: MouseEvent) => {
      const wasDrag = drag?.moved;
      drag = null;
      if (wasDrag) return;
      const i = at(e);
      if (i !== null) handlers.current.onOpen(ids[i]!);
    };
    const onLeave = () => {
      hover = null;
      drag = null;
      handlers.current.onHover(null, 0, 0);
      schedule();
    };
    // Keyboard: arrows walk the nodes (left/right in id order, up/down to the chassis row above or
    // below), Enter opens the one under the cursor, + and - zoom.
    const tipAt = (i: number) => {
      const r = el.getBoundingClientRect();
      handlers.current.onHover(
        i,
        r.left + (view.ox + (layout.x[i]! + 0.5) * view.scale) / devicePixelRatio,
        r.top + (view.oy + (layout.y[i]! + 0.5) * view.scale) / devicePixelRatio,
      );
    };
    const onKey = (e: KeyboardEvent) => {
      if (!ids.length) return;
      const cur = hover ?? focusRef.current ?? 0;
      let next: number | null = null;
      if (e.key === 'ArrowRight') next = Math.min(ids.length - 1, cur + 1);
      else if (e.key === 'ArrowLeft') next = Math.max(0, cur - 1);
      else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
        const dy = e.key === 'ArrowUp' ? -2 : 2;
        next = cellIndex.get((layout.y[cur]! + dy) * layout.width + layout.x[cur]!) ?? cur;
      } else if (e.key === 'Enter' && hover !== null) handlers.current.onOpen(ids[hover]!);
      else if (e.key === '+' || e.key === '=' || e.key === '-') {
        const k = e.key === '-' ? 1 / 1.5 : 1.5;
        view.ox = el.width / 2 - (el.width / 2 - view.ox) * k;
        view.oy = el.height / 2 - (el.height / 2 - view.oy) * k;
        view.scale *= k;
        schedule();
      } else return;
      e.preventDefault();
      if (next !== null) {
        hover = next;
        tipAt(next);
        schedule();
      }
    };
    const onBlur = () => {
      hover = null;
      handlers.current.onHover(null, 0, 0);
      schedule();
    };
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const r = el.getBoundingClientRect();
      const mx = (e.clientX - r.left) * devicePixelRatio;
      const my = (e.clientY - r.top) * devicePixelRatio;
      const k = Math.exp(-e.deltaY * 0.0015);
      view.ox = mx - (mx - view.ox) * k;
      view.oy = my - (my - view.oy) * k;
      view.scale *= k;
      schedule();
    };
    // Where a node is on screen (client pixels), for the browser tests to point at it.
    mapStats.locate = (id) => {
      const i = store.index.get(id);
      if (i === undefined) return null;
      const r = el.getBoundingClientRect();
      return {
        x: r.left + (view.ox + (layout.x[i]! + 0.5) * view.scale) / devicePixelRatio,
        y: r.top + (view.oy + (layout.y[i]! + 0.5) * view.scale) / devicePixelRatio,
      };
    };
    const resize = new ResizeObserver(() => {
      fit();
      schedule();
    });
    resize.observe(el);
    el.addEventListener('mousemove', onMove);
    el.addEventListener('mousedown', onDown);
    el.addEventListener('mouseup', onUp);
    el.addEventListener('mouseleave', onLeave);
    el.addEventListener('wheel', onWheel, { passive: false });
    el.addEventListener('keydown', onKey);
    el.addEventListener('blur', onBlur);
    const onFocusNode = () => {
      const f = focusRef.current;
      if (f === null) return schedule();
      // Bring it into view when it is off screen.
      const px = view.ox + (layout.x[f]! + 0.5) * view.scale;
      const py = view.oy + (layout.y[f]! + 0.5) * view.scale;
      if (px < 0 || py < 0 || px > el.width || py > el.height) {
        view.ox = el.width / 2 - (layout.x[f]! + 0.5) * view.scale;
        view.oy = el.height / 2 - (layout.y[f]! + 0.5) * view.scale;
      }
      schedule();
    };
    el.addEventListener('bootorch:focus', onFocusNode);
    return () => {
      el.removeEventListener('keydown', onKey);
      el.removeEventListener('blur', onBlur);
      el.removeEventListener('bootorch:focus', onFocusNode);
      mapStats.locate = undefined;
      unsubscribe();
      resize.disconnect();
      if (frame) cancelAnimationFrame(frame);
      el.removeEventListener('bootorch:mask', repaint);
      el.removeEventListener('mousemove', onMove);
      el.removeEventListener('mousedown', onDown);
      el.removeEventListener('mouseup', onUp);
      el.removeEventListener('mouseleave', onLeave);
      el.removeEventListener('wheel', onWheel);
    };
  }, [store, ids, layout, cellIndex]);

  useEffect(() => {
    keepRef.current = keep;
    canvas.current?.dispatchEvent(new Event('bootorch:mask'));
  }, [keep]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new layout (ids) moves the focused node too
  useEffect(() => {
    focusRef.current = focus === null ? null : (store.index.get(focus) ?? null);
    canvas.current?.dispatchEvent(new Event('bootorch:focus'));
  }, [focus, store, ids]);

  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the canvas takes the keyboard (arrows, Enter, + and -)
    <canvas
      ref={canvas}
      className="map"
      data-testid="machine-map"
      data-nodes={ids.length}
      data-focus={focus ?? ''}
      role="img"
      aria-label={label}
      tabIndex={0}
    />
  );
}
