/**
 * The width of an element, kept up to date with a ResizeObserver.
 */
import { useLayoutEffect, useState, type RefObject } from 'react';

/**
 * @param ref - The element to measure.
 * @param initialPx - Width before the first measurement (and in server rendering).
 * @returns Its content width, CSS pixels.
 */
export function useWidth(ref: RefObject<HTMLElement | null>, initialPx: number): number {
  const [width, setWidth] = useState(initialPx);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el === null || typeof ResizeObserver === 'undefined') return undefined;
    const observer = new ResizeObserver((entries) => {
      const w = entries[0]?.contentRect.width;
      if (w !== undefined && w > 0) setWidth(Math.floor(w));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}
