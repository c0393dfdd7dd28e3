import type { Kind } from '../catalog/kinds/kind.js'
import type { DemoRecipe } from './demo-generator.js'
import { genericRecipe } from './generic-recipe.js'
import { accessories } from './recipes/accessories.js'
import { contactLenses } from './recipes/contact-lenses.js'
import { extras } from './recipes/extras.js'
import { glasses, sunglasses } from './recipes/frames.js'
import { lenses } from './recipes/lenses.js'
import { semifinishedLenses } from './recipes/semifinished-lenses.js'

/*
 * The demo catalogue's data: real manufacturers and brands, model code patterns, parameter grids and rouble price
 * levels of a Russian optical chain (2024–2025 order of magnitude). Descriptive values are in Russian, as the
 * chain's ERP writes them. Each recipe turns a product number into a product plan; demo-generator.ts does the rest.
 *
 * Product numbers enumerate a product space with the line (manufacturer, brand) varying fastest, so even a small
 * catalogue shows every manufacturer. Past the real space, a series number is appended to a name.
 *
 * One file per kind (or pair of kinds sharing their lines) in recipes/, with what they share in recipes/common.ts.
 * A recipe is optional: a kind without one gets the generic recipe of its descriptor (generic-recipe.ts), labelled
 * numbered values in the right columns and zones. A kind gets its own recipe when its demo catalogue should look
 * like the real assortment (real names, real grids, prices that follow the product).
 */

/** The recipes written for kinds, by kind path. */
export const demoRecipes: ReadonlyMap<string, DemoRecipe> = new Map(
  [accessories, sunglasses, glasses, lenses, contactLenses, extras, semifinishedLenses].map((recipe) => [
    recipe.kind.path,
    recipe,
  ]),
)

const derived = new WeakMap<Kind, DemoRecipe>()

/** The demo recipe of a kind: its own where it has one, else the generic recipe of its descriptor. */
export function recipeOf(kind: Kind): DemoRecipe {
  const written = demoRecipes.get(kind.path)
  if (written) return written
  let recipe = derived.get(kind)
  if (!recipe) {
    recipe = genericRecipe(kind)
    derived.set(kind, recipe)
  }
  return recipe
}
