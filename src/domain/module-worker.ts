import { Worker, type WorkerOptions } from 'node:worker_threads'

/*
 * A worker thread running one module of the project, as built (`dist/…/name.js`) or, run from the sources as the
 * tests and `npm run dev` are, as TypeScript through tsx: a worker thread gets no module hooks of its own, so it
 * registers tsx's before it loads the module.
 */

/** Starts `./<name>` beside the module whose `import.meta.url` is `from`, with `options` (workerData, transfers…). */
export function startModuleWorker(from: string, name: string, options: WorkerOptions = {}): Worker {
  if (!from.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, from), options)
  const source = new URL(`./${name}.ts`, from).href
  const tsx = import.meta.resolve('tsx/esm/api')
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}) })`,
    { ...options, eval: true },
  )
}
