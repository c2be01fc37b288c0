/**
 * Work for panels off screen: whether an element is near the viewport, and a value held while it
 * is not, so a panel below the fold is not redrawn for nobody at every update.
 */
import { useEffect, useState, type RefObject } from 'react';

/**
 * Whether `ref`'s element is on screen or within `marginPx` of it (above, below or beside), kept
 * up to date with an IntersectionObserver on the viewport.
 *
 * @param ref - The element to watch.
 * @param marginPx - How far outside the viewport still counts as near, CSS pixels (≥ 0).
 * @returns True until the first observation arrives (and in server rendering, or without
 *   IntersectionObserver), so a panel always renders in full first.
 */
export function useNearViewport(ref: RefObject<Element | null>, marginPx: number): boolean {
  const [near, setNear] = useState(true);
  useEffect(() => {
    const el = ref.current;
    if (el === null || typeof IntersectionObserver === 'undefined') return undefined;
    const observer = new IntersectionObserver(
      (entries) => {
        const entry = entries[entries.length - 1];
        if (entry !== undefined) setNear(entry.isIntersecting);
      },
      { rootMargin: `${marginPx}px` },
    );
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref, marginPx]);
  return near;
}

/**
 * `value` while `near`; otherwise the value of the last render that was near. A panel that is
 * not near the viewport keeps its last drawing; the render that finds it near again (the
 * observer's margin ahead of it scrolling into view) draws the current value.
 *
 * @param value - What the panel would draw now.
 * @param near - From {@link useNearViewport}.
 * @returns `value`, or the value last returned while near.
 */
export function useHeldWhileAway<T>(value: T, near: boolean): T {
  const [held, setHeld] = useState(value);
  // Storing what an earlier render drew, React's documented way: a render-phase update, only when it changed.
  if (near && held !== value) setHeld(value);
  return near ? value : held;
}
