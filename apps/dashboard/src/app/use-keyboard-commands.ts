/**
 * The dashboard's keyboard shortcuts: keys are read on the document (outside fields that take text), mapped
 * to commands by keyboard.ts, and handed to the latest `onCommand`.
 */
import { useEffect, useEffectEvent } from 'react';
import { commandForKey, takesTypedText, type KeyCommand } from './keyboard.js';

/** Calls `onCommand` for every shortcut pressed while the component is mounted (no-op without a document). */
export function useKeyboardCommands(onCommand: (command: KeyCommand) => void): void {
  const handle = useEffectEvent(onCommand);
  useEffect(() => {
    if (typeof document === 'undefined') return undefined;
    const onKey = (event: KeyboardEvent): void => {
      const el = event.target as (HTMLElement & { type?: string }) | null;
      const inFormField = el !== null && takesTypedText(el);
      const command = commandForKey({
        key: event.key,
        ctrlKey: event.ctrlKey,
        metaKey: event.metaKey,
        altKey: event.altKey,
        inFormField,
      });
      if (command === undefined) return;
      event.preventDefault();
      handle(command);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
}
