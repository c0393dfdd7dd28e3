/*
 * Progress of a long command: on a terminal a bar redrawn in place (five times a second at most) with rows and
 * speed; otherwise (logs, CI) a few plain lines: 25%, 50% and 75% when the work has run two seconds by then, and
 * the last state once at the end, so a 14-row import prints one line and a million rows four.
 */

export interface Progress {
  /** `done` of `total` units; `rows` is what is shown as done. */
  update(done: number, rows: number): void
  /** Ends the display (the bar's line, or the last plain line); later calls do nothing. */
  stop(): void
}

export interface ProgressOptions {
  readonly label: string
  /** What the bar measures (bytes of a file, rows to generate). */
  readonly total: number
  /** stderr by default; a bar when it is a terminal. */
  readonly stream?: { readonly isTTY?: boolean; write(text: string): unknown }
  /** Milliseconds of a monotonic clock (performance.now by default). */
  readonly now?: () => number
}

const BAR_WIDTH = 30
const REDRAW_MS = 200
/** Plain lines before the last one, when the work is slow enough to want them. */
const STEPS = [25, 50, 75]
const QUIET_MS = 2000

/** A progress display on `stream` (stderr by default). */
export function createProgress(options: ProgressOptions): Progress {
  const stream = options.stream ?? process.stderr
  const now = options.now ?? (() => performance.now())
  const started = now()
  const elapsed = () => now() - started
  const speed = (rows: number) => Math.round(rows / Math.max(0.001, elapsed() / 1000))
  const total = Math.max(1, options.total)
  const percentOf = (done: number) => Math.floor((Math.min(Math.max(done, 0), total) / total) * 100)
  let percent = 0
  let rows = 0
  let updated = false
  let stopped = false

  if (stream.isTTY) {
    let drawnAt = Number.NEGATIVE_INFINITY
    const draw = () => {
      drawnAt = now()
      const filled = Math.round((percent / 100) * BAR_WIDTH)
      const bar = '█'.repeat(filled) + '░'.repeat(BAR_WIDTH - filled)
      stream.write(
        `\r\x1b[2K${options.label} [${bar}] ${percent}% | ${rows} rows | ${speed(rows)} rows/s | ${clock(elapsed())}`,
      )
    }
    draw()
    return {
      update(done, doneRows) {
        if (stopped) return
        percent = percentOf(done)
        rows = doneRows
        if (now() - drawnAt >= REDRAW_MS) draw()
      },
      stop() {
        if (stopped) return
        stopped = true
        draw()
        stream.write('\n')
      },
    }
  }

  const line = () => stream.write(`${options.label}: ${percent}% (${rows} rows, ${speed(rows)} rows/s)\n`)
  let printed = -1
  let passed = 0
  return {
    update(done, doneRows) {
      if (stopped) return
      updated = true
      percent = percentOf(done)
      rows = doneRows
      const step = STEPS.filter((each) => each <= percent).at(-1) ?? 0
      if (step <= passed) return
      passed = step
      if (percent < 100 && elapsed() >= QUIET_MS) {
        line()
        printed = percent
      }
    },
    stop() {
      if (stopped) return
      stopped = true
      if (updated && printed !== percent) line()
    },
  }
}

/** Elapsed time as m:ss. */
function clock(milliseconds: number): string {
  const seconds = Math.floor(milliseconds / 1000)
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`
}
