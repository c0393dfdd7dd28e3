import type { Language } from './i18n/index.js'

/*
 * The service's API as the web app calls it: same origin, JSON, problem details in the page's language. Every
 * call takes an AbortSignal, so an answer that is no longer wanted is dropped by the browser.
 */

export interface Label {
  readonly ru: string
  readonly en: string
}

export interface FormField {
  readonly name: string
  readonly label: Label
  readonly input: 'text' | 'number' | 'prescription'
  readonly role?: 'sphere' | 'cylinder' | 'addition' | 'axis'
  readonly step?: number
  readonly min?: number
  readonly max?: number
}

export interface Column {
  readonly name: string
  readonly label: Label
  readonly type: 'text' | 'decimal' | 'integer'
}

export interface KindForm {
  readonly kind: string
  readonly title: Label
  readonly fields: readonly FormField[]
  readonly columns: readonly Column[]
}

export type Item = Readonly<Record<string, string | number | null>>

/** Spring's page envelope, the parts the page reads. */
export interface Page {
  readonly content: readonly Item[]
  readonly totalElements: number
  readonly totalPages: number
  readonly number: number
  readonly size: number
}

export interface Facets {
  readonly total: number
  readonly text: Readonly<Record<string, { values: { value: string; count: number }[]; distinct: number }>>
}

export interface Suggestion {
  readonly value: string
  readonly count: number
}

export interface KindStatus {
  readonly kind: string
  readonly stale: boolean
}

export type SearchBody = Readonly<Record<string, string | boolean | readonly string[]>>

export interface Paging {
  readonly page: number
  readonly size: number
  /** Spring's `sort` parameter (`retailPrice,desc`), or empty for the kind's natural order. */
  readonly sort: string
}

/** An answer outside 2xx; `message` is the problem's detail (or title). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

const NOMENCLATURE = '/api/v2/good/nomenclature'

export class Api {
  /**
   * `language` is the page's language for problem details; `token` the signed-in user's access token, sent as a
   * Bearer token on every call (absent without authentication).
   */
  constructor(
    private readonly language: () => Language,
    private readonly token: () => string | undefined = () => undefined,
  ) {}

  /** The headers every call carries: the language and, once signed in, the Bearer token. */
  headers(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
    const token = this.token()
    return {
      accept: 'application/json',
      'accept-language': this.language(),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...extra,
    }
  }

  private async call<T>(path: string, signal: AbortSignal, body?: unknown): Promise<T> {
    const response = await fetch(path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: this.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal,
    })
    if (!response.ok) {
      const problem = (await response.json().catch(() => ({}))) as { detail?: string; title?: string }
      throw new ApiError(response.status, problem.detail ?? problem.title ?? `HTTP ${response.status}`)
    }
    return (await response.json()) as T
  }

  kinds(signal: AbortSignal): Promise<{ kinds: KindForm[] }> {
    return this.call(`${NOMENCLATURE}/kinds`, signal)
  }

  search(kind: string, body: SearchBody, paging: Paging, signal: AbortSignal): Promise<Page> {
    const query = new URLSearchParams({ page: String(paging.page), size: String(paging.size) })
    if (paging.sort) query.set('sort', paging.sort)
    return this.call(`${NOMENCLATURE}/search/${encodeURIComponent(kind)}?${query}`, signal, body)
  }

  facets(kind: string, body: SearchBody, signal: AbortSignal): Promise<Facets> {
    return this.call(`${NOMENCLATURE}/search/${encodeURIComponent(kind)}/facets`, signal, body)
  }

  suggest(kind: string, field: string, q: string, byPriceList: boolean, signal: AbortSignal): Promise<Suggestion[]> {
    const query = new URLSearchParams({ kind, field, q, byPriceList: String(byPriceList) })
    return this.call<{ suggestions: Suggestion[] }>(`${NOMENCLATURE}/suggest?${query}`, signal).then(
      (answer) => answer.suggestions,
    )
  }

  status(signal: AbortSignal): Promise<{ kinds: KindStatus[] }> {
    return this.call(`${NOMENCLATURE}/status`, signal)
  }
}

/** True for the rejection of a call that was aborted because a newer one replaced it. */
export const isAbort = (error: unknown): boolean => error instanceof DOMException && error.name === 'AbortError'
