/*
 * Problem details in Russian or English, as the client's `Accept-Language` asks (`MESSAGES_LANGUAGE` when it
 * asks for neither). The code writes its messages in English; this catalogue is the only place that knows their
 * Russian, gettext-style: each entry matches an English message (with its values as groups) and gives the Russian
 * one. A message the catalogue does not know stays English, so a new message is never lost, only untranslated;
 * `messages.test.ts` holds the messages a price manager meets most (import problems, refusals of the price list).
 */

export const LANGUAGES = ['en', 'ru'] as const
export type Language = (typeof LANGUAGES)[number]

/**
 * The language of the answer: the first of `ru`, `en` the client's `Accept-Language` ranks highest (`q` weights
 * honoured, `ru-RU` counts as `ru`), else `fallback`.
 */
export function negotiateLanguage(header: string | undefined, fallback: Language): Language {
  if (!header) return fallback
  let best: { language: Language; q: number } | undefined
  for (const part of header.split(',')) {
    const [range = '', ...params] = part.trim().split(';')
    const tag = range.trim().toLowerCase().split('-')[0]
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    const q = qParam ? Number(qParam.slice(2)) : 1
    if (!Number.isFinite(q) || q <= 0) continue
    const language = (LANGUAGES as readonly string[]).includes(tag ?? '') ? (tag as Language) : undefined
    if (language && (!best || q > best.q)) best = { language, q }
  }
  return best?.language ?? fallback
}

const titles: Readonly<Record<number, string>> = {
  400: 'Некорректный запрос',
  401: 'Требуется аутентификация',
  403: 'Доступ запрещён',
  404: 'Не найдено',
  405: 'Метод не поддерживается',
  408: 'Истекло время запроса',
  409: 'Конфликт',
  412: 'Условие не выполнено',
  413: 'Слишком большой запрос',
  415: 'Неподдерживаемый тип данных',
  422: 'Необрабатываемые данные',
  429: 'Слишком много запросов',
  431: 'Слишком большие заголовки',
  500: 'Внутренняя ошибка сервиса',
  503: 'Сервис недоступен',
}

/** The status's title (reason phrase) in the language; English stays the HTTP reason phrase. */
export function translateTitle(status: number, english: string, language: Language): string {
  return language === 'ru' ? (titles[status] ?? english) : english
}

type Entry = readonly [RegExp, (...groups: string[]) => string]

const plural = (n: string, one: string, few: string, many: string): string => {
  const value = Number(n) % 100
  const last = value % 10
  if (value >= 11 && value <= 14) return many
  return last === 1 ? one : last >= 2 && last <= 4 ? few : many
}

