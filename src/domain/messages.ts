/*
 * Every text a client or a price manager reads (problem details, the import's problems, the dry run's reasons)
 * in English and Russian, by key: the code names a message and its values (`message('entry.notFound', { id })`),
 * never writes its words. What is raised carries the message as it is, and it is put into words once, at the
 * edge: the problem handler in the client's language (`Accept-Language`, else `MESSAGES_LANGUAGE`), the command
 * line and the logs in English (`messageText`). A text not in the catalogue (a library's own words) stays English.
 *
 * Templates: `{name}` is a value; `{name|form|form…}` is the form of a word for the number `name` (English: one,
 * other; Russian: one, few, many). Both languages have the same keys and the same values per key
 * (messages.test.ts). Field, column and parameter names stay the API's own in both languages.
 */

const LANGUAGES = ['en', 'ru'] as const
export type Language = (typeof LANGUAGES)[number]

const en = {
  // Titles of problems: the HTTP reason phrase (Spring's `error` member stays this English phrase).
  'title.400': 'Bad Request',
  'title.401': 'Unauthorized',
  'title.403': 'Forbidden',
  'title.404': 'Not Found',
  'title.405': 'Method Not Allowed',
  'title.408': 'Request Timeout',
  'title.409': 'Conflict',
  'title.412': 'Precondition Failed',
  'title.413': 'Payload Too Large',
  'title.415': 'Unsupported Media Type',
  'title.422': 'Unprocessable Entity',
  'title.429': 'Too Many Requests',
  'title.431': 'Request Header Fields Too Large',
  'title.500': 'Internal Server Error',
  'title.503': 'Service Unavailable',

  // The request itself: routes, URL, HTTP, body, media type, time, the database behind.
  'request.noResource': 'No resource at {path}',
  'request.noRoute': 'No resource at {method} {path}',
  'request.methodNotAllowed': '{method} is not supported at {path}; allowed: {allowed}',
  'request.badUrl': 'The URL is not validly percent-encoded',
  'request.badQuery': 'The URL is not validly percent-encoded (in its query string)',
  'request.notHttp': 'The request is not valid HTTP',
  'request.headersTooLarge': 'The request headers are too large',
  'request.notInTime': 'The request did not arrive in time',
  'request.bodyTooLarge': 'The request body is larger than {limit} bytes',
  'request.bodyEmpty': 'The request body is empty',
  'request.contentLength': 'Content-Length does not match the length of the request body',
  'request.notJson': 'The request body is not valid JSON',
  'request.forbiddenProperty': 'The request body uses a forbidden property name (__proto__ or constructor.prototype)',
  'request.notUtf8': 'The request body is not valid UTF-8: {errors}',
  'request.bodyRequired': 'A JSON request body is required',
  'request.mediaType': 'Content-Type {given} is not supported; send {wanted}',
  'request.noMediaType': 'A request body needs Content-Type: {wanted}',
  'request.abandoned': 'The request was abandoned',
  'request.timedOut': 'The request took too long and was abandoned; try again shortly',
  'request.databaseUnavailable': 'The database is unavailable; try again shortly',
  'request.valueOutOfRange': 'A value in the request is out of range or not allowed',
  'request.duplicateKey': 'An entry with the same key already exists',
  'request.concurrentChange': 'A concurrent change conflicted with this one; try again',
  'request.unexpected': 'An unexpected error occurred; it has been logged',
  'request.tooManyRequests': 'Too many requests: at most {max} per {seconds} s from one client; retry in {after}',

  // Validation of parameters and bodies: a detail listing the fields, and each field's message.
  'validation.invalidBody': 'Invalid request body: {errors}',
  'validation.invalidQuery': 'Invalid querystring: {errors}',
  'validation.invalidParams': 'Invalid params: {errors}',
  'validation.invalidHeaders': 'Invalid headers: {errors}',
  'validation.invalidRequest': 'Invalid request: {errors}',
  'validation.invalidEntry': 'Invalid entry: {errors}',
  'validation.invalidFilters': 'Invalid filters: {errors}',
  'validation.invalidBulkChange': 'Invalid bulk price change: {errors}',
  'validation.invalidPrescription': 'Invalid prescription: {errors}',
  'validation.invalid': 'Invalid {where}',
  'validation.field': '{field}: {message}',
  'validation.required': 'is required',
  'validation.notNull': 'must not be null',
  'validation.string': 'must be a string',
  'validation.integer': 'must be an integer',
  'validation.number': 'must be a number',
  'validation.day': 'must be a day such as 2026-03-02',
  'validation.boolean': 'must be a boolean',
  'validation.object': 'must be an object',
  'validation.array': 'must be an array',
  'validation.type': 'must be of type {type}',
  'validation.oneOf': 'must be one of {allowed}',
  'validation.unknownNames': 'unknown field names: {names}; allowed: {allowed}',
  'validation.maxLength': 'must be at most {limit} characters',
  'validation.minLength': 'must be at least {limit} characters',
  'validation.maxItems': 'must have at most {limit} items',
  'validation.minItems': 'must have at least {limit} items',
  'validation.additionalProperty': 'must not have the property {property}',
  'validation.invalidValue': 'is invalid',
  'validation.blank': 'must not be blank',
  'validation.positiveInteger': 'must be a positive integer',
  'validation.wholeNumber': 'must be a whole number',
  'validation.decimalPlaces': 'must have at most {scale} decimal {scale|place|places}',
  'validation.greaterThan': 'must be greater than {bound}',
  'validation.atLeast': 'must be at least {min}',
  'validation.atMost': 'must be at most {max}',
  'validation.between': 'must be between {min} and {max}',
  'validation.notGreaterThan': 'must not be greater than {other}',
  'validation.nul': 'must not contain a NUL character',
  'validation.loneSurrogate': 'must be valid Unicode text (it holds an unpaired surrogate)',
  'validation.utf8': 'must be valid UTF-8',
  'validation.replacementCharacter': 'must be valid UTF-8 text (it holds U+FFFD, the mark of undecodable bytes)',
  'validation.bidiControls': 'must not contain bidirectional control characters (U+202A–U+202E, U+2066–U+2069)',
  'validation.sort': "cannot sort by '{property}'; allowed: {allowed}",
  'validation.notTextField': "'{field}' is not a text field of {kind}; allowed: {allowed}",
  'validation.notEntryTextField': "'{field}' is not a text field of {kind} price-list entries; allowed: {allowed}",
  'validation.replaceContradicts': 'replace=true contradicts mode={mode}',
  'validation.dioptres': 'must be between -{max} and +{max} dioptres',
  'validation.quarterDioptres': 'must be in steps of 0.25 dioptre (e.g. -2.75)',
  'validation.degrees': 'must be a whole number of degrees from 0 to 180',

  // Authentication and roles.
  'auth.tokenRequired': 'This API needs a Bearer token (Authorization: Bearer …)',
  'auth.writeRole': 'Changing prices needs the role {role}, which {name} does not have',
  'auth.readRole': 'Reading purchase prices and the change history needs the role {role}, which {name} does not have',
  'auth.adminRole': "Reading and changing the service's log levels needs the role {role}, which {name} does not have",
  'auth.issuedInFuture': 'The token is issued in the future',
  'auth.livesTooLong': 'The token lives longer than the maximum token age allows',
  'auth.noUser': 'The token names no user (preferred_username, name or sub)',
  'auth.tooOld': 'The token is older than the maximum token age',
  'auth.expired': 'The token has expired',
  'auth.otherIssuer': 'The token was issued by another issuer',
  'auth.otherAudience': 'The token is meant for another audience',
  'auth.notYetValid': 'The token is not valid yet',
  'auth.claim': "The token's {claim} claim is missing or invalid",
  'auth.malformed': 'The token is malformed or its signature is not valid',
  'auth.providerUnavailable': "The identity provider's keys cannot be fetched; try again shortly",

  // The glass price list: entries, versions (412), duplicates (409), history and reverts.
  'entry.notFound': 'No glass price entry {id}',
  'entry.noHistory': 'No glass price entry {id} and no history of one',
  'entry.changedSince': 'Entry {id} was changed since (If-Match {tag}; its ETag is now {current}); read it again',
  'entry.neverHadVersion': 'Entry {id} never had the version If-Match names ({tag}); its ETag is {current}',
  'entry.duplicate': 'An entry for {manufacturer} / {brand} / {model} already exists (id {id})',
  'change.notFound': 'No glass price change {id}',
  'change.alreadyReverted': 'Change {id} was already reverted by change {revertedBy}',
  'change.revertConflicts': 'No entry of change {id} can be restored: every one was changed since',

  // The bulk price change and its dry run's reasons.
  'bulk.rejected':
    '{count} {count|entry|entries} would get a {field} of 0 or less, or above {max}; nothing was changed: {entries}',
  'bulk.rejectedMore':
    '{count} {count|entry|entries} would get a {field} of 0 or less, or above {max}; nothing was changed: {entries}; and {more} more',
  'bulk.roundRequired': 'is required: one of {allowed} (TO_INT is an alias of WHOLE)',
  'bulk.roundOneOf': 'must be one of {allowed} (TO_INT is an alias of WHOLE)',
  'bulk.changedMeanwhile': 'The glass price list changed during the bulk change; nothing was changed, try again',
  'bulk.wouldBeRefused':
    '{count} selected {count|entry|entries} would get a {field} of 0 or less, or above {max} (see rejected): the call would be refused (422) and change nothing',
  'bulk.nothingSelected': 'The filters and the price band select no entry',
  'bulk.nothingChanges': 'Every selected entry already holds its new {field}: the call would change nothing',
  'bulk.percentOrCoefficient': 'give either a coefficient or a percent, not both',
  'bulk.dateTime': 'must be a date and time with its offset, e.g. 2026-12-01T09:00:00+03:00',
  'scheduled.notFound': 'No scheduled price change {id}',
  'scheduled.finished': 'Scheduled price change {id} is already {state}; only a pending one can be cancelled',

  // The import: its refusals, then the problems of a file by line and column.
  'import.problems': 'The file has {count} {count|problem|problems}; nothing was written',
  'import.problemsListed':
    'The file has {count} {count|problem|problems} (the first {listed} listed); nothing was written',
  'import.emptyFile': 'The file is empty; nothing was written',
  'import.tooLarge':
    'The file is larger than {limit} bytes (IMPORT_BODY_LIMIT); split it or import it with the command line',
  'import.uploadEnded': 'The request ended before its upload could be imported',
  'import.replaceByBrand':
    "Every row of the file has the brand '{value}', so the file looks like a filtered export, and replacing the list with it would delete {count} {count|entry|entries}, {other} of them of another brand; nothing was written. Repeat with confirmDeletes={count} to replace anyway, or use mode=upsert to update the prices of the file’s rows only",
  'import.replaceByManufacturer':
    "Every row of the file has the manufacturer '{value}', so the file looks like a filtered export, and replacing the list with it would delete {count} {count|entry|entries}, {other} of them of another manufacturer; nothing was written. Repeat with confirmDeletes={count} to replace anyway, or use mode=upsert to update the prices of the file’s rows only",
  'import.notNegative': 'must not be negative',
  'import.outOfRange': 'is out of range',
  'import.nul': 'contains a NUL character',
  'import.notUtf8Value': 'is not valid UTF-8 (save the file as "CSV UTF-8")',
  'import.tooLong': 'is longer than {max} characters',
  'import.decimals': 'has more than {scale} {scale|decimal|decimals}',
  'import.notWholeNumber': "must be a whole number (got '{value}')",
  'import.notTimestamp': "must be a date and time such as 2026-03-02T10:15:00Z (got '{value}')",
  'import.conflicts':
    '{count} {count|row|rows} of the file {count|carries|carry} a version of {count|its entry|their entries} that was changed since the export; nothing was written. Repeat with overwriteConflicts={count} to write the file’s prices over them, or with skipConflicts=true to leave them as they are',
  'import.conflictsChanged':
    'The check found {expected} {expected|row|rows} changed since the export, now there {count|is|are} {count}; nothing was written. Check the file again',
  'import.conflictChoice': 'overwriteConflicts and skipConflicts exclude each other',
  'import.notNumber': "must be a number (got '{value}')",
  'import.notNumberComma':
    "must be a number (got '{value}'); the decimal separator is a point in a file separated by commas",
  'import.exceeds': 'must not exceed {other} ({from} > {to})',
  'import.fileNotUtf8': 'the file is not UTF-8 text (save it as CSV UTF-8)',
  'import.fileNotXlsx': 'the file is not a readable XLSX workbook (save it as an Excel workbook, .xlsx)',
  'import.malformedCsv': 'malformed CSV: {reason}',
  'import.unreadable': 'cannot read the file: {reason}',
  'import.databaseRejected': 'the database rejected the file: {reason}',
  'import.fileEmpty': 'the file is empty',
  'import.noRows': 'the file has no rows',
  'import.columnTwice': 'the column appears twice',
  'import.columnMissing': 'required column is missing',
  'import.unknownColumn': 'unknown column; the columns are {columns} (in Russian: {russian})',
  'import.fieldCount': 'has {count} {count|field|fields}, the header has {header}',
  'import.duplicateKeys': 'duplicates the keys and bounds of line {line}',
  'import.duplicateBarcode': 'duplicates the barcode of line {line}',
  'import.keysInPriceList':
    'the keys and bounds are already in the price list (id {id}): the mode upsert updates its prices',
  'import.barcodeInNomenclature': 'the barcode is already in the nomenclature (id {id}): the mode upsert updates it',

  // Look-alike keys (what the migration that brought keys to one form found), for the log and the terminal.
  'lookAlike.normalised':
    '{count} glass price {count|entry|entries} had look-alike keys brought to one form (history: by system)',
  'lookAlike.leftAsIs': 'look-alike key left as it is: entry {id} ({manufacturer} / {brand} / {model}): {reason}',
  'lookAlike.refused':
    'key the API would refuse, left as it is: entry {id} ({manufacturer} / {brand} / {model}): {reason}',

  // Idempotency keys and jobs of writes.
  'idempotency.keyFormat': 'must be 1 to 255 visible ASCII characters',
  'idempotency.running':
    'A request with this Idempotency-Key is still running; retry once it has finished to get its outcome',
  'idempotency.otherRequest':
    'This Idempotency-Key was used for another request (method, path or body); send a new key for a new request',
  'job.notFound': 'No job {id}',
  'job.lost': 'The instance running the job stopped before the job finished; nothing of it was written, start it again',
  'job.failed': 'The job failed unexpectedly; it has been logged',

  // The actuator's metrics and loggers.
  'actuator.noMetric': 'No metric {name}',
  'actuator.noTaggedMetric': 'No series of the metric {name} has the tags {tags}',
  'actuator.tagForm': "must be key:value (got '{value}')",
  'actuator.noLogger': 'No logger {name}',
} as const

