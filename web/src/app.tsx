import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { Api, isAbort, type KindForm } from './api.js'
import {
  initialLanguage,
  type Language,
  languages,
  type MessageKey,
  rememberLanguage,
  translate,
} from './i18n/index.js'
import { SearchScreen } from './search/search-screen.js'

/** Translates with the page's language; passed down so every text comes from the catalogues. */
export type Translate = (key: MessageKey, values?: Record<string, string | number>) => string

const languageNames: Record<Language, string> = { ru: 'Русский', en: 'English' }

/** The page: a header with the language switch, and the counter search drawn from the kinds' forms. */
export function App() {
  const [language, setLanguage] = useState<Language>(initialLanguage)
  const [forms, setForms] = useState<readonly KindForm[] | undefined>()
  const [loadError, setLoadError] = useState<string | undefined>()
  const languageRef = useRef(language)
  languageRef.current = language
  const api = useMemo(() => new Api(() => languageRef.current), [])
  const t: Translate = (key, values) => translate(language, key, values)

  useEffect(() => {
    document.documentElement.lang = language
    document.title = translate(language, 'appTitle')
    rememberLanguage(language)
  }, [language])

  useEffect(() => {
    const controller = new AbortController()
    api
      .kinds(controller.signal)
      .then((answer) => setForms(answer.kinds))
      .catch((error: unknown) => {
        if (!isAbort(error)) setLoadError(String((error as Error).message ?? error))
      })
    return () => controller.abort()
  }, [api])

  return (
    <>
      <header class="top">
        <h1>{t('appTitle')}</h1>
        <nav aria-label={t('navigation')}>
          <a href="#/" aria-current="page">
            {t('counterSearch')}
          </a>
        </nav>
        <label class="language">
          {t('language')}{' '}
          <select value={language} onChange={(event) => setLanguage(event.currentTarget.value as Language)}>
            {languages.map((code) => (
              <option key={code} value={code} lang={code}>
                {languageNames[code]}
              </option>
            ))}
          </select>
        </label>
      </header>
      <main>
        {loadError ? (
          <p role="alert">{t('loadFailed', { reason: loadError })}</p>
        ) : forms ? (
          <SearchScreen api={api} forms={forms} language={language} t={t} />
        ) : (
          <p>{t('loading')}</p>
        )}
      </main>
    </>
  )
}
