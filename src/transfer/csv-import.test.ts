import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import ExcelJS from 'exceljs'
import { sql } from 'kysely'
import { eachDatabase } from '../../test/harness.js'
import type { Kind } from '../catalog/kinds/kind.js'
import { glasses, kindByPath, kinds, lenses } from '../catalog/kinds/kinds.js'
import type { Database } from '../db/database.js'
import { render } from '../domain/messages.js'
import { type ImportOptions, importCsv, MAX_REPORTED_PROBLEMS } from './csv-import.js'
import { exportTable } from './export-writer.js'
import { headerKey, type TransferTable, transferColumns } from './transfer-columns.js'

/*
 * CSV import and export on both databases: every kind from its example file, the spreadsheet dialects, every kind
 * of bad file (reported with its line, nothing written), append and replace, dry runs, and the round trip.
 */

const example = (kind: Kind, table: TransferTable) =>
  readFileSync(new URL(`../../examples/${kind.path}-${table}.csv`, import.meta.url), 'utf8')

const tableOf = (kind: Kind, table: TransferTable) => (table === 'prices' ? kind.priceTable : kind.skuTable)

async function count(db: Database, tableName: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(tableName)}`.execute(db.primary)
  return rows[0]?.n ?? 0
}

async function exportText(db: Database, kind: Kind, table: TransferTable, excel = false): Promise<string> {
  const out = new PassThrough()
  const chunks: Buffer[] = []
  out.on('data', (chunk: Buffer) => chunks.push(chunk))
  await exportTable(db.read, kind, table, out, { excel })
  return Buffer.concat(chunks).toString('utf8')
}

const run = (
  db: Database,
  kind: Kind,
  table: TransferTable,
  text: string | Buffer | Buffer[],
  options: ImportOptions = {},
) => importCsv(db, kind, table, Array.isArray(text) ? text : [text], { refresh: 'blocking', ...options })

/** The bytes of a text in chunks of `size` (a file read piece by piece; characters may split). */
const chunksOf = (text: string, size: number): Buffer[] => {
  const bytes = Buffer.from(text)
  return Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size))
}

/** A glass price list file in the given dialect. */
const glassRows = [
  ['Safilo', 'Carrera', 'CARRERA 8862', '11990.00', '4800.50'],
  ['EssilorLuxottica', 'Ray-Ban', 'RX5154 Clubmaster', '14990', '6200'],
  ['Kering Eyewear', 'Gucci', 'GG0061O', '45990.9', '16000'],
]
const glassHeader = ['manufacturer', 'brand', 'model', 'price', 'purchase']
const glassCsv = (rows: readonly (readonly string[])[] = glassRows, header = glassHeader) =>
  `${[header, ...rows].map((row) => row.join(',')).join('\n')}\n`

eachDatabase('CSV import and export', (ctx) => {
  for (const kind of kinds) {
    test(`${kind.path}: the example price list and nomenclature import, and the matview prices the goods`, async () => {
      for (const table of ['prices', 'goods'] as const) {
        const text = example(kind, table)
        const result = await run(ctx.db, kind, table, text, { replace: true })
        assert.deepEqual(result.problems, [])
        const lines = text.trim().split('\n').length - 1
        assert.equal(result.rows, lines)
        assert.equal(result.written, lines)
        assert.equal(await count(ctx.db, tableOf(kind, table)), lines)
        // The file comes back out exactly as it went in.
        assert.equal(await exportText(ctx.db, kind, table), text)
      }
      assert.ok((await count(ctx.db, kind.matview)) > 0, 'the imported goods are priced')
    })
  }

  test('a file separated by ; with decimal commas, a BOM and shuffled columns imports the same numbers', async () => {
    const header = ['purchase', 'model', 'price', 'brand', 'manufacturer']
    const text = `\ufeff${header.join(';')}\r\n"4 800,50";CARRERA 8862;"11\u00a0990,00";Carrera;Safilo\r\n6200;RX5154;14990,5;Ray-Ban;EssilorLuxottica\r\n`
    const result = await run(ctx.db, glasses, 'prices', Buffer.from(text, 'utf8'), { replace: true })
    assert.deepEqual(result.problems, [])
    assert.equal(result.delimiter, ';')
    const rows = await ctx.db.primary
      .selectFrom('glasses_price')
      .select(['manufacturer', 'brand', 'model', 'price', 'purchase'])
      .orderBy('id')
      .execute()
    assert.deepEqual(rows, [
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA 8862', price: '11990.00', purchase: '4800.50' },
      { manufacturer: 'EssilorLuxottica', brand: 'Ray-Ban', model: 'RX5154', price: '14990.50', purchase: '6200.00' },
    ])
  })

  test('every kind of bad row is reported with its line and column, and nothing is written', async () => {
    await run(ctx.db, glasses, 'prices', glassCsv(), { replace: true })
    const before = await exportText(ctx.db, glasses, 'prices')
    const text = glassCsv([
      ['Safilo', 'Carrera', 'CA 1', '100', '50'],
      ['Safilo', 'Carrera', 'CA 2', 'abc', '50'],
      ['Safilo', 'Carrera', 'CA 3', '-5', '50'],
      ['Safilo', 'Carrera', 'CA 4', '100.123', '50'],
      ['Safilo', '', 'CA 5', '100', '50'],
      [' safilo ', 'CARRERA', 'ca 1', '100', '50'],
      ['Safilo', 'Carrera', 'CA 7', '100000000', '50'],
      ['Safilo', 'Carrera', 'CA 8', '100'],
      ['Safilo', 'Carrera', 'x'.repeat(256), '100', '50'],
      ['Safilo', 'Carrera', 'CA\u000010', '100', '50'],
      ['Safilo', 'Carrera', 'CA 11', '1234,50', '50'],
    ])
    const result = await run(ctx.db, glasses, 'prices', text, { replace: true })
    assert.equal(result.written, 0)
    assert.deepEqual(
      result.problems.map((p) => [p.line, p.column, render(p.message).replace(/ \(got.*$|;.*$/, '')]),
      [
        [3, 'price', 'must be a number'],
        [4, 'price', 'must not be negative'],
        [5, 'price', 'has more than 2 decimals'],
        [6, 'brand', 'is required'],
        [7, null, 'duplicates the keys and bounds of line 2'],
        [8, 'price', 'must be at most 99 999 999.99'],
        [9, null, 'has 4 fields, the header has 5'],
        [10, 'model', 'is longer than 255 characters'],
        [11, 'model', 'contains a NUL character'],
        [12, null, 'has 6 fields, the header has 5'],
      ],
    )
    assert.equal(result.problemCount, 10)
    assert.equal(await exportText(ctx.db, glasses, 'prices'), before, 'replace did not happen')
  })

  test('a range whose from exceeds its to, and text in a number column, are reported per column', async () => {
    const header = example(lenses, 'prices').split('\n')[0]!.split(',')
    const row = example(lenses, 'prices').split('\n')[1]!.split(',')
    const at = (name: string) => header.indexOf(name)
    const swapped = [...row]
    swapped[at('sphereFrom')] = '2.00'
    swapped[at('sphereTo')] = '-2.00'
    const text = [...row]
    text[at('refractionIndex')] = 'one point six'
    const result = await run(
      ctx.db,
      lenses,
      'prices',
      `${[header, swapped, text].map((r) => r.join(',')).join('\n')}\n`,
    )
    assert.deepEqual(
      result.problems.map((p) => [p.line, p.column]),
      [
        [2, 'sphereFrom'],
        [3, 'refractionIndex'],
      ],
    )
    assert.match(render(result.problems[0]!.message), /must not exceed sphereTo/)
  })

  test('an empty file, a header without rows, an unknown or missing column are each reported, nothing written', async () => {
    await run(ctx.db, glasses, 'prices', glassCsv(), { replace: true })
    const cases: [string | Buffer, { line: number; column: string | null; message: RegExp }[]][] = [
      ['', [{ line: 1, column: null, message: /the file is empty/ }]],
      ['\ufeff', [{ line: 1, column: null, message: /the file is empty/ }]],
      [`${glassHeader.join(',')}\n`, [{ line: 2, column: null, message: /no rows/ }]],
      [
        glassCsv(glassRows, ['manufacturer', 'brand', 'model', 'price', 'cost']),
        [
          {
            line: 1,
            column: 'cost',
            message: /unknown column; the columns are manufacturer, brand, model, price, purchase/,
          },
          { line: 1, column: 'purchase', message: /required column is missing/ },
        ],
      ],
      [
        glassCsv(glassRows, ['manufacturer', 'brand', 'model', 'price', 'price']),
        [{ line: 1, column: 'price', message: /twice/ }],
      ],
      [
        'manufacturer,brand,model,price,purchase\nA,B,C,1,1\n"unclosed,quote\n',
        [{ line: 3, column: null, message: /malformed CSV: quoted field unterminated/ }],
      ],
      [
        Buffer.concat([
          Buffer.from('manufacturer,brand,model,price,purchase\nA,B,'),
          Buffer.from([0xc0, 0xc1]),
          Buffer.from(',1,1\n'),
        ]),
        [{ line: 0, column: null, message: /not UTF-8/ }],
      ],
    ]
    for (const [text, expected] of cases) {
      const result = await run(ctx.db, glasses, 'prices', text, { replace: true })
      assert.equal(result.written, 0, JSON.stringify(text))
      const relevant = result.problems.filter((p) => expected.some((e) => e.column === p.column && e.line === p.line))
      assert.equal(relevant.length, expected.length, `${JSON.stringify(text)} → ${JSON.stringify(result.problems)}`)
      for (const [i, problem] of relevant.entries()) assert.match(render(problem.message), expected[i]!.message)
      assert.equal(await count(ctx.db, 'glasses_price'), glassRows.length)
    }
  })

  test('appending adds rows; a row already in the table is reported with its line; replace starts afresh', async () => {
    await run(ctx.db, glasses, 'prices', glassCsv(), { replace: true })
    const more = glassCsv([['Marcolin', 'Guess', 'GU2700', '8990', '3500']])
    const appended = await run(ctx.db, glasses, 'prices', more)
    assert.deepEqual(appended.problems, [])
    assert.equal(appended.written, 1)
    assert.equal(await count(ctx.db, 'glasses_price'), 4)

    const clash = glassCsv([
      ['Marcolin', 'Guess', 'GU2701', '8990', '3500'],
      ['SAFILO', 'carrera', ' CARRERA 8862 ', '1', '1'],
    ])
    const rejected = await run(ctx.db, glasses, 'prices', clash)
    assert.equal(rejected.written, 0)
    assert.deepEqual(
      rejected.problems.map((p) => [p.line, render(p.message).replace(/ \(id \d+\)/, '')]),
      [[3, 'the keys and bounds are already in the price list: the mode upsert updates its prices']],
    )
    assert.equal(await count(ctx.db, 'glasses_price'), 4)

    const replaced = await run(ctx.db, glasses, 'prices', clash, { replace: true })
    assert.deepEqual(replaced.problems, [])
    assert.equal(replaced.deleted, 4)
    assert.equal(await count(ctx.db, 'glasses_price'), 2)
  })

  test('goods: a barcode twice in the file or already in the nomenclature is reported', async () => {
    const kind = kindByPath.get('accessories')!
    await run(ctx.db, kind, 'goods', 'barcode,category,model\n4601000000017,Футляры,Футляр\n', { replace: true })
    const result = await run(
      ctx.db,
      kind,
      'goods',
      'model,barcode,category\nA,4601000000024,Футляры\nB,4601000000024,Футляры\nC,4601000000017,Футляры\n',
    )
    assert.deepEqual(
      result.problems.map((p) => [p.line, p.column, render(p.message).replace(/ \(id \d+\)/, '')]),
      [[3, null, 'duplicates the barcode of line 2']],
    )
    const existing = await run(ctx.db, kind, 'goods', 'model,barcode,category\nC,4601000000017,Футляры\n')
    assert.deepEqual(
      existing.problems.map((p) => [p.line, p.column, render(p.message).replace(/ \(id \d+\)/, '')]),
      [[2, 'barcode', 'the barcode is already in the nomenclature: the mode upsert updates it']],
    )
    assert.equal(await count(ctx.db, kind.skuTable), 1)
  })

  test('a dry run checks everything and writes nothing, replace included', async () => {
    await run(ctx.db, glasses, 'prices', glassCsv(), { replace: true })
    const before = await exportText(ctx.db, glasses, 'prices')
    const result = await run(ctx.db, glasses, 'prices', glassCsv([['A', 'B', 'C', '1', '1']]), {
      replace: true,
      dryRun: true,
    })
    assert.deepEqual(result.problems, [])
    assert.equal(result.rows, 1)
    assert.equal(result.dryRun, true)
    assert.equal(result.written, 0)
    // What the replace would delete, so that it can be confirmed by that number before it is applied.
    assert.equal(result.deleted, await count(ctx.db, glasses.priceTable))
    assert.ok(result.deleted > 0)
    assert.equal(await exportText(ctx.db, glasses, 'prices'), before)
  })

  test(`more than ${MAX_REPORTED_PROBLEMS} problems: the first ${MAX_REPORTED_PROBLEMS} are listed and all counted`, async () => {
    const rows = Array.from({ length: 150 }, (_, i) => ['M', 'B', `X${i}`, 'free', '1'])
    const result = await run(ctx.db, glasses, 'prices', glassCsv(rows))
    assert.equal(result.problems.length, MAX_REPORTED_PROBLEMS)
    assert.equal(result.problemCount, 150)
    assert.equal(result.problems[0]?.line, 2)
  })

  test("the plan's history stage sees the new ids; a failing stage rolls the import back", async () => {
    await run(ctx.db, glasses, 'prices', glassCsv(), { replace: true })
    let seen: number[] = []
    await run(ctx.db, glasses, 'prices', glassCsv([['Marcolin', 'Guess', 'GU9', '1', '1']]), {
      plan: {
        stages: {
          async history({ client, plan, lastIdBefore, written }) {
            const rows = await client.query<{ id: number }>(`SELECT id FROM ${plan.tableName} WHERE id > $1`, [
              lastIdBefore,
            ])
            seen = rows.map((row) => Number(row.id))
            assert.equal(written, 1)
          },
        },
      },
    })
    assert.equal(seen.length, 1)
    await assert.rejects(
      run(ctx.db, glasses, 'prices', glassCsv([['Marcolin', 'Guess', 'GU10', '1', '1']]), {
        plan: {
          stages: {
            async history() {
              throw new Error('history failed')
            },
          },
        },
      }),
      /history failed/,
    )
    assert.equal(await count(ctx.db, 'glasses_price'), 4)
  })

  test('a file arriving in many small chunks loads every row, with the right line numbers to the end', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => [
      'Chunked',
      i % 2 ? 'Brand' : '"Multi\nline ""brand"""',
      `Model ${i}`,
      `${i}.50`,
      '1',
    ])
    const loaded = await run(ctx.db, glasses, 'prices', chunksOf(glassCsv(many), 997), { replace: true })
    assert.deepEqual(loaded.problems, [])
    assert.equal(loaded.rows, 3000)
    assert.equal(loaded.written, 3000)
    assert.equal(await count(ctx.db, glasses.priceTable), 3000)
    const { rows } = await sql<{ brand: string }>`
      SELECT brand FROM glasses_price WHERE model = 'Model 2998'`.execute(ctx.db.primary)
    assert.equal(rows[0]?.brand, 'Multi\nline "brand"')
    // Every even row spans two lines, so row i (from 0) starts on line 2 + i + ceil(i / 2).
    const broken = [...many.slice(0, 2999), ['Chunked', 'Brand', 'Model X', 'oops', '1']]
    const failed = await run(ctx.db, glasses, 'prices', chunksOf(glassCsv(broken), 997), { replace: true })
    assert.deepEqual(
      failed.problems.map((p) => [p.line, p.column]),
      [[2 + 2999 + Math.ceil(2999 / 2), 'price']],
    )
    assert.equal(await count(ctx.db, glasses.priceTable), 3000)
  })

  test('bulk loading rebuilds the indexes it dropped, and a failing file leaves them all in place', async () => {
    const indexes = async () =>
      (
        await sql<{ definition: string }>`
          SELECT pg_get_indexdef(indexrelid) AS definition FROM pg_index
          WHERE indrelid = ${glasses.priceTable}::regclass ORDER BY 1`.execute(ctx.db.primary)
      ).rows.map((row) => row.definition)
    const before = await indexes()
    assert.ok(before.length >= 4, 'the price list has its secondary indexes (keys and orders)')
    const loaded = await run(ctx.db, glasses, 'prices', glassCsv(), { replace: true, rebuildIndexes: true })
    assert.deepEqual(loaded.problems, [])
    assert.equal(loaded.written, glassRows.length)
    assert.deepEqual(await indexes(), before)
    const failed = await run(ctx.db, glasses, 'prices', glassCsv([...glassRows, ['A', 'B', 'C', 'x', '1']]), {
      replace: true,
      rebuildIndexes: true,
    })
    assert.equal(failed.problemCount, 1)
    assert.deepEqual(await indexes(), before)
    assert.equal(await count(ctx.db, glasses.priceTable), glassRows.length)
  })

  for (const kind of kinds) {
    test(`${kind.path}: a header in Russian (any case, spaces anywhere) imports as the English one`, async () => {
      for (const table of ['prices', 'goods'] as const) {
        const columns = transferColumns(kind, table)
        const keys = columns.flatMap((column) => [column.name, ...column.aliases].map(headerKey))
        assert.equal(new Set(keys).size, keys.length, 'no header names two columns')
        const [header = '', ...lines] = example(kind, table).trimEnd().split('\n')
        await run(ctx.db, kind, table, example(kind, table), { replace: true })
        const english = await exportText(ctx.db, kind, table)
        const russian = header
          .split(',')
          .map((name, i) => {
            const alias = columns.find((column) => column.name === name)?.aliases[0]
            assert.ok(alias, `${name} has a Russian name`)
            return i % 2 === 0 ? alias.toUpperCase() : ` ${alias.replace(' ', '  ')} `
          })
          .join(',')
        const result = await run(ctx.db, kind, table, `${[russian, ...lines].join('\n')}\n`, { replace: true })
        assert.deepEqual(result.problems, [])
        assert.equal(await exportText(ctx.db, kind, table), english)
      }
    })
  }

  test('the glass price list headed Производитель;Бренд;Модель;Цена;Закупка imports; a column named twice is refused', async () => {
    await ctx.db.rawTransaction((client) => client.query(`DELETE FROM ${glasses.priceTable}`))
    const file = 'Производитель;Бренд;Модель;Цена;Закупка\nSafilo;Carrera;CA 1;12 990,50;6 000\n'
    const result = await run(ctx.db, glasses, 'prices', file)
    assert.deepEqual([result.problems, result.written], [[], 1])
    const twice = await run(ctx.db, glasses, 'prices', 'brand;Бренд;model;price;purchase;manufacturer\n', {
      dryRun: true,
    })
    assert.deepEqual(
      twice.problems.map((p) => [p.column, render(p.message)]),
      [['Бренд', 'the column appears twice']],
    )
  })

  test('every kind: an XLSX export imports back unchanged (format xlsx) into an empty table', async () => {
    for (const kind of kinds) {
      for (const table of ['prices', 'goods'] as const) {
        await run(ctx.db, kind, table, example(kind, table), { replace: true })
        const plain = await exportText(ctx.db, kind, table)
        const out = new PassThrough()
        const chunks: Buffer[] = []
        out.on('data', (chunk: Buffer) => chunks.push(chunk))
        await exportTable(ctx.db.read, kind, table, out, { format: 'xlsx' })
        const result = await run(ctx.db, kind, table, Buffer.concat(chunks), { replace: true, format: 'xlsx' })
        assert.deepEqual(result.problems, [], `${kind.path} ${table}`)
        assert.equal(result.format, 'xlsx')
        assert.equal(await exportText(ctx.db, kind, table), plain, `${kind.path} ${table}`)
      }
    }
  })

  test('export for Excel (; a BOM and decimal commas) imports back unchanged into an empty table', async () => {
    for (const kind of [glasses, lenses]) {
      await run(ctx.db, kind, 'prices', example(kind, 'prices'), { replace: true })
      const plain = await exportText(ctx.db, kind, 'prices')
      const excel = await exportText(ctx.db, kind, 'prices', true)
      assert.ok(excel.startsWith('\ufeff'))
      assert.match(excel.split('\n')[1]!, /;\d+,\d\d;\d+,\d\d$/)
      await ctx.db.rawTransaction((client) => client.query(`DELETE FROM ${kind.priceTable}`))
      const result = await run(ctx.db, kind, 'prices', excel)
      assert.deepEqual(result.problems, [])
      assert.equal(await exportText(ctx.db, kind, 'prices'), plain)
    }
  })

  test('XLSX export opens with exceljs and holds every row, numbers as numbers', async () => {
    await run(ctx.db, lenses, 'prices', example(lenses, 'prices'), { replace: true })
    const out = new PassThrough()
    const chunks: Buffer[] = []
    out.on('data', (chunk: Buffer) => chunks.push(chunk))
    const written = await exportTable(ctx.db.read, lenses, 'prices', out, { format: 'xlsx' })
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(Buffer.concat(chunks) as never)
    const sheet = workbook.worksheets[0]!
    const [header, ...lines] = example(lenses, 'prices').trim().split('\n')
    assert.equal(written, lines.length)
    assert.equal(sheet.rowCount, lines.length + 1)
    assert.deepEqual((sheet.getRow(1).values as unknown[]).slice(1), header!.split(','))
    for (const [i, line] of lines.entries()) {
      const values = sheet.getRow(i + 2).values as unknown[]
      const cells = header!.split(',').map((_, column) => values[column + 1] ?? null)
      const expected = line.split(',').map((value) => {
        if (value === '') return null
        return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value
      })
      assert.deepEqual(cells, expected, `row ${i + 2}`)
    }
  })
})

test("the import's table of Russian headers (docs/import.md) lists every column's names", () => {
  const doc = readFileSync(new URL('../../docs/import.md', import.meta.url), 'utf8')
  for (const kind of kinds) {
    for (const table of ['prices', 'goods'] as const) {
      for (const column of transferColumns(kind, table)) {
        if (column.range) continue
        assert.ok(doc.includes(`| \`${column.name}\` | ${column.aliases.join(', ')} |`), `${kind.path} ${column.name}`)
      }
    }
  }
})
