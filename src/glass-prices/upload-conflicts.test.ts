import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { clearGlassPrices, pricesPath, seedEntries, storedEntries } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/*
 * Uploads that cannot undo a colleague's work: the export carries each entry's version and change time, an
 * upsert of an old export meets the entries changed since as conflicts (refused, overwritten by count, or
 * skipped), a file without versions is compared by value, and the check lists every row old → new, paged.
 */

const header = 'manufacturer,brand,model,price,purchase'
const csv = (...lines: string[]) => `${lines.join('\n')}\n`

interface CheckRow {
  line: number | null
  id: number | null
  model: string
  price: number
  purchase: number
  changes: { field: string; oldValue: number; newValue: number }[]
}

eachDatabase('glass price list: uploads against a colleague’s changes', (ctx) => {
  const app = useTestApp(ctx, { beforeEach: () => clearGlassPrices(ctx.db) })

  const upload = (body: string, query = '') =>
    app().inject({
      method: 'POST',
      url: `${pricesPath}/import${query}`,
      headers: { 'content-type': 'text/csv' },
      payload: body,
    })
  const exportCsv = async (query = '') => {
    const response = await app().inject({ method: 'GET', url: `${pricesPath}/export${query}` })
    assert.equal(response.statusCode, 200, response.body)
    return response.body
  }
  const prices = async () => (await storedEntries(ctx.db)).map((e) => [e.model, e.price, e.purchase, e.version])

  /** Three Carrera models; the week-old export of them, every price edited up by 1000 in the spreadsheet. */
  const weekOldExport = async () => {
    const ids = await seedEntries(ctx.db, [
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 1', price: '10000.00', purchase: '5000.00' },
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 2', price: '20000.00', purchase: '9000.00' },
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 3', price: '30000.00', purchase: '12000.00' },
    ])
    const exported = await exportCsv()
    const lines = exported.trimEnd().split('\n')
    assert.equal(lines[0], `${header},version,changedAt`)
    assert.match(lines[1] ?? '', /^Safilo,Carrera,CA 1,10000\.00,5000\.00,1,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/)
    const edited = lines.map((line) => line.replace(/,(\d+)0000\.00,/, (_all, high: string) => `,${high}1000.00,`))
    return { ids, file: `${edited.join('\n')}\n` }
  }

  /** A colleague's edit of CA 2 through the API, after the export: its retail price and a new version. */
  const colleagueEdits = async (id: number) => {
    const response = await app().inject({
      method: 'PUT',
      url: `${pricesPath}/${id}`,
      payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 2', price: '24990', purchase: '9000' },
    })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.headers.etag, '"2"')
  }

  describe('an old export after a colleague’s edit', () => {
    test('the upload is refused with 409 listing the conflict (versions, who, when, stored values); nothing is written', async () => {
      const { ids, file } = await weekOldExport()
      await colleagueEdits(ids[1]!)
      const before = await prices()
      const refused = await upload(file, '?mode=upsert')
      assert.equal(refused.statusCode, 409, refused.body)
      const problem = refused.json()
      assert.equal(problem.code, 'upload-conflicts')
      assert.equal(problem.conflictCount, 1)
      assert.match(problem.detail, /overwriteConflicts=1/)
      const [conflict] = problem.check.conflicts.content
      assert.deepEqual(
        { ...conflict, changedAt: typeof conflict.changedAt },
        {
          line: 3,
          id: ids[1],
          manufacturer: 'Safilo',
          brand: 'Carrera',
          model: 'CA 2',
          price: 21000,
          purchase: 9000,
          changes: [{ field: 'price', oldValue: 24990, newValue: 21000 }],
          fileVersion: 1,
          storedVersion: 2,
          changedBy: 'anonymous',
          changedAt: 'string',
          storedPrice: 24990,
          storedPurchase: 9000,
        },
      )
      assert.ok(Date.now() - Date.parse(conflict.changedAt) < 60_000, 'when the colleague changed it')
      assert.deepEqual(await prices(), before, 'not even the rows without a conflict are written')

      // The dry run shows the same, with the rows that would change, and answers 200.
      const checked = await upload(file, '?mode=upsert&dryRun=true')
      assert.equal(checked.statusCode, 200, checked.body)
      assert.equal(checked.json().conflicts, 1)
      assert.equal(checked.json().updated, 2)
      assert.deepEqual(
        checked.json().check.changed.content.map((row: CheckRow) => [row.line, row.model, row.changes]),
        [
          [2, 'CA 1', [{ field: 'price', oldValue: 10000, newValue: 11000 }]],
          [4, 'CA 3', [{ field: 'price', oldValue: 30000, newValue: 31000 }]],
        ],
      )
      assert.equal(checked.json().check.conflicts.content[0].model, 'CA 2')
    })

    test('overwriteConflicts with the checked count writes over it and says so; another count is refused', async () => {
      const { ids, file } = await weekOldExport()
      await colleagueEdits(ids[1]!)
      const before = await prices()
      const stale = await upload(file, '?mode=upsert&overwriteConflicts=2')
      assert.equal(stale.statusCode, 409)
      assert.equal(stale.json().code, 'upload-conflicts')
      assert.match(stale.json().detail, /found 2 rows changed since the export, now there is 1/)
      assert.deepEqual(await prices(), before)

      const response = await upload(file, '?mode=upsert&overwriteConflicts=1')
      assert.equal(response.statusCode, 200, response.body)
      const result = response.json()
      assert.deepEqual([result.updated, result.conflicts, result.overwritten, result.skipped], [3, 1, 1, 0])
      assert.deepEqual(await prices(), [
        ['CA 1', '11000.00', '5000.00', 2],
        ['CA 2', '21000.00', '9000.00', 3],
        ['CA 3', '31000.00', '12000.00', 2],
      ])
    })

    test('skipConflicts keeps the colleague’s price and writes the other rows', async () => {
      const { ids, file } = await weekOldExport()
      await colleagueEdits(ids[1]!)
      const response = await upload(file, '?mode=upsert&skipConflicts=true')
      assert.equal(response.statusCode, 200, response.body)
      assert.deepEqual([response.json().updated, response.json().skipped], [2, 1])
      assert.deepEqual(await prices(), [
        ['CA 1', '11000.00', '5000.00', 2],
        ['CA 2', '24990.00', '9000.00', 2],
        ['CA 3', '31000.00', '12000.00', 2],
      ])
    })

    test('a row equal to the colleague’s entry is unchanged, not a conflict; an export at the current version has none', async () => {
      const { ids } = await weekOldExport()
      await colleagueEdits(ids[1]!)
      const fresh = await exportCsv()
      const result = (await upload(fresh, '?mode=upsert')).json()
      assert.deepEqual([result.updated, result.unchanged, result.conflicts], [0, 3, 0])
    })

    test('overwriteConflicts and skipConflicts together are a 400 naming the field; a bad changedAt a 422 naming its line', async () => {
      const { file } = await weekOldExport()
      const both = await upload(file, '?mode=upsert&overwriteConflicts=1&skipConflicts=true')
      assert.equal(both.statusCode, 400)
      assert.match(String(both.headers['content-type']), /^application\/problem\+json/)
      assert.equal(both.json().errors[0].field, 'skipConflicts')
      const garbled = await upload(file.replace(/,1,20\d\d-[^\n]+\n/, ',1,yesterday\n'), '?mode=upsert')
      assert.equal(garbled.statusCode, 422)
      assert.deepEqual(
        garbled.json().problems.map((p: { line: number; column: string }) => [p.line, p.column]),
        [[2, 'changedAt']],
      )
    })
  })

  test('a file without versions (from 1C) is compared by value: equal rows unchanged, others old → new', async () => {
    const [id] = await seedEntries(ctx.db, [
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 1', price: '10000.00', purchase: '5000.00' },
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 2', price: '20000.00', purchase: '9000.00' },
    ])
    await colleagueEdits((id ?? 0) + 1)
    const response = await upload(
      csv(header, 'Safilo,Carrera,CA 1,10000,5000', 'Safilo,Carrera,CA 2,20000,9500', 'Safilo,Carrera,CA 9,500,200'),
      '?mode=upsert&dryRun=true',
    )
    assert.equal(response.statusCode, 200, response.body)
    const result = response.json()
    assert.deepEqual([result.unchanged, result.updated, result.created, result.conflicts], [1, 1, 1, 0])
    assert.deepEqual(result.check.changed.content[0].changes, [
      { field: 'price', oldValue: 24990, newValue: 20000 },
      { field: 'purchase', oldValue: 9000, newValue: 9500 },
    ])
    assert.deepEqual(
      result.check.created.content.map((row: CheckRow) => [row.line, row.model, row.price]),
      [[4, 'CA 9', 500]],
    )
  })

  test('the check’s change list is paged with the page envelope, every row once, old → new', async () => {
    await seedEntries(
      ctx.db,
      Array.from({ length: 5 }, (_, index) => ({
        manufacturer: 'Seed',
        brand: 'Paged',
        model: `P ${index + 1}`,
        price: (index + 1) * 100,
        purchase: 10,
      })),
    )
    const file = csv(header, ...Array.from({ length: 5 }, (_, i) => `Seed,Paged,P ${i + 1},${(i + 1) * 100 + 1},10`))
    const pages = []
    for (const page of [0, 1, 2]) {
      const response = await upload(file, `?mode=upsert&dryRun=true&size=2&page=${page}`)
      assert.equal(response.statusCode, 200, response.body)
      pages.push(response.json().check.changed)
    }
    assert.deepEqual(
      pages.map((page) => [page.number, page.size, page.totalElements, page.totalPages, page.first, page.last]),
      [
        [0, 2, 5, 3, true, false],
        [1, 2, 5, 3, false, false],
        [2, 2, 5, 3, false, true],
      ],
    )
    assert.deepEqual(
      pages.flatMap((page) => page.content.map((row: CheckRow) => [row.line, row.changes[0]])),
      [1, 2, 3, 4, 5].map((n) => [n + 1, { field: 'price', oldValue: n * 100, newValue: n * 100 + 1 }]),
    )
    assert.deepEqual(
      (await storedEntries(ctx.db)).map((e) => e.price),
      ['100.00', '200.00', '300.00', '400.00', '500.00'],
    )
  })
})
