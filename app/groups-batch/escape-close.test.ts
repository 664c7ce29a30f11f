import { describe, expect, it } from 'vitest';
import { closesOnEscape, type EscapeEvent } from './escape-close';

const key = (over: Partial<EscapeEvent>): EscapeEvent => ({
  key: 'Escape',
  defaultPrevented: false,
  isComposing: false,
  targetTag: 'BUTTON',
  targetEditable: false,
  insidePanel: false,
  ...over,
});

describe('Escape and the inspector', () => {
  it('closes from inside the panel, from the button that opened it, or with nothing focused', () => {
    expect(closesOnEscape(key({ insidePanel: true }))).toBe(true);
    expect(closesOnEscape(key({}))).toBe(true);
    expect(closesOnEscape(key({ targetTag: 'CANVAS' }))).toBe(true);
    expect(closesOnEscape(key({ targetTag: 'BODY' }))).toBe(true);
    expect(closesOnEscape(key({ targetTag: null }))).toBe(true);
  });

  it('leaves other keys, a key another widget used, an IME composition and fields outside the panel alone', () => {
    expect(closesOnEscape(key({ key: 'Enter' }))).toBe(false);
    expect(closesOnEscape(key({ key: 'Esc' }))).toBe(false);
    expect(closesOnEscape(key({ defaultPrevented: true, insidePanel: true }))).toBe(false);
    expect(closesOnEscape(key({ isComposing: true, insidePanel: true }))).toBe(false);
    expect(closesOnEscape(key({ targetTag: 'SELECT' }))).toBe(false);
    expect(closesOnEscape(key({ targetTag: 'INPUT' }))).toBe(false);
    expect(closesOnEscape(key({ targetTag: 'DIV', targetEditable: true }))).toBe(false);
    expect(closesOnEscape(key({ targetTag: 'INPUT', insidePanel: true }))).toBe(true);
  });
});
