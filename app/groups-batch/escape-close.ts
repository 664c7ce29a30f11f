/**
 * When Escape closes an open inspector (SessionPanel): the panel is a disclosure, not a modal, so
 * focus may be inside it, on the button or cell that opened it, or nowhere. Escape closes it from
 * any of those, but not when another widget already used the key (`defaultPrevented`), while an
 * input method is composing, or while focus is in a form field outside the panel (Escape there
 * belongs to the field: a select's list, a text box). Pure; tested in escape-close.test.ts.
 */

/** What of a keydown event and its target the decision reads. */
export interface EscapeEvent {
  key: string;
  defaultPrevented: boolean;
  isComposing: boolean;
  /** The focused element's tag name (upper case, as the DOM gives it), or null for none. */
  targetTag: string | null;
  targetEditable: boolean;
  /** The target lies inside the inspector. */
  insidePanel: boolean;
}

const FIELDS = new Set(['INPUT', 'SELECT', 'TEXTAREA']);

export function closesOnEscape(e: EscapeEvent): boolean {
  if (e.key !== 'Escape' || e.defaultPrevented || e.isComposing) return false;
  if (e.insidePanel) return true;
  return !(e.targetEditable || (e.targetTag !== null && FIELDS.has(e.targetTag)));
}