export type MessageKey = keyof typeof en

const ru: Readonly<Record<MessageKey, string>> = {
  // Titles of problems.
  'title.400': 'Некорректный запрос',
  'title.401': 'Требуется аутентификация',
  'title.403': 'Доступ запрещён',
  'title.404': 'Не найдено',
  'title.405': 'Метод не поддерживается',
  'title.408': 'Истекло время запроса',
  'title.409': 'Конфликт',
  'title.412': 'Условие не выполнено',
  'title.413': 'Слишком большой запрос',
  'title.415': 'Неподдерживаемый тип данных',
  'title.422': 'Необрабатываемые данные',
  'title.429': 'Слишком много запросов',
  'title.431': 'Слишком большие заголовки',
  'title.500': 'Внутренняя ошибка сервиса',
  'title.503': 'Сервис недоступен',

  // The request itself.
  'request.noResource': 'По адресу {path} ничего нет',
  'request.noRoute': 'Нет ресурса {method} {path}',
  'request.methodNotAllowed': 'Метод {method} не поддерживается для {path}; допустимы: {allowed}',
  'request.badUrl': 'URL содержит некорректное %-кодирование',
  'request.badQuery': 'URL содержит некорректное %-кодирование (в строке запроса)',
  'request.notHttp': 'Запрос не является корректным HTTP-запросом',
  'request.headersTooLarge': 'Заголовки запроса слишком велики',
  'request.notInTime': 'Запрос не пришёл вовремя',
  'request.bodyTooLarge': 'Тело запроса больше {limit} байт',
  'request.bodyEmpty': 'Тело запроса пустое',
  'request.contentLength': 'Content-Length не совпадает с длиной тела запроса',
  'request.notJson': 'Тело запроса — некорректный JSON',
  'request.forbiddenProperty': 'В теле запроса запрещённое имя свойства (__proto__ или constructor.prototype)',
  'request.notUtf8': 'Тело запроса не в кодировке UTF-8: {errors}',
  'request.bodyRequired': 'Нужно тело запроса в формате JSON',
  'request.mediaType': 'Content-Type {given} не поддерживается; отправьте {wanted}',
  'request.noMediaType': 'Для тела запроса нужен Content-Type: {wanted}',
  'request.abandoned': 'Запрос прерван',
  'request.timedOut': 'Запрос выполнялся слишком долго и был прерван; повторите чуть позже',
  'request.databaseUnavailable': 'База данных недоступна; повторите чуть позже',
  'request.valueOutOfRange': 'Значение в запросе вне допустимого диапазона или недопустимо',
  'request.duplicateKey': 'Позиция с таким ключом уже есть',
  'request.concurrentChange': 'Одновременное изменение помешало этому; повторите',
  'request.unexpected': 'Непредвиденная ошибка; она записана в журнал',
  'request.tooManyRequests':
    'Слишком много запросов: не больше {max} за {seconds} с от одного клиента; повторите через {after}',

  // Validation.
  'validation.invalidBody': 'Ошибки в теле запроса: {errors}',
  'validation.invalidQuery': 'Ошибки в параметрах запроса: {errors}',
  'validation.invalidParams': 'Ошибки в пути запроса: {errors}',
  'validation.invalidHeaders': 'Ошибки в заголовках: {errors}',
  'validation.invalidRequest': 'Ошибки в запросе: {errors}',
  'validation.invalidEntry': 'Ошибки в позиции: {errors}',
  'validation.invalidFilters': 'Ошибки в фильтрах: {errors}',
  'validation.invalidBulkChange': 'Ошибки в массовом изменении цен: {errors}',
  'validation.invalidPrescription': 'Ошибки в рецепте: {errors}',
  'validation.invalid': 'Некорректный запрос ({where})',
  'validation.field': '{field}: {message}',
  'validation.required': 'обязательное значение',
  'validation.notNull': 'не может быть null',
  'validation.string': 'должно быть строкой',
  'validation.integer': 'должно быть целым числом',
  'validation.number': 'должно быть числом',
  'validation.day': 'должно быть днём, например 2026-03-02',
  'validation.boolean': 'должно быть true или false',
  'validation.object': 'должно быть объектом',
  'validation.array': 'должно быть списком',
  'validation.type': 'должно иметь тип {type}',
  'validation.oneOf': 'должно быть одним из: {allowed}',
  'validation.unknownNames': 'неизвестные имена полей: {names}; допустимы: {allowed}',
  'validation.maxLength': 'не длиннее {limit} символов',
  'validation.minLength': 'не короче {limit} символов',
  'validation.maxItems': 'не больше {limit} элементов',
  'validation.minItems': 'не меньше {limit} элементов',
  'validation.additionalProperty': 'свойство {property} не допускается',
  'validation.invalidValue': 'некорректное значение',
  'validation.blank': 'не может быть пустым',
  'validation.positiveInteger': 'должно быть целым положительным числом',
  'validation.wholeNumber': 'должно быть целым числом',
  'validation.decimalPlaces': 'не больше {scale} {scale|знака|знаков|знаков} после запятой',
  'validation.greaterThan': 'должно быть больше {bound}',
  'validation.atLeast': 'должно быть не меньше {min}',
  'validation.atMost': 'должно быть не больше {max}',
  'validation.between': 'должно быть от {min} до {max}',
  'validation.notGreaterThan': 'не может быть больше {other}',
  'validation.nul': 'не может содержать символ NUL',
  'validation.loneSurrogate': 'должно быть корректным текстом Юникода (в нём непарный суррогат)',
  'validation.utf8': 'должно быть в кодировке UTF-8',
  'validation.replacementCharacter': 'должно быть корректным текстом UTF-8 (в нём U+FFFD — след нечитаемых байтов)',
  'validation.bidiControls': 'не может содержать управляющие символы направления текста (U+202A–U+202E, U+2066–U+2069)',
  'validation.sort': 'нельзя сортировать по «{property}»; можно по: {allowed}',
  'validation.notTextField': '«{field}» — не текстовое поле {kind}; допустимы: {allowed}',
  'validation.notEntryTextField': '«{field}» — не текстовое поле позиций прайс-листа {kind}; допустимы: {allowed}',
  'validation.replaceContradicts': 'replace=true противоречит mode={mode}',
  'validation.dioptres': 'должно быть от -{max} до +{max} диоптрий',
  'validation.quarterDioptres': 'должно быть кратно 0,25 диоптрии (например, -2.75)',
  'validation.degrees': 'должно быть целым числом градусов от 0 до 180',

  // Authentication and roles.
  'auth.tokenRequired': 'Для этого API нужен Bearer-токен (Authorization: Bearer …)',
  'auth.writeRole': 'Для изменения цен нужна роль {role}, а у {name} её нет',
  'auth.readRole': 'Для просмотра закупочных цен и истории изменений нужна роль {role}, а у {name} её нет',
  'auth.adminRole': 'Для просмотра и изменения уровней журналирования сервиса нужна роль {role}, а у {name} её нет',
  'auth.issuedInFuture': 'Токен выпущен в будущем',
  'auth.livesTooLong': 'Срок жизни токена больше допустимого',
  'auth.noUser': 'В токене не указан пользователь (preferred_username, name или sub)',
  'auth.tooOld': 'Токен старше допустимого возраста',
  'auth.expired': 'Срок действия токена истёк',
  'auth.otherIssuer': 'Токен выпущен другим издателем',
  'auth.otherAudience': 'Токен предназначен для другой аудитории',
  'auth.notYetValid': 'Токен ещё не действует',
  'auth.claim': 'В токене нет поля {claim} или оно некорректно',
  'auth.malformed': 'Токен повреждён или его подпись неверна',
  'auth.providerUnavailable': 'Не удаётся получить ключи провайдера учётных записей; повторите чуть позже',

  // The glass price list.
  'entry.notFound': 'Нет позиции прайс-листа оправ с id {id}',
  'entry.noHistory': 'Нет позиции прайс-листа оправ с id {id} и её истории',
  'entry.changedSince':
    'Позиция {id} изменена после того, как вы её прочитали (If-Match {tag}; её ETag теперь {current}); прочитайте её заново',
  'entry.neverHadVersion': 'У позиции {id} не было версии из If-Match ({tag}); её ETag {current}',
  'entry.duplicate': 'Позиция {manufacturer} / {brand} / {model} уже есть в прайс-листе (id {id})',
  'change.notFound': 'Нет изменения прайс-листа оправ с номером {id}',
  'change.alreadyReverted': 'Изменение {id} уже отменено изменением {revertedBy}',
  'change.revertConflicts': 'Ни одну позицию изменения {id} нельзя восстановить: все они с тех пор изменены',

  // The bulk price change and its dry run's reasons.
  'bulk.rejected':
    'У {count} {count|позиции|позиций|позиций} {field} стал бы 0 или меньше либо больше {max}; ничего не изменено: {entries}',
  'bulk.rejectedMore':
    'У {count} {count|позиции|позиций|позиций} {field} стал бы 0 или меньше либо больше {max}; ничего не изменено: {entries}; и ещё {more}',
  'bulk.roundRequired': 'обязательное значение, одно из: {allowed} (TO_INT — то же, что WHOLE)',
  'bulk.roundOneOf': 'должно быть одним из: {allowed} (TO_INT — то же, что WHOLE)',
  'bulk.changedMeanwhile': 'Прайс-лист оправ изменился во время массового изменения; ничего не изменено, повторите',
  'bulk.wouldBeRefused':
    'У {count} {count|выбранной позиции|выбранных позиций|выбранных позиций} {field} стал бы 0 или меньше либо больше {max} (см. rejected): запрос будет отклонён (422) и ничего не изменит',
  'bulk.nothingSelected': 'Под фильтры и диапазон цен не попала ни одна позиция',
  'bulk.nothingChanges': 'У всех выбранных позиций {field} уже равен новому: запрос ничего не изменит',
  'bulk.percentOrCoefficient': 'укажите либо коэффициент, либо процент, но не оба',
  'bulk.dateTime': 'должно быть датой и временем со смещением, например 2026-12-01T09:00:00+03:00',
  'scheduled.notFound': 'Нет запланированного изменения цен с номером {id}',
  'scheduled.finished': 'Запланированное изменение цен {id} уже в состоянии {state}; отменить можно только ожидающее',

  // The import.
  'import.problems': 'В файле {count} {count|ошибка|ошибки|ошибок}; ничего не записано',
  'import.problemsListed':
    'В файле {count} {count|ошибка|ошибки|ошибок} (показаны первые {listed}); ничего не записано',
  'import.emptyFile': 'Файл пуст; ничего не записано',
  'import.tooLarge':
    'Файл больше {limit} байт (IMPORT_BODY_LIMIT); разделите его на части или загрузите через командную строку',
  'import.uploadEnded': 'Запрос оборвался до того, как файл удалось загрузить',
  'import.replaceByBrand':
    'Во всех строках файла бренд «{value}» — похоже на выгрузку с фильтром; замена прайс-листа этим файлом удалит {count} {count|позицию|позиции|позиций}, из них {other} других брендов; ничего не записано. Чтобы всё равно заменить, повторите с confirmDeletes={count}, а чтобы обновить цены только строк файла — mode=upsert',
  'import.replaceByManufacturer':
    'Во всех строках файла производитель «{value}» — похоже на выгрузку с фильтром; замена прайс-листа этим файлом удалит {count} {count|позицию|позиции|позиций}, из них {other} других производителей; ничего не записано. Чтобы всё равно заменить, повторите с confirmDeletes={count}, а чтобы обновить цены только строк файла — mode=upsert',
  'import.notNegative': 'не может быть отрицательным',
  'import.outOfRange': 'вне допустимого диапазона',
  'import.nul': 'содержит символ NUL',
  'import.notUtf8Value': 'не в кодировке UTF-8 (сохраните файл как «CSV UTF-8»)',
  'import.tooLong': 'длиннее {max} символов',
  'import.decimals': 'больше {scale} {scale|знака|знаков|знаков} после запятой',
  'import.notWholeNumber': 'должно быть целым числом (получено «{value}»)',
  'import.notTimestamp': 'должно быть датой и временем вида 2026-03-02T10:15:00Z (получено «{value}»)',
  'import.conflicts':
    'В {count} {count|строке|строках|строках} файла версия позиции, которую изменили после выгрузки; ничего не записано. Чтобы записать цены файла поверх, повторите с overwriteConflicts={count}, а чтобы оставить эти позиции как есть — со skipConflicts=true',
  'import.conflictsChanged':
    'Проверка нашла {expected} {expected|строку|строки|строк}, изменённых после выгрузки, а сейчас их {count}; ничего не записано. Проверьте файл ещё раз',
  'import.conflictChoice': 'overwriteConflicts и skipConflicts исключают друг друга',
  'import.notNumber': 'должно быть числом (получено «{value}»)',
  'import.notNumberComma':
    'должно быть числом (получено «{value}»); в файле с разделителем «,» дробная часть отделяется точкой',
  'import.exceeds': 'не может быть больше {other} ({from} > {to})',
  'import.fileNotUtf8': 'файл не в кодировке UTF-8 (сохраните его как CSV UTF-8)',
  'import.fileNotXlsx': 'файл не читается как книга XLSX (сохраните его как книгу Excel, .xlsx)',
  'import.malformedCsv': 'ошибка формата CSV: {reason}',
  'import.unreadable': 'не удаётся прочитать файл: {reason}',
  'import.databaseRejected': 'база данных не приняла файл: {reason}',
  'import.fileEmpty': 'файл пуст',
  'import.noRows': 'в файле нет строк',
  'import.columnTwice': 'столбец указан дважды',
  'import.columnMissing': 'нет обязательного столбца',
  'import.unknownColumn': 'неизвестный столбец; столбцы: {russian} (или {columns})',
  'import.fieldCount': '{count} {count|поле|поля|полей}, а в заголовке {header}',
  'import.duplicateKeys': 'повторяет ключи и границы строки {line}',
  'import.duplicateBarcode': 'повторяет штрихкод строки {line}',
  'import.keysInPriceList': 'такие ключи и границы уже есть в прайс-листе (id {id}): режим upsert обновит цены',
  'import.barcodeInNomenclature': 'такой штрихкод уже есть в номенклатуре (id {id}): режим upsert обновит товар',

  // Look-alike keys.
  'lookAlike.normalised':
    'У {count} {count|позиции|позиций|позиций} прайс-листа оправ похожие ключи приведены к одному виду (в истории: system)',
  'lookAlike.leftAsIs': 'похожий ключ оставлен как есть: позиция {id} ({manufacturer} / {brand} / {model}): {reason}',
  'lookAlike.refused':
    'ключ, который API не примет, оставлен как есть: позиция {id} ({manufacturer} / {brand} / {model}): {reason}',

  // Idempotency keys and jobs of writes.
  'idempotency.keyFormat': 'должен содержать от 1 до 255 видимых символов ASCII',
  'idempotency.running':
    'Запрос с этим Idempotency-Key ещё выполняется; повторите его, когда он завершится, чтобы получить результат',
  'idempotency.otherRequest':
    'Этот Idempotency-Key уже использован для другого запроса (метод, путь или тело); для нового запроса нужен новый ключ',
  'job.notFound': 'Нет задания {id}',
  'job.lost':
    'Экземпляр сервиса, выполнявший задание, остановился до его завершения; ничего не записано, запустите его снова',
  'job.failed': 'Задание завершилось непредвиденной ошибкой; она записана в журнал',

  // The actuator's metrics and loggers.
  'actuator.noMetric': 'Нет метрики {name}',
  'actuator.noTaggedMetric': 'Ни один ряд метрики {name} не имеет тегов {tags}',
  'actuator.tagForm': 'должно иметь вид ключ:значение (получено «{value}»)',
  'actuator.noLogger': 'Нет логгера {name}',
}

