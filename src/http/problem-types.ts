/*
 * The kinds of refusal the service answers, each with a stable code and `type` URI, so a client tells them apart
 * without reading the text (a duplicate key, a change already reverted and a price list changed during a bulk
 * change are all 409s). The list is the documentation too: the OpenAPI document's Problem schema enumerates it.
 */

export const problemTypes = {
  'invalid-request':
    'A value of the request is missing, of the wrong type, out of range or not allowed (400, `errors` names the fields)',
  'malformed-body':
    'The body is not valid JSON or not valid UTF-8 (`errors` names the fields), or its length does not match Content-Length (400)',
  'malformed-request':
    'The URL, path or query string, does not percent-decode to UTF-8, or the request is not valid HTTP (400)',
  'value-out-of-range': 'A value the database cannot hold (400)',
  unauthorized: 'No valid Bearer token (401, with WWW-Authenticate)',
  forbidden: 'The token lacks the role a write needs (403)',
  'not-found': 'No resource at this path (404)',
  'entry-not-found': 'No such price-list entry or change (404)',
  'method-not-allowed': 'The path does not answer this method (405, Allow lists those it does)',
  'request-timeout': 'The request did not arrive in time (408)',
  'duplicate-key': 'Another entry has the same manufacturer, brand and model (409, `existingId`)',
  'already-reverted': 'The change was already reverted (409, `revertedBy`)',
  'revert-conflicts': 'No entry of the change can be restored: every one was changed since (409, `conflicts`)',
  'changed-during-bulk-change': 'The price list changed while the bulk change ran; nothing was changed (409)',
  'scheduled-change-finished': 'The scheduled price change already ran, failed or was cancelled (409, `state`)',
  'confirm-deletes':
    'A replace from a file that looks like a filtered export deletes entries of other brands or manufacturers: repeat with confirmDeletes=`deleteCount` (409)',
  'upload-conflicts':
    'Rows of an upsert carry a version of an entry changed since the export; nothing was written: repeat with overwriteConflicts=`conflictCount` or skipConflicts=true (409, `check.conflicts`)',
  'concurrent-change': 'A concurrent change conflicted with this one; nothing was changed (409)',
  'idempotency-key-in-use':
    'A request with this Idempotency-Key is still running; retry once it has finished to get its outcome (409)',
  'stale-etag': 'If-Match names a version that is no longer current (412)',
  'body-too-large': 'The body is larger than the limit (413)',
  'unsupported-media-type': 'The body is not of a media type the route reads (415, Accept lists them)',
  'bulk-change-rejected': 'Some selected entry cannot take the new price; nothing was changed (422, `entries`)',
  'import-rejected': 'The uploaded file has problems; nothing was written (422, `problems`)',
  'idempotency-key-reused':
    'The Idempotency-Key was used for another request (method, path or body); nothing was done (422)',
  'too-many-requests': 'Over the rate limit (429, Retry-After)',
  'headers-too-large': 'The request headers are too large (431)',
  'internal-error': 'A fault of the service, logged under `requestId` (500)',
  'database-unavailable': 'The database is unreachable (503, Retry-After)',
  'identity-provider-unavailable': "The identity provider's keys cannot be fetched (503, Retry-After)",
  'service-timeout': 'The request outlived REQUEST_TIMEOUT_MS (503, Retry-After)',
  'job-lost': 'The instance running a job stopped before the job finished; nothing of it was written (503, in a job)',
} as const satisfies Record<string, string>

export type ProblemCode = keyof typeof problemTypes

export const PROBLEM_CODES = Object.keys(problemTypes) as ProblemCode[]

/** The `type` URI of a code: a stable name to compare, not a page to fetch. */
export const problemTypeUri = (code: ProblemCode): string => `urn:optics-catalog:problem:${code}`

/** The code of a refusal raised without one: the general kind of its status. */
export function defaultProblemCode(status: number): ProblemCode {
  switch (status) {
    case 400:
      return 'invalid-request'
    case 401:
      return 'unauthorized'
    case 403:
      return 'forbidden'
    case 404:
      return 'not-found'
    case 405:
      return 'method-not-allowed'
    case 408:
      return 'request-timeout'
    case 409:
      return 'concurrent-change'
    case 412:
      return 'stale-etag'
    case 413:
      return 'body-too-large'
    case 415:
      return 'unsupported-media-type'
    case 429:
      return 'too-many-requests'
    case 431:
      return 'headers-too-large'
    case 503:
      return 'database-unavailable'
    default:
      return status >= 500 ? 'internal-error' : 'invalid-request'
  }
}