/** English message → Russian, whole messages only (each pattern is anchored). Order matters: first match wins. */
const catalogue: readonly Entry[] = [
  // Import problems (per line and column of a file).
  [/^is required$/, () => 'обязательное значение'],
  [/^must not be null$/, () => 'не может быть null'],
  [/^must not be negative$/, () => 'не может быть отрицательным'],
  [/^must be at most 99 999 999\.99$/, () => 'не больше 99 999 999,99'],
  [/^is out of range$/, () => 'вне допустимого диапазона'],
  [/^contains a NUL character$/, () => 'содержит символ NUL'],
  [/^is longer than (\d+) characters$/, (n) => `длиннее ${n} символов`],
  [/^has more than (\d+) decimals?$/, (n) => `больше ${n} ${plural(n, 'знака', 'знаков', 'знаков')} после запятой`],
  [/^must be a whole number \(got '(.*)'\)$/s, (v) => `должно быть целым числом (получено «${v}»)`],
  [
    /^must be a number \(got '(.*)'\); the decimal separator is a point in a file separated by commas$/s,
    (v) => `должно быть числом (получено «${v}»); в файле с разделителем «,» дробная часть отделяется точкой`,
  ],
  [/^must be a number \(got '(.*)'\)$/s, (v) => `должно быть числом (получено «${v}»)`],
  [/^must not exceed (\w+) \((.*) > (.*)\)$/, (to, a, b) => `не может быть больше ${to} (${a} > ${b})`],
  [
    /^is not valid UTF-8 \(save the file as "CSV UTF-8"\)$/,
    () => 'не в кодировке UTF-8 (сохраните файл как «CSV UTF-8»)',
  ],
  [/^the file is empty$/, () => 'файл пуст'],
  [/^the file has no rows$/, () => 'в файле нет строк'],
  [/^the column appears twice$/, () => 'столбец указан дважды'],
  [/^required column is missing$/, () => 'нет обязательного столбца'],
  [
    /^unknown column; the columns are (.*) \(in Russian: (.*)\)$/,
    (en, ru) => `неизвестный столбец; столбцы: ${ru} (или ${en})`,
  ],
  [/^duplicates the keys and bounds of line (\d+)$/, (n) => `повторяет ключи и границы строки ${n}`],
  [/^duplicates the barcode of line (\d+)$/, (n) => `повторяет штрихкод строки ${n}`],
  [
    /^the keys and bounds are already in the price list \(id (\d+)\): the mode upsert updates its prices$/,
    (id) => `такие ключи и границы уже есть в прайс-листе (id ${id}): режим upsert обновит цены`,
  ],
  [
    /^the barcode is already in the nomenclature \(id (\d+)\): the mode upsert updates it$/,
    (id) => `такой штрихкод уже есть в номенклатуре (id ${id}): режим upsert обновит товар`,
  ],
  [
    /^has (\d+) fields?, the header has (\d+)$/,
    (n, h) => `${n} ${plural(n, 'поле', 'поля', 'полей')}, а в заголовке ${h}`,
  ],
  [
    /^the file is not a readable XLSX workbook \(save it as an Excel workbook, \.xlsx\)$/,
    () => 'файл не читается как книга XLSX (сохраните его как книгу Excel, .xlsx)',
  ],
  [
    /^the file is not UTF-8 text \(save it as CSV UTF-8\)$/,
    () => 'файл не в кодировке UTF-8 (сохраните его как CSV UTF-8)',
  ],
  // Refusals of the import and of the price list.
  [
    /^The file has (\d+) problems?( \(the first (\d+) listed\))?; nothing was written$/,
    (n, listed, first) =>
      `В файле ${n} ${plural(n, 'ошибка', 'ошибки', 'ошибок')}${listed ? ` (показаны первые ${first})` : ''}; ничего не записано`,
  ],
  [/^The file is empty; nothing was written$/, () => 'Файл пуст; ничего не записано'],
  [
    /^Every row of the file has the (\w+) '(.*)', so the file looks like a filtered export, and replacing the list with it would delete (\d+) entr(?:y|ies), (\d+) of them of another \w+; nothing was written\. Repeat with confirmDeletes=(\d+) to replace anyway, or use mode=upsert to update the prices of the file’s rows only$/s,
    (column, value, n, other, confirm) =>
      `Во всех строках файла ${column === 'brand' ? 'бренд' : 'производитель'} «${value}» — похоже на выгрузку с ` +
      `фильтром; замена прайс-листа этим файлом удалит ${n} ${plural(n, 'позицию', 'позиции', 'позиций')}, из них ` +
      `${other} других ${column === 'brand' ? 'брендов' : 'производителей'}; ничего не записано. Чтобы всё равно ` +
      `заменить, повторите с confirmDeletes=${confirm}, а чтобы обновить цены только строк файла — mode=upsert`,
  ],
  [
    /^Entry (\d+) was changed since \(If-Match (.*); its ETag is now (.*)\); read it again$/,
    (id, tag, now) =>
      `Позиция ${id} изменена после чтения (If-Match ${tag}; её ETag теперь ${now}); прочитайте её заново`,
  ],
  [
    /^Entry (\d+) never had the version If-Match names \((.*)\); its ETag is (.*)$/,
    (id, tag, now) => `У позиции ${id} не было версии из If-Match (${tag}); её ETag ${now}`,
  ],
  [/^An entry for (.*) already exists \(id (\d+)\)$/s, (key, id) => `Позиция ${key} уже есть (id ${id})`],
  [/^No glass price entry (\d+)$/, (id) => `Нет позиции прайс-листа оправ с id ${id}`],
  [
    /^No glass price entry (\d+) and no history of one$/,
    (id) => `Нет позиции прайс-листа оправ с id ${id} и её истории`,
  ],
  [/^No glass price change (\d+)$/, (id) => `Нет изменения прайс-листа оправ с номером ${id}`],
  [/^Change (\d+) was already reverted by change (\d+)$/, (a, b) => `Изменение ${a} уже отменено изменением ${b}`],
  // Idempotency keys and jobs of writes.
  [/^must be 1 to 255 visible ASCII characters$/, () => 'должен содержать от 1 до 255 видимых символов ASCII'],
  [
    /^Idempotency-Key: must be 1 to 255 visible ASCII characters$/,
    () => 'Idempotency-Key: должен содержать от 1 до 255 видимых символов ASCII',
  ],
  [
    /^A request with this Idempotency-Key is still running; retry once it has finished to get its outcome$/,
    () => 'Запрос с этим Idempotency-Key ещё выполняется; повторите его, когда он завершится, чтобы получить результат',
  ],
  [
    /^This Idempotency-Key was used for another request \(method, path or body\); send a new key for a new request$/,
    () =>
      'Этот Idempotency-Key уже использован для другого запроса (метод, путь или тело); для нового запроса нужен новый ключ',
  ],
  [/^No job (\d+)$/, (id) => `Нет задания ${id}`],
  [
    /^The instance running the job stopped before the job finished; nothing of it was written, start it again$/,
    () =>
      'Экземпляр сервиса, выполнявший задание, остановился до его завершения; ничего не записано, запустите его снова',
  ],
  [
    /^The job failed unexpectedly; it has been logged$/,
    () => 'Задание завершилось непредвиденной ошибкой; она записана в журнал',
  ],
]

/** A message in the language: the catalogue's Russian for a message it knows, else the English as it is. */
export function translate(message: string, language: Language): string {
  if (language === 'en') return message
  for (const [pattern, russian] of catalogue) {
    const match = pattern.exec(message)
    if (match) return russian(...match.slice(1).map((group) => group ?? ''))
  }
  return message
}