/** The catalogues by language (for tests and tools; code renders through {@link render}). */
export const catalogues: Readonly<Record<Language, Readonly<Record<MessageKey, string>>>> = { en, ru }

/**
 * A message not yet in words: its key and its values. Errors, an import's problems and a dry run's reasons carry
 * it as it is (it is plain data, so it crosses to and from the index thread), and the edge renders it once: the
 * problem handler in the request's language, the command line and the logs in English.
 */
export interface Message {
  readonly key: MessageKey
  readonly values: MessageValues
}

/** What a text shows: a message, a library's own words (English, kept as they are), or a run of texts in a row. */
export type Text = string | Message | readonly Text[]

/** A value of a message: a number, a word, or a text rendered in the same language (a field's message…). */
export type MessageValue = number | Text

export type MessageValues = Readonly<Record<string, MessageValue>>

const placeholder = /\{(\w+)(?:\|([^}]*))?\}/g

const valueNames = new Map<MessageKey, readonly string[]>()

/** The names of a template's values: `{id}` and `{count|entry|entries}` name `id` and `count`. */
type ValueNames<T extends string> = T extends `${string}{${infer Inner}}${infer Rest}`
  ? (Inner extends `${infer Name}|${string}` ? Name : Inner) | ValueNames<Rest>
  : never

