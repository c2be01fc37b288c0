/**
 * Keyboard commands: `[` / `]` step one event back / forward, `n` / `p` jump to the next /
 * previous rejection or restart, space pauses or resumes, `+` / `-` zoom, Escape closes the
 * investigation. Keys typed into a field that takes text are left alone; a focused slider, button
 * or checkbox does not take these keys, so the shortcuts keep working after using the scrubber
 * (whose own arrow keys keep moving it while it has focus).
 */

/** What a key does. */
export type KeyCommand =
  'step-back' | 'step-forward' | 'next-marker' | 'previous-marker' | 'toggle-live' | 'zoom-in' | 'zoom-out' | 'close';

/** The parts of a `KeyboardEvent` that decide. */
export interface KeyInput {
  readonly key: string;
  readonly ctrlKey: boolean;
  readonly metaKey: boolean;
  readonly altKey: boolean;
  /** True when focus is in a field that takes typed text (see {@link takesTypedText}). */
  readonly inFormField: boolean;
}

const COMMANDS: Readonly<Record<string, KeyCommand>> = {
  '[': 'step-back',
  ']': 'step-forward',
  n: 'next-marker',
  p: 'previous-marker',
  ' ': 'toggle-live',
  '+': 'zoom-in',
  '=': 'zoom-in',
  '-': 'zoom-out',
  Escape: 'close',
};

/**
 * The key that runs `command`, as `aria-keyshortcuts` and a button's title name it (the space bar
 * is `Space`; the first key when two do the same).
 */
export function keyOf(command: KeyCommand): string {
  const key = Object.keys(COMMANDS).find((candidate) => COMMANDS[candidate] === command) ?? '';
  return key === ' ' ? 'Space' : key;
}

/** The command for a key press, or undefined (let the browser have it). */
export function commandForKey(input: KeyInput): KeyCommand | undefined {
  if (input.ctrlKey || input.metaKey || input.altKey) return undefined;
  if (input.inFormField && input.key !== 'Escape') return undefined;
  return COMMANDS[input.key];
}

/** Input types that take no typed text: shortcuts pass through them. */
const NON_TEXT_INPUT_TYPES: ReadonlySet<string> = new Set([
  'range',
  'checkbox',
  'radio',
  'button',
  'submit',
  'reset',
  'file',
  'color',
  'image',
]);

/** The parts of a focused element that decide whether it takes typed text. */
export interface FocusedElement {
  /** Upper-case tag name, as `Element.tagName`. */
  readonly tagName: string;
  /** `type` of an input (lower case); ignored for other elements. */
  readonly type?: string | undefined;
  readonly isContentEditable: boolean;
}

/**
 * Whether keys pressed in `el` are typing (a text input, textarea, select or contenteditable), so
 * the shortcuts must leave them alone. A range slider (the scrubber), a button, a checkbox or a
 * file picker takes no text: the shortcuts work while it has focus.
 */
export function takesTypedText(el: FocusedElement): boolean {
  if (el.isContentEditable) return true;
  if (el.tagName === 'TEXTAREA' || el.tagName === 'SELECT') return true;
  return el.tagName === 'INPUT' && !NON_TEXT_INPUT_TYPES.has((el.type ?? 'text').toLowerCase());
}
