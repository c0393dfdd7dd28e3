import { useRef } from 'preact/hooks'
import type { WriteJob } from '../api/types.js'
import type { MessageKey, Translate } from '../i18n/index.js'

/*
 * How far a write running as a job has come: its phase, a progress bar of the phase's rows and, once the rows
 * move, an estimate of the time left from the pace seen since the phase began on this screen.
 */

const phaseKey: Record<NonNullable<WriteJob['progress']>['phase'], MessageKey> = {
  reading: 'jobPhaseReading',
  selecting: 'jobPhaseSelecting',
  writing: 'jobPhaseWriting',
  history: 'jobPhaseHistory',
  done: 'jobPhaseDone',
}

/** Seconds as a person reads a wait: "40 s", "3 min". */
function duration(seconds: number, t: Translate): string {
  return seconds < 90
    ? t('jobSeconds', { count: Math.max(1, Math.round(seconds)) })
    : t('jobMinutes', { count: Math.round(seconds / 60) })
}

export function JobProgressBar(props: { readonly job: WriteJob; readonly t: Translate }) {
  const { job, t } = props
  const progress = job.progress
  // The first sight of the current phase: the pace since then estimates the time left.
  const seen = useRef<{ phase: string; at: number; done: number } | undefined>(undefined)
  if (progress && seen.current?.phase !== progress.phase) {
    seen.current = { phase: progress.phase, at: Date.now(), done: progress.done }
  }
  const total = progress?.total ?? null
  let left: string | undefined
  if (progress && total !== null && seen.current && progress.done > seen.current.done) {
    const perRow = (Date.now() - seen.current.at) / 1000 / (progress.done - seen.current.done)
    left = t('jobTimeLeft', { time: duration(perRow * (total - progress.done), t) })
  }
  const rows = new Intl.NumberFormat(t('numberLocale'))
  return (
    <div class="job-progress" role="status" id="job-progress">
      <p>
        {t('jobRunning', { job: job.id })} {progress ? t(phaseKey[progress.phase]) : t('jobPhaseQueued')}
        {progress && total !== null
          ? `: ${t('jobRows', { done: rows.format(progress.done), total: rows.format(total) })}`
          : ''}
        .{left ? ` ${left}` : ''}
      </p>
      {/* Without a total the bar is indeterminate: it shows that work goes on, not how much is left. */}
      <progress
        aria-label={t('jobProgressLabel')}
        {...(progress && total !== null && total > 0 ? { max: total, value: progress.done } : {})}
      />
    </div>
  )
}
