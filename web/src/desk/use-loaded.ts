import { useEffect, useState } from 'preact/hooks'
import { isAbort } from '../api.js'

/**
 * What `load` answers, loaded again whenever one of `inputs` changes; a newer load aborts the older one, so an
 * answer never arrives out of order. The last answer stays shown while the next loads, and a failure keeps it too
 * (its message in `error` until a load succeeds).
 */
export function useLoaded<T>(
  load: (signal: AbortSignal) => Promise<T>,
  inputs: readonly unknown[],
): { readonly value: T | undefined; readonly error: string | undefined } {
  const [value, setValue] = useState<T | undefined>()
  const [error, setError] = useState<string | undefined>()
  useEffect(() => {
    const controller = new AbortController()
    load(controller.signal)
      .then((answer) => {
        setValue(() => answer)
        setError(undefined)
      })
      .catch((reason: unknown) => {
        if (!isAbort(reason)) setError((reason as Error).message)
      })
    return () => controller.abort()
  }, inputs)
  return { value, error }
}
