import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clearGlassPrices, pricesPath, seedEntries, storedEntries } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/*
 * An upload that changes nothing records nothing: a file whose every row the price list already holds (the
 * export uploaded back, or the same prices written another way) answers with nothing written and no batch, and
 * the change log stays as it was; one changed price in it is one change again.
 */

eachDatabase('glass price list: an upload that changes nothing', (ctx) => {
  const app = useTestApp(ctx, { beforeEach: () => clearGlassPrices(ctx.db) })

  const upload = (body: string, query: string) =>
    app().inject({
      method: 'POST',
      url: `${pricesPath}/import${query}`,
      headers: { 'content-type': 'text/csv' },
      payload: body,
    })
  const changeIds = async () => {
    const response = await app().inject({ method: 'GET', url: `${pricesPath}/changes?size=100` })
    assert.equal(response.statusCode, 200, response.body)
    return (response.json() as { content: { id: number }[] }).content.map((change) => change.id)
  }
  const seed = () =>
    seedEntries(ctx.db, [
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 1', price: '10000.00', purchase: '5000.00' },
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 2', price: '20000.50', purchase: '9000.00' },
    ])

  test('an upsert of the export as it is answers that nothing changed and writes no change', async () => {
    await seed()
    const exported = await app().inject({ method: 'GET', url: `${pricesPath}/export` })
    assert.equal(exported.statusCode, 200)
    const before = { changes: await changeIds(), entries: await storedEntries(ctx.db) }
    const response = await upload(exported.body, '?mode=upsert')
    assert.equal(response.statusCode, 200, response.body)
    const answer = response.json()
    assert.deepEqual(
      { written: answer.written, updated: answer.updated, unchanged: answer.unchanged, batch: answer.batch },
      { written: 0, updated: 0, unchanged: 2, batch: null },
    )
    assert.deepEqual(await changeIds(), before.changes)
    assert.deepEqual(await storedEntries(ctx.db), before.entries)
  })

  test('a file of the same prices written otherwise (no versions, other case, fewer decimals) records nothing', async () => {
    await seed()
    const before = await changeIds()
    const file =
      'manufacturer;brand;model;price;purchase\nsafilo;CARRERA;ca 2;20000,5;9000\nSafilo;Carrera;CA 1;10000;5000\n'
    const response = await upload(file, '?mode=upsert')
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json().batch, null)
    assert.equal(response.json().written, 0)
    assert.deepEqual(await changeIds(), before)
  })

  test('one changed price among unchanged rows is one change again, of that entry alone', async () => {
    const [, second] = await seed()
    const before = await changeIds()
    const changed = await upload(
      'manufacturer,brand,model,price,purchase\nSafilo,Carrera,CA 1,10000.00,5000.00\nSafilo,Carrera,CA 2,21000,9000\n',
      '?mode=upsert',
    )
    assert.equal(changed.statusCode, 200, changed.body)
    const { batch, updated, unchanged } = changed.json()
    assert.deepEqual({ updated, unchanged }, { updated: 1, unchanged: 1 })
    assert.equal(typeof batch, 'number')
    assert.deepEqual(await changeIds(), [batch, ...before])
    const history = await app().inject({ method: 'GET', url: `${pricesPath}/${second}/history` })
    const [latest] = history.json().content
    assert.deepEqual(
      { batch: latest.batch, changes: latest.changes },
      {
        batch,
        changes: [{ field: 'price', oldValue: 20000.5, newValue: 21000 }],
      },
    )
  })
})
