/** A value computed on first use, which says whether it has been. */
export class Lazy<T> {
  #make: (() => T) | undefined
  #value: T | undefined

  constructor(make: () => T) {
    this.#make = make
  }

  static of<T>(value: T): Lazy<T> {
    const lazy = new Lazy(() => value)
    lazy.get()
    return lazy
  }

  get ready(): boolean {
    return this.#make === undefined
  }

  get(): T {
    if (this.#make) {
      this.#value = this.#make()
      // Dropped once used: what it captured (an earlier version's arrays) can go.
      this.#make = undefined
    }
    return this.#value as T
  }
}