/** The values a key's message takes, by name, as its English template names them (the Russian names the same). */
export type ValuesOf<K extends MessageKey> = { readonly [Name in ValueNames<(typeof en)[K]>]: MessageValue }

/**
 * A message of the catalogue with its values, typed by its key; a value the template names but not given (a key
 * known only when the code runs) throws here.
 */
export function message<K extends MessageKey>(
  key: K,
  ...[values]: ValueNames<(typeof en)[K]> extends never
    ? [values?: MessageValues]
    : [values: ValuesOf<K> & MessageValues]
): Message
export function message(key: MessageKey, values: MessageValues = {}): Message {
  return messageOf(key, values)
}

/** A message whose key is known only when the code runs (one of several, by a keyword): its values unchecked by type. */
export function messageOf(key: MessageKey, values: MessageValues = {}): Message {
  let names = valueNames.get(key)
  if (!names) {
    names = placeholdersOf(en[key])
    valueNames.set(key, names)
  }
  for (const name of names) if (values[name] === undefined) throw new Error(`message value ${name} is missing`)
  return { key, values }
}

/** Whether a value (a text, or what a check returns) is one message. */
export function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'key' in value && 'values' in value
}

/** The key of a text that is one message, else undefined. */
export function keyOf(text: Text): MessageKey | undefined {
  return isMessage(text) ? text.key : undefined
}

