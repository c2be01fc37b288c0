import { describe, expect, it } from 'vitest';
import { commandForKey } from './keyboard.js';

const press = (key: string, extra: Partial<{ ctrlKey: boolean; inFormField: boolean }> = {}) =>
  commandForKey({ key, ctrlKey: false, metaKey: false, altKey: false, inFormField: false, ...extra });

describe('commandForKey', () => {
  it.each([
    ['[', 'step-back'],
    [']', 'step-forward'],
    ['n', 'next-marker'],
    ['p', 'previous-marker'],
    [' ', 'toggle-live'],
    ['+', 'zoom-in'],
    ['-', 'zoom-out'],
    ['Escape', 'close'],
    ['x', undefined],
  ])('maps %j to %s', (key, command) => {
    expect(press(key)).toBe(command);
  });

  it('leaves keys typed into a form field alone, except Escape', () => {
    expect(press('n', { inFormField: true })).toBeUndefined();
    expect(press('Escape', { inFormField: true })).toBe('close');
  });

  it('leaves browser shortcuts alone', () => {
    expect(press('[', { ctrlKey: true })).toBeUndefined();
  });
});
