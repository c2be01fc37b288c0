/**
 * A stable, well-separated colour per holder, so one agent's bars look alike on every lane and
 * two agents never share a colour. Colours are assigned in order of first appearance in the log
 * (the app registers the loaded log's holders in that order before drawing), so a given log gives
 * the same colours live, in history and in replay. The first {@link HOLDER_PALETTE}`.length`
 * holders get the categorical palette; later ones get hues spaced by the golden angle.
 */

/**
 * Categorical palette, light enough for the dark bar labels and kept away from the saturated
 * red, orange and purple of the end and rejection markers. Neighbours differ in hue by ≥ 40°.
 */
export const HOLDER_PALETTE: readonly string[] = [
  '#8fb8ed', // sky blue
  '#f4b183', // apricot
  '#8fd19e', // green
  '#d7a6e8', // lilac
  '#f2dc6b', // yellow
  '#7fd3d3', // teal
  '#f2a0b4', // pink
  '#c9b38f', // tan
];

/** The golden angle in degrees: consecutive hues spaced by it never bunch up. */
const GOLDEN_ANGLE_DEGREES = 137.508;

/**
 * The colour of the `slot`-th holder (0-based order of first appearance): the palette, then
 * golden-angle hues. Pure.
 *
 * @param slot - Integer ≥ 0.
 * @throws RangeError if `slot` is negative or not an integer.
 */
export function colorOfSlot(slot: number): string {
  if (!Number.isSafeInteger(slot) || slot < 0)
    throw new RangeError(`colorOfSlot: slot must be a non-negative integer, got ${String(slot)}`);
  const fixed = HOLDER_PALETTE[slot];
  if (fixed !== undefined) return fixed;
  const hue = Math.round(((slot - HOLDER_PALETTE.length) * GOLDEN_ANGLE_DEGREES + 15) % 360);
  return `hsl(${hue} 62% 72%)`;
}

/**
 * Holder → colour by order of first appearance. Registering is append-only: a holder keeps its
 * colour for the life of the registry. A holder asked for before it was registered is registered
 * then (next slot), so callers that see holders in log order agree with the app.
 */
export class HolderColors {
  readonly #slots = new Map<string, number>();

  /** Number of holders with a colour. */
  get size(): number {
    return this.#slots.size;
  }

  /**
   * Registers holders in order of first appearance; holders already known keep their colour.
   *
   * @param holderIds - In log order (duplicates are ignored).
   */
  register(holderIds: Iterable<string>): void {
    for (const id of holderIds) if (!this.#slots.has(id)) this.#slots.set(id, this.#slots.size);
  }

  /** The holder's colour (registers it first when unknown). */
  colorOf = (holderId: string): string => {
    this.register([holderId]);
    return colorOfSlot(this.#slots.get(holderId) ?? 0);
  };
}

/**
 * Colours for an investigation's refused holder and floor holder that always differ visibly:
 * each holder's own colour, except that when both come out the same (the same holder with two
 * fences, or a colour collision) the floor takes the next palette colour that differs.
 *
 * @returns `[refusedColor, floorColor]`, never equal.
 */
export function investigationColors(
  colorOf: (holderId: string) => string,
  refusedHolderId: string,
  floorHolderId: string,
): readonly [string, string] {
  const refused = colorOf(refusedHolderId);
  const floor = colorOf(floorHolderId);
  if (floor !== refused) return [refused, floor];
  const start = Math.max(0, HOLDER_PALETTE.indexOf(refused));
  for (let step = 1; step <= HOLDER_PALETTE.length; step += 1) {
    const candidate = colorOfSlot((start + step) % HOLDER_PALETTE.length);
    if (candidate !== refused) return [refused, candidate];
  }
  return [refused, colorOfSlot(HOLDER_PALETTE.length)];
}

/** The page's registry: one log per page, so one assignment. The app registers the log's holders into it. */
export const pageHolderColors = new HolderColors();

/**
 * The colour of a holder on this page (see {@link pageHolderColors}).
 *
 * @returns A CSS colour, readable with dark text.
 */
export function holderColor(holderId: string): string {
  return pageHolderColors.colorOf(holderId);
}
