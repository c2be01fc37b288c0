/**
 * Keyboard commands: `[` / `]` step one event back / forward, `n` / `p` jump to the next /
 * previous rejection or restart, space pauses or resumes, `+` / `-` zoom, Escape closes the
 * investigation. Keys typed into a form field are left alone.
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
  /** True when focus is in an input, textarea, select or contenteditable element. */
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

/** The command for a key press, or undefined (let the browser have it). */
export function commandForKey(input: KeyInput): KeyCommand | undefined {
  if (input.ctrlKey || input.metaKey || input.altKey) return undefined;
  if (input.inFormField && input.key !== 'Escape') return undefined;
  return COMMANDS[input.key];
}
