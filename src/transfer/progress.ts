import cliProgress from 'cli-progress'

/*
 * Progress of a long command: a bar with rows and speed on a terminal, one plain line per 10% otherwise (logs,
 * CI), so neither floods the output.
 */

export interface Progress {
  /** `done` of `total` units; `rows` is what is shown as done. */
  update(done: number, rows: number): void
  stop(): void
}

export interface ProgressOptions {
  readonly label: string
  /** What the bar measures (bytes of a file, rows to generate). */
  readonly total: number
  readonly stream?: NodeJS.WriteStream
}

/** A progress display on `stream` (stderr by default). */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr
  const started = performance.now()
  const speed = (rows: number) => Math.round(rows / Math.max(0.001, (performance.now() - started) / 1000))
  const total = Math.max(1, options.total)

  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream,
        format: `${options.label} [{bar}] {percentage}% | {rows} rows | {speed} rows/s | {duration_formatted}`,
        hideCursor: true,
        fps: 5,
      },
      cliProgress.Presets.shades_classic,
    )
    bar.start(total, 0, { rows: 0, speed: 0 })
    return {
      update(done, rows) {
        bar.update(Math.min(done, total), { rows, speed: speed(rows) })
      },
      stop() {
        bar.stop()
      },
    }
  }

  let nextStep = 10
  return {
    update(done, rows) {
      const percent = Math.floor((Math.min(done, total) / total) * 100)
      while (percent >= nextStep) {
        stream.write(`${options.label}: ${nextStep}% (${rows} rows, ${speed(rows)} rows/s)\n`)
        nextStep += 10
      }
    },
    stop() {},
  }
}
