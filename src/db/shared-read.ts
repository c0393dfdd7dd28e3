import { outsideRequest } from './request-work.js'

/**
 * One read shared by concurrent callers, each getting a result of a read that STARTED AFTER it asked: a caller
 * arriving while a read runs waits for the next one (shared in turn by everyone who arrives meanwhile). So a
 * caller that asks after a write committed never gets an answer read before it. The read is nobody's request
 * work (db/request-work.ts): a request given up does not cancel what others wait for.
 */
export class SharedRead<T> {
  readonly #read: () => Promise<T>
  #running: Promise<T> | undefined
  #next: Promise<T> | undefined

  constructor(read: () => Promise<T>) {
    this.#read = read
  }

  current(): Promise<T> {
    if (!this.#running) return this.#start()
    this.#next ??= this.#running.then(
      () => this.#start(),
      () => this.#start(),
    )
    return this.#next
  }

  #start(): Promise<T> {
    this.#next = undefined
    const running = outsideRequest(() => this.#read())
    this.#running = running
    const clear = () => {
      if (this.#running === running) this.#running = undefined
    }
    running.then(clear, clear)
    return running
  }
}
