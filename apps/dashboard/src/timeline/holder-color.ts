/**
 * A stable colour per holder, so one agent's bars look alike on every lane.
 */

/**
 * An HSL colour derived from the holder id (FNV-1a hash → hue; fixed saturation and lightness,
 * readable with dark text).
 */
export function holderColor(holderId: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < holderId.length; i += 1) {
    hash ^= holderId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `hsl(${hash % 360} 62% 68%)`;
}
