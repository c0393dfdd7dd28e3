/** The browser's storage, absent where modules are read outside a page (their tests). */
export const storage = (
  globalThis as { localStorage?: { getItem(key: string): string | null; setItem(key: string, value: string): void } }
).localStorage
