import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { Api, isAbort, type KindForm } from './api.js'
import { type SignIn, useSignIn } from './auth/use-sign-in.js'
import { BulkChangeScreen } from './desk/bulk-wizard.js'
import { ChangeLogScreen } from './desk/change-log.js'
import { PriceListScreen } from './desk/price-list.js'
import { TransferScreen } from './desk/transfer.js'
import {
  initialLanguage,
  type Language,
  languages,
  type MessageKey,
  rememberLanguage,
  type Translate,
  translate,
} from './i18n/index.js'
import { SearchScreen } from './search/search-screen.js'
import { SessionContext } from './session.js'

const languageNames: Record<Language, string> = { ru: 'Русский', en: 'English' }

/** The page's screens, one per hash route (`#/prices`), so a link or a reload opens the same screen. */
const screens = [
  { route: '#/', label: 'counterSearch' },
  { route: '#/prices', label: 'priceList' },
  { route: '#/prices/bulk', label: 'bulkChange' },
  { route: '#/prices/changes', label: 'changeLog' },
  { route: '#/prices/transfer', label: 'uploadDownload' },
] as const satisfies readonly { route: string; label: MessageKey }[]

type Route = (typeof screens)[number]['route']

/** The screen the location's hash names (its path part, before any `?`), the counter search otherwise. */
function currentRoute(): Route {
  const path = window.location.hash.split('?')[0] || '#/'
  return screens.find((screen) => screen.route === path)?.route ?? '#/'
}

/**
 * The page: a header with the language switch (and, signed in, the user with a sign-out), and the counter search
 * drawn from the kinds' forms.
 */
export function App() {
  const [language, setLanguage] = useState<Language>(initialLanguage)
  const [forms, setForms] = useState<readonly KindForm[] | undefined>()
  const [loadError, setLoadError] = useState<string | undefined>()
  const [route, setRoute] = useState<Route>(currentRoute)
  const signIn = useSignIn()
  const session = signIn.session
  const languageRef = useRef(language)
  languageRef.current = language
  const api = useMemo(() => new Api(() => languageRef.current, signIn.token), [signIn.token])
  const t: Translate = (key, values) => translate(language, key, values)

  useEffect(() => {
    document.documentElement.lang = language
    document.title = translate(language, 'appTitle')
    rememberLanguage(language)
  }, [language])

  useEffect(() => {
    const follow = () => setRoute(currentRoute())
    window.addEventListener('hashchange', follow)
    return () => window.removeEventListener('hashchange', follow)
  }, [])

  // The provider's round trip may have brought the screen's hash back without a hashchange.
  useEffect(() => {
    if (signIn.ready) setRoute(currentRoute())
  }, [signIn.ready])

  useEffect(() => {
    if (!signIn.ready) return
    const controller = new AbortController()
    api
      .kinds(controller.signal)
      .then((answer) => setForms(answer.kinds))
      .catch((error: unknown) => {
        if (!isAbort(error)) setLoadError(String((error as Error).message ?? error))
      })
    return () => controller.abort()
  }, [api, signIn.ready])

  return (
    <SessionContext.Provider value={session}>
      <header class="top">
        <h1>{t('appTitle')}</h1>
        <nav aria-label={t('navigation')}>
          {screens.map((screen) => (
            <a key={screen.route} href={screen.route} aria-current={screen.route === route ? 'page' : undefined}>
              {t(screen.label)}
            </a>
          ))}
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
        <SessionBar signIn={signIn} t={t} />
      </header>
      <main>
        {signIn.state.status === 'open' && signIn.state.demo ? (
          <p role="note" class="banner demo">
            {t('demoMode')}
          </p>
        ) : null}
        {signIn.state.status === 'signed-in' && signIn.state.expired ? (
          <p role="alert" class="banner">
            {t('sessionExpired')}{' '}
            <button type="button" onClick={signIn.signIn}>
              {t('signInAgain')}
            </button>
          </p>
        ) : null}
        {!signIn.ready ? (
          <SignInScreen signIn={signIn} t={t} />
        ) : loadError ? (
          <p role="alert">{t('loadFailed', { reason: loadError })}</p>
        ) : route === '#/prices' ? (
          <PriceListScreen api={api} language={language} t={t} />
        ) : route === '#/prices/bulk' ? (
          <BulkChangeScreen api={api} t={t} />
        ) : route === '#/prices/changes' ? (
          <ChangeLogScreen api={api} language={language} t={t} />
        ) : route === '#/prices/transfer' ? (
          <TransferScreen api={api} language={language} t={t} />
        ) : forms ? (
          <SearchScreen api={api} forms={forms} language={language} t={t} />
        ) : (
          <p>{t('loading')}</p>
        )}
      </main>
    </SessionContext.Provider>
  )
}

/** The signed-in user's name, a read-only mark when the token lacks `prices:write`, and the sign-out. */
function SessionBar({ signIn, t }: { readonly signIn: SignIn; readonly t: Translate }) {
  if (signIn.state.status !== 'signed-in') return null
  const { user, canWrite } = signIn.session
  return (
    <div class="session">
      <span class="user">{t('signedInAs', { name: user ?? '?' })}</span>
      {canWrite ? null : (
        <span class="read-only" title={t('readOnlyHint')}>
          {t('readOnly')}
        </span>
      )}
      <button type="button" onClick={signIn.signOut}>
        {t('signOut')}
      </button>
    </div>
  )
}

/** What shows while the page signs in, after a sign-out, or when the sign-in failed or is not configured. */
function SignInScreen({ signIn, t }: { readonly signIn: SignIn; readonly t: Translate }) {
  const { state } = signIn
  if (state.status === 'unavailable') return <p role="alert">{t('signInUnavailable')}</p>
  if (state.status !== 'signed-out' && state.status !== 'failed') return <p>{t('signingIn')}</p>
  return (
    <section class="sign-in">
      {state.status === 'failed' ? (
        <p role="alert">{t('signInFailed', { reason: state.reason })}</p>
      ) : (
        <p>{t('signedOut')}</p>
      )}
      <button type="button" onClick={signIn.signIn}>
        {t('signIn')}
      </button>
    </section>
  )
}
