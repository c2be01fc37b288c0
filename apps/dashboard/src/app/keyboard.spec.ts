import { describe, expect, it } from 'vitest';
import { commandForKey, takesTypedText } from './keyboard.js';

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

describe('takesTypedText', () => {
  it.each([
    [{ tagName: 'INPUT', type: 'text' }, true],
    [{ tagName: 'INPUT', type: 'search' }, true],
    [{ tagName: 'INPUT', type: 'password' }, true],
    [{ tagName: 'INPUT' }, true],
    [{ tagName: 'TEXTAREA' }, true],
    [{ tagName: 'SELECT' }, true],
    [{ tagName: 'INPUT', type: 'range' }, false],
    [{ tagName: 'INPUT', type: 'checkbox' }, false],
    [{ tagName: 'INPUT', type: 'file' }, false],
    [{ tagName: 'BUTTON' }, false],
    [{ tagName: 'CANVAS' }, false],
  ])('%j takes typed text: %s', (el, expected) => {
    expect(takesTypedText({ isContentEditable: false, ...el })).toBe(expected);
  });

  it('counts a contenteditable element as typing', () => {
    expect(takesTypedText({ tagName: 'DIV', isContentEditable: true })).toBe(true);
  });
});