/** Texts one after the other with a separator between them (`field message; field message`). */
export function joinTexts(texts: readonly Text[], separator: string): Text {
  return texts.flatMap((text, index) => (index === 0 ? [text] : [separator, text]))
}

/** A text in words, in the language (English unless said). */
export function render(text: Text, language: Language = 'en'): string {
  if (typeof text === 'string') return text
  if (isMessage(text)) return fill(catalogues[language][text.key], text.values, language)
  return (text as readonly Text[]).map((part) => render(part, language)).join('')
}

/** The message of a key with its values in words, in the language (English unless said): for logs and the terminal. */
export function messageText(key: MessageKey, values: MessageValues = {}, language: Language = 'en'): string {
  return render(messageOf(key, values), language)
}

function fill(template: string, values: MessageValues, language: Language): string {
  return template.replace(placeholder, (_whole, name: string, forms: string | undefined) => {
    const value = values[name]
    if (value === undefined) throw new Error(`message value ${name} is missing`)
    const words = typeof value === 'number' ? String(value) : render(value, language)
    return forms === undefined ? words : pluralForm(Number(words), forms.split('|'), language)
  })
}

// Pure: a bundle that takes a value of the domain but no message (the web app's decimals) leaves the catalogue out.
const pluralRules = { en: /* @__PURE__ */ new Intl.PluralRules('en'), ru: /* @__PURE__ */ new Intl.PluralRules('ru') }
const pluralOrder: Record<Language, readonly Intl.LDMLPluralRule[]> = {
  en: ['one', 'other'],
  ru: ['one', 'few', 'many'],
}

function pluralForm(count: number, forms: readonly string[], language: Language): string {
  const index = pluralOrder[language].indexOf(pluralRules[language].select(count))
  return forms[index === -1 ? forms.length - 1 : index] ?? forms[forms.length - 1] ?? ''
}

/** The names of a template's values (plain and counted), sorted: the same per key in every language. */
export function placeholdersOf(template: string): string[] {
  return [...new Set([...template.matchAll(placeholder)].map((match) => match[1] ?? ''))].sort()
}

/** The status's title in the language; an unlisted status keeps the English reason phrase. */
export function titleText(status: number, english: string, language: Language): string {
  const key = `title.${status}` as MessageKey
  return key in en ? messageText(key, {}, language) : english
}

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
