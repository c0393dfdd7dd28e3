import { storage } from '../storage.js'
import { en } from './en.js'
import { type MessageKey, ru } from './ru.js'

export type Language = 'ru' | 'en'
export const languages: readonly Language[] = ['ru', 'en']

const catalogues: Record<Language, Record<MessageKey, string>> = { ru, en }

/** The text of `key` in `language`, with `{name}` placeholders filled from `values`. */
export function translate(
  language: Language,
  key: MessageKey,
  values: Readonly<Record<string, string | number>> = {},
): string {
  return catalogues[language][key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in values ? String(values[name]) : whole,
  )
}

/** Translates with the page's language; passed down so every text comes from the catalogues. */
export type Translate = (key: MessageKey, values?: Readonly<Record<string, string | number>>) => string

const STORAGE_KEY = 'optics-catalog.language'

/** The language chosen before on this browser, else Russian. */
export function initialLanguage(): Language {
  return storage?.getItem(STORAGE_KEY) === 'en' ? 'en' : 'ru'
}

export function rememberLanguage(language: Language): void {
  storage?.setItem(STORAGE_KEY, language)
}

export type { MessageKey }
