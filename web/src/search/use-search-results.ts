import { useEffect, useRef, useState } from 'preact/hooks'
import { type Api, type Facets, isAbort, type KindForm, type Page, type SearchBody } from '../api.js'
import { checkNumber } from './prescription.js'
import type { KindQuery } from './search-location.js'

/*
 * What the counter search shows for a kind's query: the page of results (asked after a short wait while typing;
 * each search aborts the one before it, so a slow, stale answer never overwrites a newer one), the drop-downs'
 * values under the filters, and which kinds' prices are being refreshed.
 */

const FACETS_DELAY_MS = 250
const STATUS_POLL_MS = 5_000

/**
 * The search body of a query: `byPriceList`, every non-blank field and `exact` (those picked from a list), or
 * undefined while a field is invalid.
 */
export function searchBody(form: KindForm, query: KindQuery, byPriceList: boolean): SearchBody | undefined {
  const body: Record<string, string | boolean | string[]> = { byPriceList }
  const exact: string[] = []
  for (const field of form.fields) {
    const raw = query.values[field.name] ?? ''
    if (field.input === 'text') {
      if (raw.trim() === '') continue
      body[field.name] = raw
      if (query.exact.includes(field.name)) exact.push(field.name)
      continue
    }
    const check = checkNumber(field, raw)
    if (!check.ok) return undefined
    if (check.value !== '') body[field.name] = check.value
  }
  if (exact.length > 0) body.exact = exact
  return body
}

export interface SearchResults {
  readonly page: Page | undefined
  readonly facets: Facets | undefined
  readonly error: string | undefined
  /** Forgets the answers shown and asks again (another kind, or the query a followed link names, the same or not). */
  readonly clear: () => void
  /** The wait before the next search (ms): set while typing, spent by that search. */
  readonly delay: { current: number }
}

export function useSearchResults(
  api: Api,
  kind: string,
  body: SearchBody | undefined,
  query: KindQuery,
): SearchResults {
  const [page, setPage] = useState<Page | undefined>()
  const [facets, setFacets] = useState<Facets | undefined>()
  const [error, setError] = useState<string | undefined>()
  // Bumped by `clear`: the answers are asked again even when the query cleared to is the one shown.
  const [round, setRound] = useState(0)
  const delay = useRef(0)
  const bodyKey = body ? JSON.stringify(body) : undefined

  // The page of results: debounced while typing; each run aborts the previous one.
  useEffect(() => {
    if (!body) return
    const controller = new AbortController()
    const timer = setTimeout(() => {
      api
        .search(kind, body, query, controller.signal)
        .then((answer) => {
          setPage(answer)
          setError(undefined)
        })
        .catch((reason: unknown) => {
          if (!isAbort(reason)) setError((reason as Error).message)
        })
    }, delay.current)
    delay.current = 0
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [kind, bodyKey, query.page, query.size, query.sort, round])

  // The drop-down values under the current filters.
  useEffect(() => {
    if (!body) return
    const controller = new AbortController()
    const timer = setTimeout(() => {
      api
        .facets(kind, body, controller.signal)
        .then(setFacets)
        .catch(() => {})
    }, FACETS_DELAY_MS)
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [kind, bodyKey, round])

  return {
    page,
    facets,
    error,
    clear: () => {
      setPage(undefined)
      setFacets(undefined)
      setRound((current) => current + 1)
    },
    delay,
  }
}

/** The kinds whose prices are being refreshed (the matview is stale): polled while the page is open. */
export function useStaleKinds(api: Api): ReadonlySet<string> {
  const [staleKinds, setStaleKinds] = useState<ReadonlySet<string>>(new Set())
  useEffect(() => {
    const controller = new AbortController()
    const poll = () =>
      api
        .status(controller.signal)
        .then((status) => setStaleKinds(new Set(status.kinds.filter((k) => k.stale).map((k) => k.kind))))
        .catch(() => {})
    poll()
    const timer = setInterval(poll, STATUS_POLL_MS)
    return () => {
      clearInterval(timer)
      controller.abort()
    }
  }, [api])
  return staleKinds
}
