import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/*
 * The project's documentation as its tests read it: README.md, then every docs/*.md by file name. The README
 * tests run the commands and examples of all of them, in this order, wherever a section lives.
 */

/** The project's root directory, with a trailing slash. */
export const projectRoot = fileURLToPath(new URL('..', import.meta.url))

export interface Document {
  /** The file's path from the project's root, e.g. `docs/api.md`. */
  path: string
  text: string
}

/** README.md, then docs/*.md sorted by name. */
export function documents(): Document[] {
  const docs = readdirSync(new URL('../docs/', import.meta.url))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`)
  return ['README.md', ...docs].map((path) => ({ path, text: readFileSync(`${projectRoot}${path}`, 'utf8') }))
}

export interface ShellBlock {
  /** The document's path from the project's root. */
  path: string
  /** The line of the block's first command in its document (1-based). */
  line: number
  script: string
}

/** The ```sh blocks of every document, in reading order. */
export function shellBlocks(): ShellBlock[] {
  const blocks: ShellBlock[] = []
  for (const { path, text } of documents()) {
    for (const match of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
      const line = text.slice(0, match.index).split('\n').length + 1
      blocks.push({ path, line, script: match[1] ?? '' })
    }
  }
  return blocks
}
