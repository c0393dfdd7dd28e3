import type {
  Answer,
  FacetsAnswer,
  FacetValues,
  KindForm,
  KindStatus,
  ProblemDetails,
  SearchPage,
  Suggestion,
} from './api/types.js'
import type { Language } from './i18n/index.js'

/*
 * The service's API as the web app calls it: same origin, JSON, problem details in the page's language. Every
 * call takes an AbortSignal, so an answer that is no longer wanted is dropped by the browser.
 */

export type { Column, FormField, KindForm, KindStatus, Label, Suggestion } from './api/types.js'

/** A row of a kind's goods, read by column name. */
export type Item = Readonly<Record<string, string | number | null>>

/** A kind's page of goods, its rows read by column name. */
export type Page = Omit<SearchPage, 'content'> & { readonly content: readonly Item[] }

/** The facets of a search: each text field's values, read by field name. */
export type Facets = Omit<FacetsAnswer, 'text'> & { readonly text: Readonly<Record<string, FacetValues | undefined>> }

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
      const problem = (await response.json().catch(() => ({}))) as Partial<ProblemDetails>
      throw new ApiError(response.status, problem.detail ?? problem.title ?? `HTTP ${response.status}`)
    }
    return (await response.json()) as T
  }

  kinds(signal: AbortSignal): Promise<{ readonly kinds: readonly KindForm[] }> {
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

  suggest(
    kind: string,
    field: string,
    q: string,
    byPriceList: boolean,
    signal: AbortSignal,
  ): Promise<readonly Suggestion[]> {
    const query = new URLSearchParams({ kind, field, q, byPriceList: String(byPriceList) })
    return this.call<Answer<'suggest'>>(`${NOMENCLATURE}/suggest?${query}`, signal).then((answer) => answer.suggestions)
  }

  status(signal: AbortSignal): Promise<{ readonly kinds: readonly KindStatus[] }> {
    return this.call(`${NOMENCLATURE}/status`, signal)
  }
}

/** True for the rejection of a call that was aborted because a newer one replaced it. */
export const isAbort = (error: unknown): boolean => error instanceof DOMException && error.name === 'AbortError'
