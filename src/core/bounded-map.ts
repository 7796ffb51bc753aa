// A Map kept under a bound by forgetting its oldest entries (docs/design.md#bounded-maps), a
// quarter at a time in one walk. Forgetting one entry per insertion walks the map from its start
// each time, over every slot deleted since V8 last rebuilt its table, so a full map made every
// insertion cost in proportion to the bound; a quarter at once pays that walk once per quarter of
// the bound.

/** when `map` holds `max` entries or more, deletes its oldest (insertion order) down to three quarters of `max`, handing each value to `forget` */
export function makeRoom<K, V> (map: Map<K, V>, max: number, forget: (value: V) => void): void {
  if (map.size < max) return
  let n = map.size - Math.floor(max * 3 / 4)
  for (const [k, v] of map) {
    map.delete(k)
    forget(v)
    if (--n <= 0) break
  }
}
