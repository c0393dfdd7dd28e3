import { useEffect, useRef, useState } from 'preact/hooks'
import type { PriceListPage } from '../api/types.js'
import { isAbort } from '../api.js'
import { type Filters, type ListQuery, type PricesApi, TEXT_FILTER_NAMES } from './prices-api.js'

/*
 * What the price list's grid shows and how it is asked for: the filters, the page, its size and the order, and the
 * page of entries the API answers for them. Typing in a filter waits a moment before asking (a newer request
 * aborts the older one); `#/prices?entry=42` narrows the filters to that entry's key, exactly.
 */

const TYPING_DELAY_MS = 150

export type Sort = ListQuery['sort']

/** The entry id a `#/prices?entry=42` location names, if any. */
function entryInLocation(): number | undefined {
  const query = window.location.hash.split('?')[1]
  const id = Number(new URLSearchParams(query ?? '').get('entry'))
  return Number.isSafeInteger(id) && id > 0 ? id : undefined
}

export interface PriceList {
  readonly filters: Filters
  /** Sets the filters; `typed` waits a moment before asking, as while typing. Back to the first page. */
  readonly setFilters: (filters: Filters, typed?: boolean) => void
  readonly page: number
  readonly setPage: (page: number) => void
  readonly size: number
  readonly setSize: (size: number) => void
  readonly sort: Sort
  readonly setSort: (sort: Sort) => void
  /** The last page answered, and the refusal of the last request (a 400 names the filters in error). */
  readonly list: PriceListPage | undefined
  readonly listError: Error | undefined
  /** Asks again for the page; `reloads` counts how often, so what shows the entries can follow. */
  readonly reload: () => void
  readonly reloads: number
}

/**
 * The grid's query and answer. `onEntry` hears the entry a `#/prices?entry=42` location names (at once, and on
 * each change of the location), and `onEntryFailure` why it could not be read.
 */
export function usePriceList(
  prices: PricesApi,
  onEntry: (id: number) => void,
  onEntryFailure: (reason: unknown, id: number) => void,
): PriceList {
  const [query, setQuery] = useState<ListQuery>({ filters: {}, page: 0, size: 20 })
  const [reloads, setReloads] = useState(0)
  const [answer, setAnswer] = useState<{ list?: PriceListPage; error?: Error }>({})
  const delay = useRef(0)
  const { filters, page, size, sort } = query
  const filtersKey = JSON.stringify(filters)

  // The page of the grid: debounced while typing; each run aborts the previous one.
  useEffect(() => {
    const controller = new AbortController()
    const timer = setTimeout(() => {
      prices
        .list(query, controller.signal)
        .then((list) => setAnswer({ list }))
        .catch((reason: unknown) => {
          if (!isAbort(reason)) setAnswer((last) => ({ ...last, error: reason as Error }))
        })
    }, delay.current)
    delay.current = 0
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [prices, filtersKey, page, size, sort?.column, sort?.direction, reloads])

  // `#/prices?entry=42`: the grid narrowed to that entry's key.
  const listeners = useRef({ onEntry, onEntryFailure })
  listeners.current = { onEntry, onEntryFailure }
  useEffect(() => {
    const controller = new AbortController()
    const open = () => {
      const id = entryInLocation()
      if (id === undefined) return
      listeners.current.onEntry(id)
      prices
        .read(id, controller.signal)
        .then(({ entry }) => {
          const { manufacturer, brand, model } = entry
          setQuery((last) => ({ ...last, filters: { manufacturer, brand, model, exact: TEXT_FILTER_NAMES }, page: 0 }))
        })
        .catch((reason: unknown) => {
          if (!isAbort(reason)) listeners.current.onEntryFailure(reason, id)
        })
    }
    open()
    window.addEventListener('hashchange', open)
    return () => {
      window.removeEventListener('hashchange', open)
      controller.abort()
    }
  }, [prices])

  return {
    filters,
    setFilters: (next, typed = false) => {
      if (typed) delay.current = TYPING_DELAY_MS
      setQuery((last) => ({ ...last, filters: next, page: 0 }))
    },
    page,
    setPage: (next) => setQuery((last) => ({ ...last, page: next })),
    size,
    setSize: (next) => setQuery((last) => ({ ...last, size: next, page: 0 })),
    sort,
    setSort: (next) => setQuery((last) => ({ ...last, sort: next, page: 0 })),
    list: answer.list,
    listError: answer.error,
    reload: () => setReloads((count) => count + 1),
    reloads,
  }
}

/**
 * PageUp / PageDown turn pages (`turn` gets +1 or −1), as in the counter search, unless the focus is in a field (or
 * a dialog is open).
 */
export function usePageKeys(turn: (step: 1 | -1) => void): void {
  const latest = useRef(turn)
  latest.current = turn
  useEffect(() => {
    const listener = (event: KeyboardEvent) => {
      if (event.key !== 'PageDown' && event.key !== 'PageUp') return
      const target = event.target as HTMLElement
      if (target.closest('input, select, textarea, dialog')) return
      event.preventDefault()
      latest.current(event.key === 'PageDown' ? 1 : -1)
    }
    document.addEventListener('keydown', listener)
    return () => document.removeEventListener('keydown', listener)
  }, [])
}
