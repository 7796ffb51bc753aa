// What is in flight, kept without a hash table (docs/design.md#hot-path). A long-lived Map or Set
// that holds short-lived objects keeps them alive past their use: each time its table is rebuilt
// (every few insertions, as deleted entries fill it), the old table, already promoted to the old
// generation, still holds the entries it had; the scavenger cannot know that table is garbage,
// so every request graph it points to survives into the old generation too, and only a
// mark-compact frees it: with the requests in flight in a Map, several KB of every read were
// promoted (BENCHMARKS.md#hot-path-choices, `npm run bench -- --promotion`); and V8 makes each new
// table in the generation its map is in, so a long-lived map's rebuilds are themselves
// old-generation garbage (src/argus/coalesce.ts replaces its map when it empties). A doubly linked
// list whose links live on nodes made per entry leaves nothing behind: a removed node's links are
// cleared, and no table is ever rebuilt.

export interface LiveNode<T> {
  /** undefined once removed */
  item: T | undefined
  /** a number the owner keeps with the entry (an arrival time) */
  at: number
  prev: LiveNode<T> | undefined
  next: LiveNode<T> | undefined
}

export class LiveList<T> {
  #head: LiveNode<T> | undefined
  #tail: LiveNode<T> | undefined
  #size = 0

  get size (): number { return this.#size }

  /**
   * The oldest node, for a walk along `next` that allocates nothing (docs/design.md#hot-path): a
   * generator's every step is a fresh `{ value, done }`, which the read gate paid per held
   * socket on every acquire and release while reads queued. Skip nodes whose item is undefined.
   */
  get first (): LiveNode<T> | undefined { return this.#head }

  /** adds `item` after every entry there is; keep the node to remove it */
  add (item: T, at = 0): LiveNode<T> {
    const node: LiveNode<T> = { item, at, prev: this.#tail, next: undefined }
    if (this.#tail !== undefined) this.#tail.next = node
    else this.#head = node
    this.#tail = node
    this.#size++
    return node
  }

  /** removes the node's entry; a node already removed is left as it is */
  remove (node: LiveNode<T>): void {
    if (node.item === undefined) return
    if (node.prev !== undefined) node.prev.next = node.next
    else this.#head = node.next
    if (node.next !== undefined) node.next.prev = node.prev
    else this.#tail = node.prev
    node.item = undefined
    node.prev = undefined
    node.next = undefined
    this.#size--
  }

  /** the nodes, oldest first; remove none while iterating (collect them, then remove) */
  * nodes (): IterableIterator<LiveNode<T>> {
    for (let n = this.#head; n !== undefined; n = n.next) yield n
  }

  /** the entries and their numbers, oldest first */
  * entries (): IterableIterator<[T, number]> {
    for (let n = this.#head; n !== undefined; n = n.next) if (n.item !== undefined) yield [n.item, n.at]
  }
}
